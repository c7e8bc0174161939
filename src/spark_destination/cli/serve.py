"""``spark-destination serve``: the gRPC destination server (also what ``main.py`` runs)."""

from __future__ import annotations

import argparse
from typing import Any

from spark_destination.cli.flags import add_config_flags, engine_for
from spark_destination.server.addresses import DEFAULT_HOST, DEFAULT_PORT


def add_command(sub: Any) -> None:
    command = sub.add_parser("serve", help="run the gRPC destination server")
    command.add_argument("--port", type=int, default=DEFAULT_PORT)
    command.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to bind (default {DEFAULT_HOST}, loopback only; :: is every interface)",
    )
    command.add_argument(
        "--prewarm",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="start Spark at start-up, in the background, instead of on the first request",
    )
    command.add_argument(
        "--warm-writes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --prewarm, then run small batches on throwaway tables in a temporary "
        "warehouse, so the first sync's MERGEs do not meet a cold JVM",
    )
    command.add_argument(
        "--dialect",
        default="spark_iceberg",
        help="SQL dialect to execute (only spark_iceberg can run here)",
    )
    add_config_flags(command)
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark_destination.server import logs
    from spark_destination.server.app import run_server

    engine = engine_for(args)  # first: a dialect this server cannot run fails before anything
    logs.configure()
    engine.config({})  # bad flags, or a default warehouse outside the allow-list, stop here
    # Warehouses are claimed (locked) when a request first uses one, not here: a server whose
    # requests all name other warehouses leaves the default one alone.
    return run_server(
        engine,
        host=args.host,
        port=args.port,
        prewarm=args.prewarm,
        warm_writes=args.warm_writes,
    )
