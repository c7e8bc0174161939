"""``spark-destination replay`` (a destination tester's data folder) and ``demo`` (the samples).

``replay DIR`` runs DIR as the tester runs its data folder (``replay.data_folder``): the
configuration in ``configuration.json``, then the input files in alphabetical order of their
names. It takes the tester's flags: ``--port``, ``--plain-text``, ``--input-file``,
``--schema-name``, ``--disable-operation-delay`` and ``--batch-file-type``.

stdout carries only Fivetran JSON log lines, as the destination's stdout does under Fivetran;
people read stderr: one line per answered step (or a progress bar on a terminal), the verdict,
the tables, and where the warehouse is and how to read it with other engines.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from spark_destination.cli.flags import add_config_flags, config_defaults, engine_for
from spark_destination.core.errors import DestinationError
from spark_destination.replay.data_folder import DataFolder, read_data_folder
from spark_destination.server.addresses import DEFAULT_HOST, grpc_address

if TYPE_CHECKING:
    from spark_destination.local_services.object_store import ObjectStore


def add_commands(sub: Any) -> None:
    replay = sub.add_parser(
        "replay",
        help="run a destination tester's data folder (or its input files)",
        description="Runs a destination tester's data folder as the tester does: its "
        "configuration.json is the configuration (flags given here override its keys), its "
        "other *.json files are the input files, run in alphabetical order of their names.",
    )
    replay.add_argument(
        "files",
        nargs="*",
        help="data folders, input files, or configuration.json files; paths run in the order given",
    )
    replay.add_argument(
        "--input-file",
        action="append",
        default=[],
        help="run this input file only (the tester's flag; looked up in the folders given, "
        "else in the current folder); repeatable",
    )
    replay.add_argument(
        "--disable-operation-delay",
        action="store_true",
        help="the tester's flag, accepted and changing nothing: the tester pauses between "
        "operations to simulate real time, replay never does (each op's time is still at "
        "least 1 ms after the previous op's)",
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
        command.add_argument(
            "--address", help="a running server, HOST:PORT (default: an embedded server)"
        )
        command.add_argument(
            "--port",
            type=_port,
            help="a running server's port (the tester's flag), on the host of --address, else "
            f"on {DEFAULT_HOST}",
        )
        command.add_argument("--schema", "--schema-name", dest="schema", default="tester")
        command.add_argument("--plain-text", action="store_true", help="no compression/AES")
        command.add_argument(
            "--batch-file-type",
            type=str.upper,
            choices=("CSV", "PARQUET"),
            help="batch file format, as the tester's flag: the embedded server announces it in "
            "Capabilities; a running server must announce it (default: what Capabilities say)",
        )
        add_config_flags(command)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1 to 65535)")
    return port


def _host(address: str) -> str:
    """The host of ``HOST:PORT``, ``[IPV6]:PORT``, or of an address without a port."""
    if address.startswith("["):
        inside, closed, _rest = address[1:].partition("]")
        if not closed:
            raise DestinationError(f"--address {address}: an IPv6 address lacks its ']'")
        return inside
    host, colon, _port_text = address.rpartition(":")
    # No colon: a host alone; more than one: an IPv6 address without brackets or port.
    return host if colon and ":" not in host else address


def server_address(args: argparse.Namespace) -> str | None:
    """The running server to replay against (``--address``, its port replaced by ``--port``),
    or None for the embedded one. The tester connects to ``--port`` on 127.0.0.1 by default."""
    if args.port is None:
        return cast("str | None", args.address)
    host = DEFAULT_HOST if args.address is None else _host(args.address)
    return grpc_address(host, args.port)


def replay_folder(args: argparse.Namespace) -> DataFolder:
    """The input paths and the configuration file(s) of the command's arguments."""
    return read_data_folder(
        [Path(p) for p in args.files], input_files=args.input_file, cwd=Path.cwd()
    )


def replay_configuration(folder: DataFolder, args: argparse.Namespace) -> dict[str, str]:
    """The configuration every request carries: the data folder's, under the flags given."""
    return {**folder.configuration, **config_defaults(args)}


def run_replay(args: argparse.Namespace) -> int:
    return _replay(replay_folder(args), args)


def run_demo(args: argparse.Namespace) -> int:
    samples = resources.files("spark_destination") / "samples"
    with resources.as_file(samples) as folder:
        samples_folder = DataFolder(
            paths=(Path(folder),), configuration=MappingProxyType({}), configuration_files=()
        )
        if args.s3 is None:
            return _replay(samples_folder, args)
        from spark_destination.local_services.object_store import object_store

        with object_store(args.s3.resolve()) as store:
            for key, value in store.rest_configuration().items():
                setattr(args, key, value)
            args.catalog = args.catalog or "seaweed"
            done = _replay(samples_folder, args, store=store)
        sys.stderr.write(
            f"SeaweedFS stopped; its data and keys stay in {args.s3} "
            f"(scripts/object_store.sh --dir {args.s3} serves them again).\n"
        )
        return done


def _replay(folder: DataFolder, args: argparse.Namespace, store: ObjectStore | None = None) -> int:
    from spark_destination.cli.reading import reading_hints, s3_reading_hints
    from spark_destination.engine.table_format import catalog_of
    from spark_destination.replay import run as replay_module
    from spark_destination.replay.client import connect
    from spark_destination.replay.input_files import TesterInputError
    from spark_destination.replay.progress import progress_for
    from spark_destination.server import logs
    from spark_destination.server.app import create_server

    logs.configure()
    human = sys.stderr
    configuration = replay_configuration(folder, args)
    for path in folder.configuration_files:
        human.write(f"configuration: {path}\n")
    address = server_address(args)
    with tempfile.TemporaryDirectory(prefix="spark-destination-replay-") as workdir:
        server = None
        engine = None
        if address:
            client = connect(address)
        else:
            if args.batch_file_type:
                # The embedded server announces the tester's format, as a server started with
                # --batch-file-format would.
                args.batch_file_format = args.batch_file_type.lower()
            engine = engine_for(args)
            server, port = create_server(engine, port=0)
            server.start()
            client = connect(f"127.0.0.1:{port}")
        try:
            files = replay_module.expand_inputs(folder.paths)
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
                    session, catalog_of(config), args.schema, report.tables, human
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
