"""``replay`` takes the destination tester's data folder and flags, and shows progress.

No Spark here: a run is replayed against the fake destination of ``tests.support``.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from spark_destination.cli.main import build_parser, main
from spark_destination.cli.replay import replay_configuration, replay_folder, server_address
from spark_destination.core.errors import DestinationError
from spark_destination.replay.data_folder import CONFIGURATION_FILE
from spark_destination.replay.progress import BarProgress, PlainProgress, progress_for
from spark_destination.replay.run import StepResult
from tests.support.data_folder import CONFIGURATION, make_data_folder
from tests.support.fake_destination import FakeServicer, serving

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "spark_destination" / "samples"


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["replay", *argv])


def test_input_file_is_looked_up_in_the_folders_given_and_runs_alone() -> None:
    args = _args(str(SAMPLES), "--input-file", "02_next_sync.json")
    assert replay_folder(args).paths == (SAMPLES / "02_next_sync.json",)


def test_folders_and_files_run_as_given() -> None:
    args = _args(str(SAMPLES), str(SAMPLES / "01_basic.json"))
    assert replay_folder(args).paths == (SAMPLES, SAMPLES / "01_basic.json")


def test_a_missing_input_file_names_where_it_was_looked_for() -> None:
    args = _args(str(SAMPLES), "--input-file", "nope.json")
    with pytest.raises(DestinationError, match=r"--input-file nope.json: no such file"):
        replay_folder(args)


def test_tester_flags_parse() -> None:
    args = build_parser().parse_args(
        ["replay", "x.json", "--batch-file-type", "csv", "--plain-text", "--schema-name", "s"]
    )
    assert (args.batch_file_type, args.plain_text, args.schema) == ("CSV", True, "s")
    args = _args("x.json", "--port", "50099", "--disable-operation-delay")
    assert (args.port, args.disable_operation_delay) == (50099, True)


def test_the_folders_configuration_is_under_the_flags_given(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    args = _args(str(folder), "--catalog", "from_flag")
    configuration = replay_configuration(replay_folder(args), args)
    # Keys the destination does not know pass as the tester passes them: the server decides.
    assert configuration == {**CONFIGURATION, "catalog": "from_flag"}
    args = _args(str(folder))
    assert replay_configuration(replay_folder(args), args) == CONFIGURATION


@pytest.mark.parametrize(
    ("argv", "address"),
    [
        ((), None),  # the embedded server
        (("--address", "db.internal:1"), "db.internal:1"),
        (("--port", "50099"), "127.0.0.1:50099"),  # the tester's default host
        (("--address", "db.internal:1", "--port", "50099"), "db.internal:50099"),
        (("--address", "db.internal", "--port", "50099"), "db.internal:50099"),
        (("--address", "[::1]:1", "--port", "50099"), "[::1]:50099"),
        (("--address", "::1", "--port", "50099"), "[::1]:50099"),
    ],
)
def test_port_names_the_running_server_on_the_address_host(
    argv: tuple[str, ...], address: str | None
) -> None:
    assert server_address(_args("x.json", *argv)) == address


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_port_out_of_range_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _args("x.json", "--port", port)
    assert "is not a port (1 to 65535)" in capsys.readouterr().err


def test_a_malformed_configuration_stops_the_command_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_data_folder(tmp_path)
    (folder / CONFIGURATION_FILE).write_text('{"warehouse": 1}', encoding="utf-8")
    assert main(["replay", str(folder), "--port", "1"]) == 2
    assert capsys.readouterr().err == (
        f"error: {folder / CONFIGURATION_FILE}: every configuration value must be a string; "
        "'warehouse' is a number\n"
    )


def test_a_tester_data_folder_replays_unchanged_against_a_running_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``replay DIR --port N`` as the tester's command line gives it: the folder's
    configuration (under the flag given) in every request, its input files in name order."""
    from spark_destination.server import logs

    # Logging is the process's to set up (JSON lines on stdout); the test keeps pytest's.
    monkeypatch.setattr(logs, "configure", lambda: None)
    folder = make_data_folder(tmp_path)
    servicer = FakeServicer()
    with serving(servicer) as port:
        argv = [str(folder), "--port", str(port), "--disable-operation-delay"]
        done = main(["replay", *argv, "--catalog", "from_flag"])
    human = capsys.readouterr().err
    assert done == 0, human
    assert f"configuration: {folder / CONFIGURATION_FILE}\n" in human
    assert human.endswith("OK\n")
    names = [name for name, _ in servicer.requests]
    assert names[:3] == ["Capabilities", "ConfigurationForm", "Test"]
    created = [r.table.name for n, r in servicer.requests if n == "CreateTable"]
    assert created == ["t10", "t2"]  # input_10.json runs before input_2.json
    assert names[-1] == "DescribeTable"  # schema_migrations_input_ddl.json, last
    expected = {**CONFIGURATION, "catalog": "from_flag"}
    sent = [
        dict(r.configuration)
        for n, r in servicer.requests
        if n not in {"Capabilities", "ConfigurationForm"}
    ]
    assert sent and all(c == expected for c in sent)


