"""``spark-destination replay`` (destination-tester input files) and ``demo`` (the samples).

stdout carries only Fivetran JSON log lines, as the destination's stdout does under Fivetran;
people read stderr: one line per answered step (or a progress bar on a terminal), the verdict,
the tables, and where the warehouse is and how to read it with other engines.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spark_destination.cli.flags import add_config_flags, config_defaults, engine_for
from spark_destination.core.errors import DestinationError

if TYPE_CHECKING:
    from spark_destination.local_services.object_store import ObjectStore


def add_commands(sub: Any) -> None:
    replay = sub.add_parser("replay", help="run destination-tester input files")
    replay.add_argument(
        "files",
        nargs="*",
        help="tester input JSON files, or folders of them (their *.json in name order)",
    )
    replay.add_argument(
        "--input-file",
        action="append",
        default=[],
        help="run this input file only (the tester's flag; looked up in the folders given); "
        "repeatable",
    )
    replay.set_defaults(func=run_replay)
    demo = sub.add_parser("demo", help="replay the bundled sample sync and print the tables")
    demo.add_argument(
        "--s3",
        metavar="DIR",
        type=Path,
        help="run it on S3: a SeaweedFS server (S3 and its Iceberg REST catalog) on loopback, "
        "its data and keys in DIR, started for the demo and stopped after it",
    )
    demo.set_defaults(func=run_demo)
    for command in (replay, demo):
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
        add_config_flags(command)


def input_paths(args: argparse.Namespace) -> list[Path]:
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


def run_replay(args: argparse.Namespace) -> int:
    return _replay(input_paths(args), args)


def run_demo(args: argparse.Namespace) -> int:
    samples = resources.files("spark_destination") / "samples"
    with resources.as_file(samples) as folder:
        paths = sorted(Path(folder).glob("*.json"))
        if args.s3 is None:
            return _replay(paths, args)
        from spark_destination.local_services.object_store import object_store

        with object_store(args.s3.resolve()) as store:
            for key, value in store.rest_configuration().items():
                setattr(args, key, value)
            args.catalog = args.catalog or "seaweed"
            done = _replay(paths, args, store=store)
        sys.stderr.write(
            f"SeaweedFS stopped; its data and keys stay in {args.s3} "
            f"(scripts/object_store.sh --dir {args.s3} serves them again).\n"
        )
        return done


def _replay(
    paths: Sequence[Path], args: argparse.Namespace, store: ObjectStore | None = None
) -> int:
    from spark_destination.cli.reading import reading_hints, s3_reading_hints
    from spark_destination.replay import run as replay_module
    from spark_destination.replay.client import connect
    from spark_destination.replay.input_files import TesterInputError
    from spark_destination.replay.progress import progress_for
    from spark_destination.server import logs
    from spark_destination.server.app import create_server

    logs.configure()
    human = sys.stderr
    configuration = config_defaults(args)
    with tempfile.TemporaryDirectory(prefix="spark-destination-replay-") as workdir:
        server = None
        engine = None
        if args.address:
            client = connect(args.address)
        else:
            engine = engine_for(args)
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
            # The steps were shown as they were answered: only the verdict is left to say.
            human.write(report.verdict() + "\n")
            if engine is not None and report.tables:
                config = engine.config(configuration)
                session = engine.sessions.for_request(config)
                replay_module.print_tables(
                    session, config.catalog, args.schema, report.tables, human
                )
                hints = (
                    reading_hints(config, args.schema, report.tables)
                    if store is None
                    else s3_reading_hints(store, config, args.schema, report.tables)
                )
                human.write(hints)
            return 0 if report.ok else 1
        except TesterInputError as exc:
            human.write(f"error: {exc}\n")
            return 2
        finally:
            if server is not None:
                server.stop(grace=None)
