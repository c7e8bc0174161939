"""Replay destination-tester input files against a running destination, like the v2 tester.

``replay`` runs ConfigurationForm, every Test of the form (a failing test stops the run, as in
the tester), then each input file's steps (``replay.input_files``) through the gRPC client.
It stops at the first step answered with a task or a failure and reports it; warnings,
``not_found`` and ``unsupported`` are recorded and the run goes on. The batch files are written
into ``workdir`` and deleted after each input file.

``print_tables`` shows the resulting tables through Spark, for eyeballing or golden files.
"""

from __future__ import annotations

import random
import time as clock_time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TextIO

import grpc
from google.protobuf.message import Message

from spark_destination.dialects.quoting import ident, qualified
from spark_destination.replay.client import DestinationClient, response_outcome
from spark_destination.replay.data_folder import expand_inputs
from spark_destination.replay.input_files import (
    AlterStep,
    CreateStep,
    DescribeStep,
    MigrateStep,
    Step,
    TesterInputError,
    TesterSession,
    TruncateStep,
    WriteHistoryStep,
    WriteStep,
)
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "BATCH_FILE_TYPES",
    "ReplayReport",
    "StepResult",
    "expand_inputs",
    "print_tables",
    "replay",
    "run_step",
]

# The tester's --batch-file-type values this replay can write (Parquet: the AvroParquetWriter-
# style test writer; the destination must announce Parquet: ``serve --batch-file-format``).
BATCH_FILE_TYPES: Final = ("CSV", "PARQUET")

# Outcomes after which the tester carries on; anything else ends the run.
_CONTINUE: Final = frozenset({"success", "warning", "not_found", "table", "unsupported"})
_SHOW_LIMIT: Final = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    input_file: str  # empty for the set-up calls (ConfigurationForm, Test)
    step: str
    outcome: str  # response_outcome kinds, or "error" for a gRPC error status
    message: str = ""

    def line(self) -> str:
        where = f"[{self.input_file}] " if self.input_file else ""
        detail = f": {self.message}" if self.message else ""
        return f"{where}{self.step} -> {self.outcome}{detail}"


