"""The destination as Fivetran builds and runs it: ``python main.py --port 50052``.

Fivetran's build expects this file, ``requirements.txt`` and ``build.sh`` at the repository root
and freezes this file with PyInstaller into ``dist/main`` (``scripts/freeze.sh`` does the same
here). The program itself is ``spark_destination.cli.fivetran``. Nothing may be printed before
``main`` runs: Spark starts its Python workers as ``<this program> -m pyspark.daemon`` and
reads their stdout.
"""

import sys
from pathlib import Path

if not getattr(sys, "frozen", False):
    # A fresh clone without an install still finds the package (build.sh installs it too).
    _SOURCE = Path(__file__).resolve().parent / "src"
    if _SOURCE.is_dir() and str(_SOURCE) not in sys.path:
        sys.path.insert(0, str(_SOURCE))

from spark_destination.cli.fivetran import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
