"""The program Fivetran runs: ``python main.py --port N``, frozen as ``dist/main --port N``.

It is ``spark-destination serve`` with Fivetran's defaults: it listens on every interface
(reference §1) and starts Spark at start-up so the first request does not pay for it
(``--no-prewarm`` turns that off); every ``serve`` flag applies. SIGTERM or SIGINT stop the
server, then Spark (waiting for the JVM).

Spark starts its Python workers as ``<sys.executable> -m pyspark.daemon``; in a frozen binary
``sys.executable`` is this program, so ``-m MODULE`` must run that module, and nothing may be
printed before (the worker protocol reads the worker's stdout).
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence
from typing import Final

from spark_destination.server.addresses import ALL_INTERFACES

# ``serve`` as Fivetran runs it: every interface (dual-stack), Spark started at once.
FIVETRAN_SERVE: Final = ("--host", ALL_INTERFACES, "--prewarm")


def run_module_if_asked(argv: Sequence[str]) -> bool:
    """Run ``MODULE`` as ``__main__`` when started as ``PROGRAM -m MODULE ARGS...``."""
    if len(argv) < 3 or argv[1] != "-m":
        return False
    sys.argv = [argv[0], *argv[3:]]
    runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    return True


def fix_frozen_environment() -> None:
    """Point Spark at the bundled pyspark and give child processes their own library path.

    PyInstaller's launcher points ``LD_LIBRARY_PATH`` into the bundle (saving the original as
    ``LD_LIBRARY_PATH_ORIG``); the JVM and Spark's shell scripts must not inherit that.
    """
    bundle = getattr(sys, "_MEIPASS", None)
    if not getattr(sys, "frozen", False) or bundle is None:
        return
    os.environ["SPARK_HOME"] = os.path.join(bundle, "pyspark")
    original = os.environ.get("LD_LIBRARY_PATH_ORIG")
    if original is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = original


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    if run_module_if_asked(argv):
        return 0
    fix_frozen_environment()
    from spark_destination.cli.main import main as cli_main

    # Flags given by Fivetran (or an operator) come last, so e.g. --no-prewarm wins.
    return cli_main(["serve", *FIVETRAN_SERVE, *argv[1:]], prog="main")