@pytest.mark.parametrize(("announced", "asked"), [("PARQUET", None), ("CSV", "PARQUET")])
def test_replay_writes_the_format_capabilities_announce(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    announced: str,
    asked: str | None,
) -> None:
    """Capabilities first, as Fivetran calls them: the batch files are in the announced format,
    and a ``--batch-file-type`` the destination does not announce stops the run before any
    request, naming both formats."""
    from spark_destination.server import logs
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

    monkeypatch.setattr(logs, "configure", lambda: None)
    folder = make_data_folder(tmp_path)
    servicer = FakeServicer(batch_file_format=pb.BatchFileFormat.Value(announced))
    with serving(servicer) as port:
        flags = ["--batch-file-type", asked] if asked else []
        done = main(["replay", str(folder), "--port", str(port), *flags])
    human = capsys.readouterr().err
    names = [name for name, _ in servicer.requests]
    if asked:
        assert done != 0
        assert f"announces {announced} batch files in Capabilities" in human
        assert f"never send {asked} files" in human
        assert names == ["Capabilities"]
        return
    assert done == 0, human
    written = [p for n, r in servicer.requests if n == "WriteBatch" for p in r.replace_files]
    assert written and all(".parquet" in p for p in written)
    assert all(servicer.seen_files[p] for p in written)  # read back as Parquet


def test_parquet_batch_files_carry_every_write_of_a_tester_input(tmp_path: Path) -> None:
    """``replay --batch-file-type PARQUET`` writes AvroParquetWriter-style files (the embedded
    server is then configured to read Parquet) that decode to the tester's rows."""
    import random

    from spark_destination.replay.input_files import TesterSession
    from spark_destination.replay.run import BATCH_FILE_TYPES
    from spark_destination.replay.steps import WriteHistoryStep, WriteStep
    from spark_destination.runtime.batch.parquet_files import read_parquet_batch_file

    assert "PARQUET" in BATCH_FILE_TYPES
    session = TesterSession(workdir=tmp_path, rng=random.Random(1), parquet=True)
    steps = session.load(SAMPLES / "01_basic.json")
    writes = [s for s in steps if isinstance(s, WriteStep | WriteHistoryStep)]
    assert writes
    rows = 0
    for step in writes:
        names = [c.name for c in step.table.columns]
        for path in step.files:
            assert path.endswith(".parquet.aes")
            raw = read_parquet_batch_file(
                path, key=step.keys[path], params=step.file_params, columns=names
            )
            rows += raw.num_rows
    assert rows > 0
    session.take_written()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _result(outcome: str) -> StepResult:
    return StepResult(input_file="a.json", step="WriteBatch t", outcome=outcome, message="m")


def test_plain_lines_when_not_on_a_terminal() -> None:
    stream = io.StringIO()
    progress = progress_for(stream, files=1)
    assert isinstance(progress, PlainProgress)
    with progress:
        progress.file_started("a.json", 1)
        progress.step_done(_result("success"), 1.5)
    assert stream.getvalue() == (
        "a.json: 1 step(s)\n  [a.json] WriteBatch t -> success: m (1.50 s)\n"
    )


def test_a_progress_bar_on_a_terminal_that_still_shows_failures() -> None:
    stream = _Terminal()
    progress = progress_for(stream, files=1)
    assert isinstance(progress, BarProgress)
    with progress:
        progress.file_started("a.json", 2)
        progress.step_done(_result("success"), 0.1)
        progress.step_done(_result("task"), 0.1)
    text = stream.getvalue()
    assert "[a.json] WriteBatch t -> task: m" in text
    assert "input files" in text
