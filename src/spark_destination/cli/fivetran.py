"""The program Fivetran runs: ``python main.py --port N``, frozen as ``dist/main --port N``.

Unlike ``spark-destination serve`` (loopback, for people running it by hand) it listens on every
interface (reference §1), starts Spark at start-up so the first request does not pay for it, and
stops Spark (waiting for the JVM) on SIGTERM or SIGINT.

Spark starts its Python workers as ``<sys.executable> -m pyspark.daemon``; in a frozen binary
``sys.executable`` is this program, so ``-m MODULE`` must run that module, and nothing may be
printed before (the worker protocol reads the worker's stdout).
"""

from __future__ import annotations

import argparse
import logging
import os
import runpy
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

log = logging.getLogger("spark_destination.main")


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


def build_parser() -> argparse.ArgumentParser:
    from spark_destination.server.app import DEFAULT_PORT

    parser = argparse.ArgumentParser(
        prog="main",
        description="Fivetran Partner SDK v2 destination (Iceberg through Spark), listening on "
        "every interface as Fivetran runs it.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--warehouse", help="default Iceberg warehouse (default ./warehouse)")
    parser.add_argument("--catalog", help="default catalog name (default lake)")
    parser.add_argument("--master", help="default Spark master (default local[*])")
    parser.add_argument(
        "--allowed-warehouse",
        action="append",
        metavar="ROOT",
        help="a warehouse path or URI requests may use, with everything inside it; repeatable "
        "(default: $SPARK_DESTINATION_ALLOWED_WAREHOUSES, comma-separated; unset: any)",
    )
    parser.add_argument(
        "--no-prewarm", action="store_true", help="start Spark on the first request instead"
    )
    return parser


def serve(args: argparse.Namespace) -> int:
    from spark_destination.cli.main import allowed_warehouses
    from spark_destination.core.errors import DestinationError
    from spark_destination.server import logs
    from spark_destination.server.app import ALL_INTERFACES, create_server
    from spark_destination.service.engine import Engine, SessionProvider

    logs.configure()
    pairs = {"warehouse": args.warehouse, "catalog": args.catalog, "spark_master": args.master}
    engine = Engine(
        SessionProvider.embedded(),
        defaults={k: v for k, v in pairs.items() if v},
        allowed_warehouses=allowed_warehouses(args.allowed_warehouse),
    )
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s; shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server, port = create_server(
            engine, host=ALL_INTERFACES, port=args.port, exclusive_port=True
        )
    except OSError as exc:
        log.error("%s", exc)
        return 1
    server.start()
    log.info("spark-destination listening on 0.0.0.0:%d and [::]:%d", port, port)

    def prewarm() -> None:
        try:
            engine.sessions.root(engine.config({}))
            log.info("Spark is ready")
        except DestinationError as exc:
            # The first request retries and reports it to Fivetran.
            log.warning("starting Spark at start-up failed: %s", exc.loggable)
        except Exception as exc:
            log.error("starting Spark at start-up failed: %s", type(exc).__name__)

    if not args.no_prewarm:
        threading.Thread(target=prewarm, name="prewarm", daemon=True).start()
    # A bounded wait, so the signal handler runs promptly on every platform.
    while not stop.wait(0.5):
        pass
    server.stop(grace=5).wait()
    engine.sessions.stop()
    log.info("stopped")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    if run_module_if_asked(argv):
        return 0
    fix_frozen_environment()
    return serve(build_parser().parse_args(argv[1:]))
