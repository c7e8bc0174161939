"""Command line: ``serve``, ``preview``, ``replay``, ``demo`` and ``maintain``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from spark_destination.core.errors import DestinationError

if TYPE_CHECKING:
    from spark_destination.service.engine import Engine


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
    parser.add_argument(
        "--allowed-warehouse",
        action="append",
        metavar="ROOT",
        help="a warehouse path or URI requests may use, with everything inside it; repeatable "
        "(default: $SPARK_DESTINATION_ALLOWED_WAREHOUSES, comma-separated; unset: any)",
    )


def allowed_warehouses(flags: Sequence[str] | None) -> tuple[str, ...]:
    """The operator's allow-list: the flags, else the environment variable."""
    from spark_destination.core.config import allowed_warehouses_from_env

    return tuple(flags) if flags else allowed_warehouses_from_env(os.environ)


def _engine(args: argparse.Namespace) -> Engine:
    from spark_destination.dialects.registry import dialect
    from spark_destination.service.engine import Engine, SessionProvider

    chosen = dialect(getattr(args, "dialect", None) or "spark_iceberg")
    return Engine(
        SessionProvider.embedded(),
        defaults=_defaults(args),
        dialect=chosen,
        allowed_warehouses=allowed_warehouses(getattr(args, "allowed_warehouse", None)),
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from spark_destination.server import logs
    from spark_destination.server.app import serve

    engine = _engine(args)  # first: a dialect this server cannot run fails before anything
    logs.configure()
    engine.config({})  # a default warehouse outside the allow-list stops here
    # Warehouses are claimed (locked) when a request first uses one, not here: a server whose
    # requests all name other warehouses leaves the default one alone.
    if args.prewarm:
        engine.sessions.root(engine.config({}))
    serve(engine, host=args.host, port=args.port)
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    from spark_destination.dialects.registry import dialect
    from spark_destination.service.preview import preview
    from spark_destination.service.request_json import parse_request

    chosen = dialect(args.dialect)
    data = json.loads(Path(args.request).read_text(encoding="utf-8"))
    if isinstance(data, dict) and data.get("request") == "maintain":
        from spark_destination.cli.maintain import preview_maintenance_json

        sys.stdout.write(preview_maintenance_json(data, chosen))
        return 0
    sys.stdout.write(preview(parse_request(data), chosen))
    return 0


def _replay(paths: Sequence[Path], args: argparse.Namespace) -> int:
    """Replay input files; stdout gets only Fivetran JSON log lines, people read stderr."""
    from spark_destination.server import logs
    from spark_destination.server.app import create_server
    from spark_destination.tester import replay as replay_module
    from spark_destination.tester.client import connect
    from spark_destination.tester.input_files import TesterInputError
    from spark_destination.tester.replay_progress import progress_for

    logs.configure()
    human = sys.stderr
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
            files = replay_module.expand_inputs(paths)
            with progress_for(human, len(files)) as progress:
                report = replay_module.replay(
                    files,
                    client=client,
                    configuration=configuration,
                    schema=args.schema,
                    plain_text=args.plain_text,
                    workdir=Path(workdir),
                    batch_file_type=args.batch_file_type,
                    progress=progress,
                )
            human.write(report.text())
            if engine is not None and report.tables:
                config = engine.config(configuration)
                session = engine.sessions.for_request(config)
                replay_module.print_tables(
                    session, config.catalog, args.schema, report.tables, human
                )
            return 0 if report.ok else 1
        except TesterInputError as exc:
            human.write(f"error: {exc}\n")
            return 2
        finally:
            if server is not None:
                server.stop(grace=None)


def _input_paths(args: argparse.Namespace) -> list[Path]:
    """Positional files and folders, or the tester's ``--input-file NAME`` (looked up in them)."""
    given = [Path(p) for p in args.files]
    if not args.input_file:
        if not given:
            raise DestinationError("replay needs input files or folders (or --input-file)")
        return given
    folders = [p for p in given if p.is_dir()] or [Path.cwd()]
    chosen = [p for p in given if not p.is_dir()]
    for name in args.input_file:
        candidates = [Path(name), *(folder / name for folder in folders)]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            where = ", ".join(str(f) for f in folders)
            raise DestinationError(f"--input-file {name}: no such file (looked in {where})")
        chosen.append(found)
    return chosen


def cmd_replay(args: argparse.Namespace) -> int:
    return _replay(_input_paths(args), args)


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
    preview.add_argument(
        "request", help="request JSON file (see spark_destination.service.request_json)"
    )
    preview.add_argument(
        "--dialect",
        default="spark_iceberg",
        help="SQL dialect to render: spark_iceberg (default) or databricks_delta",
    )
    preview.set_defaults(func=cmd_preview)

    from spark_destination.cli.maintain import add_maintain_command

    add_maintain_command(sub, _add_spark_flags, _engine, _defaults)

    for name, helptext, func in (
        ("replay", "run destination-tester input files", cmd_replay),
        ("demo", "replay the bundled sample sync and print the tables", cmd_demo),
    ):
        command = sub.add_parser(name, help=helptext)
        if name == "replay":
            command.add_argument(
                "files",
                nargs="*",
                help="tester input JSON files, or folders of them (their *.json in name order)",
            )
            command.add_argument(
                "--input-file",
                action="append",
                default=[],
                help="run this input file only (the tester's flag; looked up in the folders "
                "given); repeatable",
            )
        command.add_argument("--address", help="a running server (default: embedded server)")
        command.add_argument("--schema", "--schema-name", dest="schema", default="tester")
        command.add_argument("--plain-text", action="store_true", help="no compression/AES")
        command.add_argument(
            "--batch-file-type",
            type=str.upper,
            choices=("CSV", "PARQUET"),
            default="CSV",
            help="batch file format, as the tester's flag (default CSV)",
        )
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