class ReplayProgress(Protocol):
    """Told when an input file starts and when each step (set-up calls included) is answered."""

    def file_started(self, name: str, steps: int) -> None: ...

    def step_done(self, result: StepResult, seconds: float) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    results: tuple[StepResult, ...]
    # Tables the input files defined and that still exist at the end, for print_tables.
    tables: tuple[str, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def verdict(self) -> str:
        return "OK" if self.error is None else f"FAILED: {self.error}"

    def text(self) -> str:
        return "\n".join([*(r.line() for r in self.results), self.verdict()]) + "\n"


def run_step(
    client: DestinationClient, step: Step, *, configuration: Mapping[str, str], schema: str
) -> Message:
    """Send one step; returns the response message."""
    match step:
        case DescribeStep(table=name):
            return client.describe_table(name, configuration=configuration, schema=schema)
        case CreateStep(table=table):
            return client.create_table(table, configuration=configuration, schema=schema)
        case AlterStep(table=table, drop_columns=drop):
            return client.alter_table(
                table, configuration=configuration, schema=schema, drop_columns=drop
            )
        case TruncateStep():
            return client.truncate(
                step.table,
                configuration=configuration,
                schema=schema,
                utc_delete_before=step.utc_delete_before,
                soft_deleted_column=step.soft_deleted_column,
                synced_column=step.synced_column,
            )
        case WriteStep():
            return client.write_batch(
                step.table,
                configuration=configuration,
                schema=schema,
                replace_files=step.replace_files,
                update_files=step.update_files,
                delete_files=step.delete_files,
                keys=step.keys,
                file_params=step.file_params,
            )
        case WriteHistoryStep():
            return client.write_history_batch(
                step.table,
                configuration=configuration,
                schema=schema,
                earliest_start_files=step.earliest_start_files,
                replace_files=step.replace_files,
                update_files=step.update_files,
                delete_files=step.delete_files,
                keys=step.keys,
                file_params=step.file_params,
            )
        case MigrateStep(details=details):
            return client.migrate(details, configuration=configuration)
    raise TypeError(f"not a step: {step!r}")


def _attempt(action: Callable[[], Message]) -> tuple[Message | None, str, str]:
    """(response, outcome, message); a gRPC error status becomes the outcome ``error``."""
    try:
        response = action()
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
        return None, "error", f"{code.name if code else 'RPC error'}: {details}"
    return response, *response_outcome(response)


class _Recorder:
    """Runs calls, records their results and tells the progress display."""

    def __init__(self, progress: ReplayProgress | None) -> None:
        self.results: list[StepResult] = []
        self.last_response: Message | None = None
        self._progress = progress

    def call(self, input_file: str, step: str, action: Callable[[], Message]) -> StepResult:
        started = clock_time.perf_counter()
        response, outcome, message = _attempt(action)
        result = StepResult(input_file=input_file, step=step, outcome=outcome, message=message)
        self.results.append(result)
        self.last_response = response
        if self._progress is not None:
            self._progress.step_done(result, clock_time.perf_counter() - started)
        return result

    def file_started(self, name: str, steps: int) -> None:
        if self._progress is not None:
            self._progress.file_started(name, steps)


def _run_tests(
    client: DestinationClient, configuration: Mapping[str, str], recorder: _Recorder
) -> str | None:
    result = recorder.call("", "ConfigurationForm", client.configuration_form)
    form = recorder.last_response
    if not isinstance(form, common.ConfigurationFormResponse):
        return f"ConfigurationForm failed: {result.message}"
    for test in form.tests:
        result = recorder.call(
            "", f"Test {test.name}", partial(client.test, test.name, configuration)
        )
        outcome, message = result.outcome, result.message
        if outcome != "success":
            # The tester stops the whole run when a configuration test fails.
            return f"test {test.name!r} failed: {message or outcome}"
    return None


def _remove(paths: Iterable[str]) -> None:
    for path in paths:
        Path(path).unlink(missing_ok=True)


def replay(
    paths: Sequence[Path],
    *,
    client: DestinationClient,
    configuration: dict[str, str],
    schema: str = "tester",
    plain_text: bool = False,
    workdir: Path,
    clock: Callable[[], int] | None = None,
    seed: int | None = None,
    batch_file_type: str | None = None,
    progress: ReplayProgress | None = None,
) -> ReplayReport:
    """Run the input files through ``client``; stop at the first task or failure.

    ``paths`` run in the order given, a folder's input files in the tester's order (alphabetical
    by name, its ``configuration.json`` left out: ``replay.data_folder``). ``configuration`` is
    sent with every request as it is. The batch files are in the format Capabilities announce,
    as Fivetran writes them (CSV when the RPC is not implemented); ``batch_file_type`` (the
    tester's ``--batch-file-type``) must agree with what the destination announces.
    """
    asked = batch_file_type.upper() if batch_file_type else None
    if asked is not None and asked not in BATCH_FILE_TYPES:
        raise TesterInputError(
            f"--batch-file-type {batch_file_type}: this replay writes "
            f"{' or '.join(BATCH_FILE_TYPES)} batch files only (no {asked} "
            f"test writer in this build)"
        )
    recorder = _Recorder(progress)
    recorder.call("", "Capabilities", client.capabilities)
    capabilities = recorder.last_response
    announced = (
        pb.BatchFileFormat.Name(capabilities.batch_file_format)
        if isinstance(capabilities, pb.CapabilitiesResponse)
        else None
    )
    error = None
    if asked is not None and announced is not None and asked != announced:
        error = (
            f"the destination announces {announced} batch files in Capabilities, so Fivetran "
            f"would never send {asked} files (start it with --batch-file-format {asked.lower()})"
        )
    file_type = asked or announced or "CSV"
    error = error or _run_tests(client, configuration, recorder)
    session = TesterSession(
        workdir=workdir,
        schema=schema,
        plain_text=plain_text,
        clock=clock,
        rng=random.Random(seed),  # noqa: S311 - column shuffling, not security
        parquet=file_type == "PARQUET",
    )
    for path in expand_inputs(paths) if error is None else []:
        error = _replay_file(path, session, client, configuration, recorder)
        if error is not None:
            break
    return ReplayReport(results=tuple(recorder.results), tables=tuple(session.tables), error=error)


def _replay_file(
    path: Path,
    session: TesterSession,
    client: DestinationClient,
    configuration: Mapping[str, str],
    recorder: _Recorder,
) -> str | None:
    try:
        steps = session.load(path)
        recorder.file_started(path.name, len(steps))
        for step in steps:
            send = partial(
                run_step, client, step, configuration=configuration, schema=session.schema
            )
            result = recorder.call(path.name, step.summary, send)
            if result.outcome not in _CONTINUE:
                return f"{path.name}: {step.summary} answered {result.outcome}: {result.message}"
    except (TesterInputError, OSError) as exc:
        return f"{path.name}: {exc}"
    finally:
        # The files hold test data only, but nothing should outlive the run (reference §1).
        _remove(session.take_written())
    return None


# ---------------------------------------------------------------------------------------------
# Showing tables
# ---------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value).replace("\n", "\\n")


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A ``show()``-like grid of the rows (newlines in values shown as ``\\n``)."""
    cells = [[_text(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    body = [line(r) for r in cells]
    return "\n".join([border, line(columns), border, *body, border]) + "\n"


def print_tables(
    session: SparkSession,
    catalog: str,
    schema: str,
    table_names: Iterable[str],
    out: TextIO,
    *,
    limit: int = _SHOW_LIMIT,
) -> None:
    """Print each table's rows ordered by its key columns (all columns when it has none)."""
    from pyspark.sql.functions import col

    from spark_destination.planner.ir import TableRef
    from spark_destination.runtime.execute.executor import Executor

    describer = Executor(session)
    for name in table_names:
        described = describer.describe(TableRef(catalog=catalog, schema=schema, name=name))
        if described is None:
            out.write(f"{schema}.{name}: not found\n\n")
            continue
        frame = session.table(qualified(catalog, schema, name))
        order = list(described.key) or list(frame.columns)
        # Timestamps are shown as Spark's text: Python cannot hold every Iceberg timestamp
        # (e.g. year 1, used as the minimum in history migrations). Quoted names: column
        # names may hold dots or backticks.
        shown = [
            col(ident(f.name)).cast("string").alias(f.name)
            if f.dataType.typeName() in ("timestamp", "timestamp_ntz")
            else col(ident(f.name))
            for f in frame.schema.fields
        ]
        rows = frame.orderBy(*[col(ident(c)) for c in order]).select(*shown).limit(limit).collect()
        total = frame.count()
        out.write(f"{schema}.{name} ({total} row{'s' if total != 1 else ''})\n")
        out.write(format_rows(frame.columns, [tuple(r) for r in rows]))
        if total > limit:
            out.write(f"... {total - limit} more row(s)\n")
        out.write("\n")
