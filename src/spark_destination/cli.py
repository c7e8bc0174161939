"""Command line: ``serve``, ``preview``, ``replay`` and ``demo``."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from spark_destination.errors import DestinationError

if TYPE_CHECKING:
    from spark_destination.engine import Engine


def _defaults(args: argparse.Namespace) -> dict[str, str]:
    pairs = {
        "warehouse": args.warehouse,
        "catalog": args.catalog,
        "spark_master": args.master,
        "batch_file_format": getattr(args, "batch_file_format", None),
    }
    return {k: v for k, v in pairs.items() if v}


def _add_spark_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--warehouse", help="default Iceberg warehouse (default ./warehouse)")
    parser.add_argument("--catalog", help="default catalog name (default lake)")
    parser.add_argument("--master", help="default Spark master (default local[*])")


def _engine(args: argparse.Namespace) -> Engine:
    from spark_destination.dialects.registry import dialect
    from spark_destination.engine import Engine, SessionProvider

    chosen = dialect(getattr(args, "dialect", None) or "spark_iceberg")
    return Engine(SessionProvider.embedded(), defaults=_defaults(args), dialect=chosen)


def cmd_serve(args: argparse.Namespace) -> int:
    from spark_destination.server import logs
    from spark_destination.server.app import serve

    engine = _engine(args)  # first: a dialect this server cannot run fails before anything
    logs.configure()
    if args.prewarm:
        engine.sessions.root(engine.config({}))
    serve(engine, host=args.host, port=args.port)
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    from spark_destination.dialects.registry import dialect
    from spark_destination.preview import preview
    from spark_destination.request_json import parse_request

    chosen = dialect(args.dialect)
    data = json.loads(Path(args.request).read_text(encoding="utf-8"))
    sys.stdout.write(preview(parse_request(data), chosen))
    return 0


def _replay(paths: Sequence[Path], args: argparse.Namespace) -> int:
    from spark_destination import replay as replay_module
    from spark_destination.server import logs
    from spark_destination.server.app import create_server
    from spark_destination.testing.client import connect

    logs.configure(stream=sys.stderr)
    configuration = _defaults(args)
    with tempfile.TemporaryDirectory(prefix="spark-destination-replay-") as workdir:
        server = None
        engine = None
        if args.address:
            client = connect(args.address)
        else:
            engine = _engine(args)
            server, port = create_server(engine, port=0)
            server.start()
            client = connect(f"127.0.0.1:{port}")
        try:
            report = replay_module.replay(
                paths,
                client=client,
                configuration=configuration,
                schema=args.schema,
                plain_text=args.plain_text,
                workdir=Path(workdir),
            )
            print(report.text())
            if engine is not None and report.tables:
                config = engine.config(configuration)
                session = engine.sessions.for_request(config)
                replay_module.print_tables(
                    session, config.catalog, args.schema, report.tables, sys.stdout
                )
            return 0 if report.ok else 1
        finally:
            if server is not None:
                server.stop(grace=None)


def cmd_replay(args: argparse.Namespace) -> int:
    return _replay([Path(p) for p in args.files], args)


def cmd_demo(args: argparse.Namespace) -> int:
    samples = resources.files("spark_destination") / "samples"
    with resources.as_file(samples) as folder:
        return _replay(sorted(Path(folder).glob("*.json")), args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spark-destination",
        description="Fivetran Partner SDK v2 destination for Apache Iceberg through Spark.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gRPC destination server")
    serve.add_argument("--port", type=int, default=50052)
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default loopback only)"
    )
    serve.add_argument("--prewarm", action="store_true", help="start Spark before the first call")
    serve.add_argument(
        "--dialect",
        default="spark_iceberg",
        help="SQL dialect to execute (only spark_iceberg can run here)",
    )
    serve.add_argument(
        "--batch-file-format",
        choices=["csv", "parquet"],
        help="batch-file format announced in Capabilities (default csv)",
    )
    _add_spark_flags(serve)
    serve.set_defaults(func=cmd_serve)

    preview = sub.add_parser("preview", help="print the SQL a request would run (no Spark)")
    preview.add_argument("request", help="request JSON file (see spark_destination.request_json)")
    preview.add_argument(
        "--dialect",
        default="spark_iceberg",
        help="SQL dialect to render: spark_iceberg (default) or databricks_delta",
    )
    preview.set_defaults(func=cmd_preview)

    for name, helptext, func in (
        ("replay", "run destination-tester input files", cmd_replay),
        ("demo", "replay the bundled sample sync and print the tables", cmd_demo),
    ):
        command = sub.add_parser(name, help=helptext)
        if name == "replay":
            command.add_argument("files", nargs="+", help="tester input JSON files, in order")
        command.add_argument("--address", help="a running server (default: embedded server)")
        command.add_argument("--schema", default="tester")
        command.add_argument("--plain-text", action="store_true", help="no compression/AES")
        _add_spark_flags(command)
        command.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except DestinationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
