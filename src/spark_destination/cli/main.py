"""The one command line: ``spark-destination COMMAND`` or ``python -m spark_destination.cli``.

Each command lives in its own module, which adds its sub-parser (``add_command``) with a
``func`` that runs it; ``COMMANDS`` lists them. A new command is a module here and one entry
in ``COMMANDS``. ``main.py`` (what Fivetran runs) is ``serve`` on every interface, through
``cli.fivetran``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from spark_destination.cli import flush, install_jars, maintain, preview, replay, serve
from spark_destination.core.errors import DestinationError

# Each adds its sub-command(s) to the sub-parsers.
COMMANDS: Final[tuple[Callable[[Any], None], ...]] = (
    serve.add_command,
    preview.add_command,
    replay.add_commands,  # replay and demo
    maintain.add_command,
    flush.add_command,
    install_jars.add_command,
)

# gRPC's C core logs to stderr on its own (absl's "before InitializeLog" notice, and a line per
# fork while threads use gRPC: Spark forks to start the JVM). Neither is for the user, and this
# process never uses gRPC in a forked child, so fork support stays off. An operator's own
# settings of these variables win.
_GRPC_QUIET: Final = (("GRPC_VERBOSITY", "ERROR"), ("GRPC_ENABLE_FORK_SUPPORT", "false"))
# pyarrow's allocator (mimalloc) gives freed memory back to the OS after 10 ms; the next batch
# file then faults it in again, and where the host has reclaimed those pages meanwhile (a
# MERGE runs between two stagings) that cost as much as the decode: a 1M-row history batch
# decoded in 2.04 s right after a MERGE, 0.96 s with its memory kept (docs/benchmarks.md,
# "What a fresh server pays"). A server keeps what its batches needed. Read when pyarrow
# loads, so set first.
_KEEP_ARROW_MEMORY: Final = (("MIMALLOC_PURGE_DELAY", "-1"),)


def build_parser(prog: str = "spark-destination") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Fivetran Partner SDK v2 destination for Apache Iceberg through Spark.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str = "spark-destination") -> int:
    for name, value in (*_GRPC_QUIET, *_KEEP_ARROW_MEMORY):
        # Before gRPC and pyarrow load (commands import them lazily); an operator's own wins.
        os.environ.setdefault(name, value)
    args = build_parser(prog).parse_args(argv)
    try:
        return int(args.func(args))
    except DestinationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
