"""``replay`` takes the destination tester's flags and shows progress (no Spark needed here)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from spark_destination.cli.main import build_parser
from spark_destination.cli.replay import input_paths
from spark_destination.core.errors import DestinationError
from spark_destination.replay.progress import BarProgress, PlainProgress, progress_for
from spark_destination.replay.run import StepResult

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "spark_destination" / "samples"


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["replay", *argv])


def test_input_file_is_looked_up_in_the_folders_given_and_runs_alone() -> None:
    args = _args(str(SAMPLES), "--input-file", "02_next_sync.json")
    assert input_paths(args) == [SAMPLES / "02_next_sync.json"]


def test_folders_and_files_run_as_given() -> None:
    args = _args(str(SAMPLES), str(SAMPLES / "01_basic.json"))
    assert input_paths(args) == [SAMPLES, SAMPLES / "01_basic.json"]


def test_a_missing_input_file_names_where_it_was_looked_for() -> None:
    args = _args(str(SAMPLES), "--input-file", "nope.json")
    with pytest.raises(DestinationError, match=r"--input-file nope.json: no such file"):
        input_paths(args)


def test_tester_flags_parse() -> None:
    args = build_parser().parse_args(
        ["replay", "x.json", "--batch-file-type", "csv", "--plain-text", "--schema-name", "s"]
    )
    assert (args.batch_file_type, args.plain_text, args.schema) == ("CSV", True, "s")


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
