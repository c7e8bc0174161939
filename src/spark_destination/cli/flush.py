"""``spark-destination flush [SCHEMA [TABLE]]``: merge deferred mode's pending batches now.

It works on the warehouse directly, as ``maintain`` does: it starts its own Spark, takes the
warehouse's lock and flushes the table named, every table of the schema named, or every table
of the warehouse that has an intermediate table (named with ``--intermediate-table-prefix``).
A running server holds the lock, so the command is refused while one serves the warehouse:
that server flushes by itself (on its timer and threshold, before any request that needs a
table as it is, and when it stops on SIGTERM). There is no "flush" RPC to ask a running server
for one: Fivetran's protocol has none, and a private one would let whoever reaches the port
run work Fivetran does not ask for.
"""

from __future__ import annotations

import argparse
from typing import Any

from spark_destination.cli.flags import add_config_flags, config_defaults, engine_for
from spark_destination.core.errors import ConfigurationError


def add_command(sub: Any) -> None:
    command = sub.add_parser(
        "flush",
        help="merge deferred write mode's pending batches into their tables now (on the "
        "warehouse directly; refused while a server uses it)",
    )
    command.add_argument("schema", nargs="?", help="only this schema (default: every schema)")
    command.add_argument("table", nargs="?", help="only this table of SCHEMA")
    add_config_flags(command)
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark_destination.server import logs

    logs.configure()
    engine = engine_for(args)
    configuration = config_defaults(args)
    try:
        engine.claim_warehouse(configuration)
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"{exc}. A running server flushes by itself: on its timer and threshold, before "
            "requests that need a table as it is, and when it stops (SIGTERM)"
        ) from None
    try:
        if args.table is not None:
            outcome = engine.flush(configuration, args.schema, args.table)
            done = [(f"{args.schema}.{args.table}", outcome)]
        else:
            done = [
                (f"{ref.schema}.{ref.name}", outcome)
                for ref, outcome in engine.flush_all(configuration, args.schema)
            ]
    finally:
        engine.sessions.stop()
    for name, outcome in done:
        if outcome is None or not (outcome.rows or outcome.completed_rows):
            print(f"{name}: nothing pending")
        else:
            print(
                f"{name}: merged {outcome.rows} row(s) of {outcome.batches} batch(es) in "
                f"{outcome.seconds:.2f} s"
            )
    if not done:
        print("no intermediate tables found")
    return 0
