"""Turn destination-tester input JSON files into the RPC steps the v2 tester would send.

One input file is one "sync" (protocol reference §10.2-§10.5). ``TesterSession.steps`` returns
its steps in the tester's order and writes the batch files they refer to:

1. ``describe_table`` (as the v1 tester did first), ``create_table``, ``alter_table`` (full
   definition, ``drop_columns=false``);
2. ``ops``: rows are grouped per table and op type into one file per (table, op) for the whole
   input file; then, per table in order of first mention, one WriteBatch (or WriteHistoryBatch)
   followed by that table's truncates in op order;
3. ``schema_migration`` ops, mapped to AlterTable or Migrate as in §10.4;
4. ``describe_table`` again (where the v2 example files put it), to see the final state.

Steps are plain frozen dataclasses, so all of this is testable without gRPC or Spark. The session
keeps table definitions across input files because a later file may write to a table created by
an earlier one without repeating ``create_table``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from spark_destination.model import (
    DELETED,
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    DataType,
    DecimalParams,
    FileParams,
    Table,
)
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.testing.batch_writer import new_key, shuffled, write_batch_file
from spark_destination.testing.client import PLAIN_TEXT_FILE_PARAMS, TESTER_FILE_PARAMS

__all__ = [
    "TMAX",
    "AlterStep",
    "CreateStep",
    "DescribeStep",
    "JsonNumber",
    "MigrateStep",
    "Step",
    "TableDef",
    "TesterInputError",
    "TesterSession",
    "TruncateStep",
    "WriteHistoryStep",
    "WriteStep",
    "batch_files",
    "close_versions",
    "format_instant",
    "load_input",
    "parse_instant",
    "parse_table_def",
    "sample_paths",
]

# The open end of a history version (reference §6.2).
TMAX: Final = "9999-12-31T23:59:59.999Z"
# Consumed by the tester for history tables; never written as a column.
OP_TIME: Final = "op_time"

_TOP_LEVEL_KEYS: Final = frozenset(
    {"create_table", "alter_table", "describe_table", "ops", "schema_migration"}
)
_ROW_OPS: Final = ("upsert", "update", "soft_delete", "delete")
_TRUNCATE_OPS: Final = {"truncate_before": None, "soft_truncate_before": DELETED}
# Columns the tester generates; an input file may not declare them (the v1 tester refused).
_SYSTEM_NAMES: Final = frozenset(
    {SYNCED, DELETED, FIVETRAN_ID, HISTORY_START, HISTORY_END, HISTORY_ACTIVE}
)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS: Final = timedelta(milliseconds=1)


class TesterInputError(ValueError):
    """The input file does not follow the tester's format."""


# ---------------------------------------------------------------------------------------------
# JSON values -> CSV text
# ---------------------------------------------------------------------------------------------


class JsonNumber(str):
    """A JSON number kept as its source text, so ``100.45`` stays ``100.45`` (no float trip)."""

    __slots__ = ()


def load_input(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(
            path.read_text(encoding="utf-8"), parse_int=JsonNumber, parse_float=JsonNumber
        )
    except json.JSONDecodeError as exc:
        raise TesterInputError(f"{path.name} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TesterInputError(f"{path.name}: the top level must be a JSON object")
    return data


def _json_text(value: Any) -> str:
    """Compact JSON, writing numbers with their original text."""
    if isinstance(value, JsonNumber):
        return str(value)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k))}:{_json_text(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v) for v in value) + "]"
    return json.dumps(value)


def csv_value(value: Any, null_string: str) -> str:
    """The CSV text the tester writes for one JSON value."""
    if value is None:
        return null_string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # JsonNumber included: its text as written
        return str(value)
    if isinstance(value, Mapping | list):
        return _json_text(value)
    if isinstance(value, int | float):  # hand-built rows that bypassed load_input
        return str(value)
    raise TesterInputError(f"unsupported JSON value of type {type(value).__name__}")


# ---------------------------------------------------------------------------------------------
# Instants (millisecond precision, ISO text like Java's Instant.toString)
# ---------------------------------------------------------------------------------------------


def parse_instant(text: str) -> int:
    """Epoch milliseconds of an ISO-8601 instant; no offset means UTC."""
    try:
        value = datetime.fromisoformat(str(text))
    except ValueError:
        raise TesterInputError(f"{text!r} is not an ISO-8601 instant") from None
    value = value if value.tzinfo else value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _ONE_MS


def format_instant(millis: int) -> str:
    """``2025-11-21T14:59:47.315Z``, or ``2005-05-23T20:57:00Z`` when there are no millis."""
    value = _EPOCH + timedelta(milliseconds=millis)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = millis % 1000
    return f"{text}.{fraction:03d}Z" if fraction else f"{text}Z"


def instant_datetime(millis: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=millis)


# ---------------------------------------------------------------------------------------------
# Table definitions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TableDef:
    """A table as the input file declares it; ``table()`` adds the system columns."""

    name: str
    columns: tuple[Column, ...]
    history_mode: bool = False

    @property
    def has_declared_key(self) -> bool:
        return any(c.primary_key for c in self.columns)

    @property
    def source_key(self) -> tuple[str, ...]:
        """The rows' identity: the declared PK, or ``_fivetran_id`` for a PK-less table."""
        declared = tuple(c.name for c in self.columns if c.primary_key)
        return declared or (FIVETRAN_ID,)

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def table(self) -> Table:
        return Table(name=self.name, columns=self.columns + system_columns(self))

    def renamed(self, name: str) -> TableDef:
        return replace(self, name=name)

    def with_column(self, column: Column) -> TableDef:
        kept = tuple(c for c in self.columns if c.name != column.name)
        if len(kept) == len(self.columns):
            return replace(self, columns=self.columns + (column,))
        # Replace in place so the column order the tester sends stays stable.
        return replace(
            self, columns=tuple(column if c.name == column.name else c for c in self.columns)
        )

    def without_column(self, name: str) -> TableDef:
        return replace(self, columns=tuple(c for c in self.columns if c.name != name))


def system_columns(definition: TableDef) -> tuple[Column, ...]:
    """The columns the tester adds (reference §6.4, §10.2)."""
    added: list[Column] = []
    if not definition.has_declared_key:
        added.append(Column(name=FIVETRAN_ID, type=DataType.STRING, primary_key=True))
    added.append(Column(name=SYNCED, type=DataType.UTC_DATETIME))
    if definition.history_mode:
        added += [
            Column(name=HISTORY_START, type=DataType.UTC_DATETIME, primary_key=True),
            Column(name=HISTORY_END, type=DataType.UTC_DATETIME),
            Column(name=HISTORY_ACTIVE, type=DataType.BOOLEAN),
        ]
    else:
        added.append(Column(name=DELETED, type=DataType.BOOLEAN))
    return tuple(added)


def parse_column(name: str, spec: Any, *, primary_key: bool = False) -> Column:
    """``"INT"`` or ``{"type": "DECIMAL", "precision": 38, "scale": 10}`` (numbers or strings)."""
    if name in _SYSTEM_NAMES:
        raise TesterInputError(f"column {name!r} is added by the tester and cannot be declared")
    spec = {"type": spec} if isinstance(spec, str) else spec
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise TesterInputError(f"column {name!r}: expected a type name or an object with 'type'")
    try:
        data_type = DataType[str(spec["type"]).upper()]
    except KeyError:
        raise TesterInputError(f"column {name!r} has an unknown type {spec['type']!r}") from None
    decimal = None
    if "precision" in spec:
        try:
            decimal = DecimalParams(
                precision=int(spec["precision"]), scale=int(spec.get("scale", 0))
            )
        except ValueError:
            raise TesterInputError(
                f"column {name!r}: precision and scale must be integers"
            ) from None
    return Column(name=name, type=data_type, primary_key=primary_key, decimal=decimal)


def parse_table_def(name: str, data: Any) -> TableDef:
    if not isinstance(data, Mapping) or not isinstance(data.get("columns"), Mapping):
        raise TesterInputError(f"table {name!r}: expected an object with a 'columns' object")
    keys = [str(k) for k in data.get("primary_key", [])]
    unknown = [k for k in keys if k not in data["columns"]]
    if unknown:
        raise TesterInputError(f"table {name!r}: primary key column(s) {unknown} are not declared")
    columns = tuple(
        parse_column(str(n), spec, primary_key=n in keys) for n, spec in data["columns"].items()
    )
    return TableDef(name=name, columns=columns, history_mode=bool(data.get("history_mode", False)))


# ---------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeStep:
    table: str

    @property
    def summary(self) -> str:
        return f"DescribeTable {self.table}"


@dataclass(frozen=True, slots=True)
class CreateStep:
    table: Table

    @property
    def summary(self) -> str:
        return f"CreateTable {self.table.name}"


@dataclass(frozen=True, slots=True)
class AlterStep:
    table: Table
    drop_columns: bool = False

    @property
    def summary(self) -> str:
        drop = " (drop_columns)" if self.drop_columns else ""
        return f"AlterTable {self.table.name}{drop}"


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStep:
    table: Table
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    # Never printed: keys must not end up in logs or reports.
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    file_params: FileParams = TESTER_FILE_PARAMS

    @property
    def files(self) -> tuple[str, ...]:
        return self.replace_files + self.update_files + self.delete_files

    @property
    def summary(self) -> str:
        return (
            f"WriteBatch {self.table.name} (replace {len(self.replace_files)}, "
            f"update {len(self.update_files)}, delete {len(self.delete_files)})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteHistoryStep:
    table: Table
    earliest_start_files: tuple[str, ...] = ()
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    file_params: FileParams = TESTER_FILE_PARAMS

    @property
    def files(self) -> tuple[str, ...]:
        return (
            self.earliest_start_files + self.replace_files + self.update_files + self.delete_files
        )

    @property
    def summary(self) -> str:
        return (
            f"WriteHistoryBatch {self.table.name} (earliest {len(self.earliest_start_files)}, "
            f"replace {len(self.replace_files)}, update {len(self.update_files)}, "
            f"delete {len(self.delete_files)})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateStep:
    table: str
    utc_delete_before: datetime
    soft_deleted_column: str | None = None
    synced_column: str = SYNCED

    @property
    def summary(self) -> str:
        kind = "soft " if self.soft_deleted_column is not None else ""
        before = self.utc_delete_before.isoformat(timespec="milliseconds")
        return f"Truncate {self.table} ({kind}before {before})"


@dataclass(frozen=True, slots=True)
class MigrateStep:
    details: pb.MigrationDetails

    @property
    def summary(self) -> str:
        operation = self.details.WhichOneof("operation") or "no operation"
        what = operation
        if operation in ("drop", "copy", "rename", "add"):
            what += f".{getattr(self.details, operation).WhichOneof('entity')}"
        return f"Migrate {self.details.table} ({what})"


Step = (
    DescribeStep
    | CreateStep
    | AlterStep
    | WriteStep
    | WriteHistoryStep
    | TruncateStep
    | MigrateStep
)


def batch_files(steps: Iterable[Step]) -> list[str]:
    """Every batch file the steps refer to (for clean-up)."""
    return [f for s in steps if isinstance(s, WriteStep | WriteHistoryStep) for f in s.files]


# ---------------------------------------------------------------------------------------------
# Data ops -> rows
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _OpRow:
    op: str  # upsert | update | soft_delete | delete
    values: Mapping[str, Any]
    processed_ms: int


@dataclass(slots=True)
class _TableOps:
    rows: list[_OpRow] = field(default_factory=list)
    truncates: list[TruncateStep] = field(default_factory=list)


def close_versions(starts: Sequence[int]) -> list[tuple[int, bool]]:
    """(end, active) per version of one key, given the versions' starts in milliseconds.

    Each version ends 1 ms before the next one starts; the latest stays open (TMAX, active).
    The result is in the order of ``starts``; ``-1`` stands for TMAX.
    """
    order = sorted(range(len(starts)), key=lambda i: starts[i])
    result: list[tuple[int, bool]] = [(-1, True)] * len(starts)
    for position, index in enumerate(order[:-1]):
        result[index] = (starts[order[position + 1]] - 1, False)
    return result


def _end_text(end: int) -> str:
    return TMAX if end == -1 else format_instant(end)


class TesterSession:
    """Converts input files in sequence, remembering the tables they define.

    ``clock`` returns epoch milliseconds; each op gets a processing time at least 1 ms after the
    previous op's (the tester's delay between ops), so a fixed clock gives deterministic files.
    ``rng`` shuffles the columns of each file and draws the AES IVs.
    """

    def __init__(
        self,
        *,
        workdir: Path,
        schema: str = "tester",
        plain_text: bool = False,
        clock: Callable[[], int] | None = None,
        rng: random.Random | None = None,
        key_factory: Callable[[], bytes] = new_key,
    ) -> None:
        self._workdir = workdir.resolve()
        self._schema = schema
        self._plain_text = plain_text
        self._clock = clock or (lambda: time.time_ns() // 1_000_000)
        self._rng = rng or random.Random()  # noqa: S311 - shuffling, not security
        self._key_factory = key_factory
        self._last_ms: int | None = None
        self._tables: dict[str, TableDef] = {}
        self._written: list[str] = []

    @property
    def tables(self) -> Mapping[str, TableDef]:
        return MappingProxyType(self._tables)

    @property
    def schema(self) -> str:
        return self._schema

    @property
    def file_params(self) -> FileParams:
        return PLAIN_TEXT_FILE_PARAMS if self._plain_text else TESTER_FILE_PARAMS

    def take_written(self) -> list[str]:
        """The batch files written since the last call (also those of a file that failed)."""
        written, self._written = self._written, []
        return written

    def load(self, path: Path) -> list[Step]:
        """The steps of one input file; the batch files are written into the workdir."""
        return self.steps(load_input(path), input_name=path.stem)

    def steps(self, data: Mapping[str, Any], *, input_name: str) -> list[Step]:
        unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
        if unknown:
            raise TesterInputError(f"{input_name}: unknown top-level key(s) {unknown}")
        described = [DescribeStep(str(t)) for t in data.get("describe_table", [])]
        steps: list[Step] = list(described)
        for name, spec in _mapping(data, "create_table", input_name).items():
            self._tables[name] = parse_table_def(name, spec)
            steps.append(CreateStep(self._tables[name].table()))
        for name, spec in _mapping(data, "alter_table", input_name).items():
            self._tables[name] = parse_table_def(name, spec)
            steps.append(AlterStep(self._tables[name].table(), drop_columns=False))
        steps += self._op_steps(data.get("ops", []), input_name)
        steps += self._migration_steps(data.get("schema_migration", []), input_name)
        return steps + described

    # -- ops ------------------------------------------------------------------------------------

    def _tick(self) -> int:
        now = self._clock()
        if self._last_ms is not None and now <= self._last_ms:
            now = self._last_ms + 1
        self._last_ms = now
        return now

    def _op_steps(self, ops: Any, input_name: str) -> list[Step]:
        if not isinstance(ops, list):
            raise TesterInputError(f"{input_name}: 'ops' must be a list")
        per_table: dict[str, _TableOps] = {}
        for position, element in enumerate(ops):
            if not isinstance(element, Mapping) or len(element) != 1:
                raise TesterInputError(
                    f"{input_name}: ops[{position}] must be an object with exactly one op key"
                )
            ((op, payload),) = element.items()
            self._collect(op, payload, self._tick(), per_table, f"{input_name}: ops[{position}]")
        steps: list[Step] = []
        for table_name, table_ops in per_table.items():
            if table_ops.rows:
                steps.append(self._write_step(table_name, table_ops.rows, input_name))
            steps += table_ops.truncates
        return steps

    def _collect(
        self, op: str, payload: Any, ms: int, per_table: dict[str, _TableOps], where: str
    ) -> None:
        if op in _TRUNCATE_OPS:
            if not isinstance(payload, list):
                raise TesterInputError(f"{where}: {op} takes a list of table names")
            for name in payload:
                per_table.setdefault(str(name), _TableOps()).truncates.append(
                    TruncateStep(
                        table=str(name),
                        utc_delete_before=instant_datetime(ms),
                        soft_deleted_column=_TRUNCATE_OPS[op],
                    )
                )
        elif op in _ROW_OPS:
            if not isinstance(payload, Mapping):
                raise TesterInputError(f"{where}: {op} takes an object of table -> rows")
            for name, rows in payload.items():
                if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
                    raise TesterInputError(f"{where}: {op} rows of {name!r} must be objects")
                per_table.setdefault(str(name), _TableOps()).rows.extend(
                    _OpRow(op, row, ms) for row in rows
                )
        else:
            raise TesterInputError(f"{where}: unknown op {op!r}")

    def _definition(self, name: str, where: str) -> TableDef:
        definition = self._tables.get(name)
        if definition is None:
            raise TesterInputError(f"{where}: table {name!r} was never defined by create_table")
        return definition

    def _write_step(self, name: str, rows: list[_OpRow], input_name: str) -> Step:
        definition = self._definition(name, input_name)
        for row in rows:
            _check_row(definition, row, input_name)
        if definition.history_mode:
            return self._history_step(definition, rows, input_name)
        return self._batch_step(definition, rows, input_name)

    def _batch_step(self, definition: TableDef, rows: list[_OpRow], input_name: str) -> WriteStep:
        table = definition.table()
        params = self.file_params
        groups = {
            "upsert": [r for r in rows if r.op == "upsert"],
            # Soft deletes travel in the update file, interleaved in op order (reference §10.5).
            "update": [r for r in rows if r.op in ("update", "soft_delete")],
            "delete": [r for r in rows if r.op == "delete"],
        }
        files: dict[str, str] = {}
        keys: dict[str, bytes] = {}
        for op, group in groups.items():
            if group:
                values = [_batch_values(definition, table, r, params) for r in group]
                files[op] = self._write_file(definition.name, input_name, op, table, values, keys)
        return WriteStep(
            table=table,
            replace_files=_one(files.get("upsert")),
            update_files=_one(files.get("update")),
            delete_files=_one(files.get("delete")),
            keys=keys,
            file_params=params,
        )

    def _history_step(
        self, definition: TableDef, rows: list[_OpRow], input_name: str
    ) -> WriteHistoryStep:
        table = definition.table()
        params = self.file_params
        # The tester's handling of soft_delete on a history table is not documented; a history
        # delete (close the active version) is the only meaning the history files can carry.
        versions = [r for r in rows if r.op in ("upsert", "update")]
        deletes = [r for r in rows if r.op in ("delete", "soft_delete")]
        starts = [_op_time(r) for r in versions]
        ends = _version_ends(definition, versions, starts, params)
        keys: dict[str, bytes] = {}
        files: dict[str, str] = {}
        earliest = _earliest_rows(definition, versions, starts, params)
        if earliest:
            header = (*definition.source_key, HISTORY_START)
            files["earliest"] = self._write_file(
                definition.name, input_name, "earliest", table, earliest, keys, header=header
            )
        for op in ("upsert", "update"):
            values = [
                _history_values(definition, table, r, start, end, params)
                for r, start, end in zip(versions, starts, ends, strict=True)
                if r.op == op
            ]
            if values:
                files[op] = self._write_file(definition.name, input_name, op, table, values, keys)
        if deletes:
            values = [_history_delete_values(definition, table, r, params) for r in deletes]
            files["delete"] = self._write_file(
                definition.name, input_name, "delete", table, values, keys
            )
        return WriteHistoryStep(
            table=table,
            earliest_start_files=_one(files.get("earliest")),
            replace_files=_one(files.get("upsert")),
            update_files=_one(files.get("update")),
            delete_files=_one(files.get("delete")),
            keys=keys,
            file_params=params,
        )

    def _write_file(
        self,
        table_name: str,
        input_name: str,
        op: str,
        table: Table,
        rows: list[dict[str, str]],
        keys: dict[str, bytes],
        *,
        header: Sequence[str] | None = None,
    ) -> str:
        params = self.file_params
        suffix = ".csv" if self._plain_text else ".csv.zstd.aes"
        self._workdir.mkdir(parents=True, exist_ok=True)
        path = self._workdir / f"{table_name}_{input_name}_{op}{suffix}"
        columns = shuffled(header or [c.name for c in table.columns], self._rng)
        key = None if self._plain_text else self._key_factory()
        self._written.append(str(path))
        write_batch_file(
            path,
            columns,
            ([r[c] for c in columns] for r in rows),
            params=params,
            key=key,
            rng=self._rng,
        )
        if key is not None:
            # Keyed by the exact string that goes into the file list.
            keys[str(path)] = key
        return str(path)

    # -- schema_migration ---------------------------------------------------------------------

    def _migration_steps(self, migrations: Any, input_name: str) -> list[Step]:
        if not isinstance(migrations, list):
            raise TesterInputError(f"{input_name}: 'schema_migration' must be a list")
        steps: list[Step] = []
        for position, element in enumerate(migrations):
            where = f"{input_name}: schema_migration[{position}]"
            if not isinstance(element, Mapping):
                raise TesterInputError(f"{where} must be an object of op -> entries")
            # Several op keys may share one object; JSON key order is the tester's order.
            for op, entries in element.items():
                handler = _MIGRATIONS.get(op)
                if handler is None:
                    raise TesterInputError(f"{where}: unknown schema migration {op!r}")
                if not isinstance(entries, list):
                    raise TesterInputError(f"{where}: {op} takes a list of entries")
                for entry in entries:
                    if not isinstance(entry, Mapping):
                        raise TesterInputError(f"{where}: {op} entries must be objects")
                    steps.append(handler(self, _Entry(entry, f"{where}.{op}")))
        return steps

    def _details(self, table: str, **operation: Any) -> MigrateStep:
        return MigrateStep(pb.MigrationDetails(schema=self._schema, table=table, **operation))

    def _alter(self, definition: TableDef, *, drop_columns: bool = False) -> AlterStep:
        self._tables[definition.name] = definition
        return AlterStep(definition.table(), drop_columns=drop_columns)

    def _update(self, name: str, change: Callable[[TableDef], TableDef]) -> None:
        """Track a Migrate's effect; tables the session never saw are left unknown."""
        if name in self._tables:
            self._tables[name] = change(self._tables[name])


# ---------------------------------------------------------------------------------------------
# Row values
# ---------------------------------------------------------------------------------------------


def _one(path: str | None) -> tuple[str, ...]:
    return (path,) if path else ()


def _check_row(definition: TableDef, row: _OpRow, where: str) -> None:
    allowed = {c.name for c in definition.columns} | {OP_TIME}
    if not definition.has_declared_key:
        allowed.add(FIVETRAN_ID)
    unknown = sorted(set(row.values) - allowed)
    if unknown:
        raise TesterInputError(
            f"{where}: {row.op} row for {definition.name!r} has unknown column(s) {unknown}"
        )
    missing = [k for k in definition.source_key if k not in row.values]
    if missing:
        raise TesterInputError(
            f"{where}: {row.op} row for {definition.name!r} lacks key column(s) {missing}"
        )


def _batch_values(
    definition: TableDef, table: Table, row: _OpRow, params: FileParams
) -> dict[str, str]:
    key = set(definition.source_key)
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif row.op == "delete":
            # Hard deletes carry the key and the sync time; everything else is NULL (observed).
            value = row.values.get(name) if name in key else None
            values[name] = csv_value(value, params.null_string)
        elif name == DELETED:
            values[name] = "true" if row.op == "soft_delete" else "false"
        elif _unmodified(row, name, key):
            values[name] = params.unmodified_string
        else:
            # Upserts must list every column; a missing one is written as NULL.
            values[name] = csv_value(row.values.get(name), params.null_string)
    return values


def _unmodified(row: _OpRow, name: str, key: set[str]) -> bool:
    """Update rows leave out what did not change; soft deletes change nothing but the flag."""
    if row.op == "soft_delete":
        return name not in key
    return row.op == "update" and name not in row.values


def _op_time(row: _OpRow) -> int:
    """A history row's ``op_time``; without one, the time the tester processed the op."""
    given = row.values.get(OP_TIME)
    return parse_instant(given) if given is not None else row.processed_ms


def _key_of(definition: TableDef, row: _OpRow, params: FileParams) -> tuple[str, ...]:
    return tuple(csv_value(row.values.get(k), params.null_string) for k in definition.source_key)


def _version_ends(
    definition: TableDef, versions: list[_OpRow], starts: list[int], params: FileParams
) -> list[int]:
    """Each version's end (``-1`` = TMAX), computed per key over this input file's versions."""
    by_key: dict[tuple[str, ...], list[int]] = {}
    for index, row in enumerate(versions):
        by_key.setdefault(_key_of(definition, row, params), []).append(index)
    ends = [-1] * len(versions)
    for indexes in by_key.values():
        closed = close_versions([starts[i] for i in indexes])
        for index, (end, _active) in zip(indexes, closed, strict=True):
            ends[index] = end
    return ends


def _earliest_rows(
    definition: TableDef, versions: list[_OpRow], starts: list[int], params: FileParams
) -> list[dict[str, str]]:
    earliest: dict[tuple[str, ...], int] = {}
    for row, start in zip(versions, starts, strict=True):
        key = _key_of(definition, row, params)
        earliest[key] = min(start, earliest.get(key, start))
    return [
        {**dict(zip(definition.source_key, key, strict=True)), HISTORY_START: format_instant(start)}
        for key, start in earliest.items()
    ]


def _history_values(
    definition: TableDef, table: Table, row: _OpRow, start: int, end: int, params: FileParams
) -> dict[str, str]:
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif name == HISTORY_START:
            values[name] = format_instant(start)
        elif name == HISTORY_END:
            values[name] = _end_text(end)
        elif name == HISTORY_ACTIVE:
            values[name] = "true" if end == -1 else "false"
        elif row.op == "update" and name not in row.values:
            values[name] = params.unmodified_string
        else:
            values[name] = csv_value(row.values.get(name), params.null_string)
    return values


def _history_delete_values(
    definition: TableDef, table: Table, row: _OpRow, params: FileParams
) -> dict[str, str]:
    key = set(definition.source_key)
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif name == HISTORY_END:
            # The delete time itself, no -1 ms (reference §8.5).
            values[name] = format_instant(_op_time(row))
        elif name == HISTORY_ACTIVE:
            values[name] = "false"
        elif name in key:
            values[name] = csv_value(row.values.get(name), params.null_string)
        else:
            values[name] = params.null_string  # _fivetran_start included (observed)
    return values


def _mapping(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise TesterInputError(f"{where}: '{key}' must be an object of table -> definition")
    return value


# ---------------------------------------------------------------------------------------------
# schema_migration handlers (reference §10.4)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    data: Mapping[str, Any]
    where: str

    def text(self, key: str) -> str:
        if key not in self.data:
            raise TesterInputError(f"{self.where}: entry lacks {key!r}")
        value = self.data[key]
        return "NULL" if value is None else csv_value(value, "NULL")

    def optional(self, key: str, default: str = "") -> str:
        return self.text(key) if key in self.data else default

    def column(self, name_key: str = "column") -> Column:
        if "data_type" not in self.data:
            raise TesterInputError(f"{self.where}: entry lacks 'data_type'")
        return parse_column(self.text(name_key), self.data["data_type"])


def _add_column(session: TesterSession, entry: _Entry) -> Step:
    definition = session._definition(entry.text("table"), entry.where)
    return session._alter(definition.with_column(entry.column()))


def _change_column_data_type(session: TesterSession, entry: _Entry) -> Step:
    definition = session._definition(entry.text("table"), entry.where)
    current = definition.column(entry.text("column"))
    if current is None:
        raise TesterInputError(f"{entry.where}: {definition.name!r} has no such column")
    changed = replace(entry.column(), primary_key=current.primary_key)
    return session._alter(definition.with_column(changed))


def _drop_column(session: TesterSession, entry: _Entry) -> Step:
    definition = session._definition(entry.text("table"), entry.where)
    return session._alter(definition.without_column(entry.text("column")), drop_columns=True)


def _copy_column(session: TesterSession, entry: _Entry) -> Step:
    table, source, target = entry.text("table"), entry.text("from_column"), entry.text("to_column")

    def copy(d: TableDef) -> TableDef:
        column = d.column(source)
        return (
            d if column is None else d.with_column(replace(column, name=target, primary_key=False))
        )

    session._update(table, copy)
    operation = pb.CopyOperation(copy_column=pb.CopyColumn(from_column=source, to_column=target))
    return session._details(table, copy=operation)


def _update_column_value(session: TesterSession, entry: _Entry) -> Step:
    operation = pb.UpdateColumnValueOperation(
        column=entry.text("column"), value=entry.text("value")
    )
    return session._details(entry.text("table"), update_column_value=operation)


def _set_column_to_null(session: TesterSession, entry: _Entry) -> Step:
    # The tester sends the literal 4-character string (reference §10.4).
    operation = pb.UpdateColumnValueOperation(column=entry.text("column"), value="NULL")
    return session._details(entry.text("table"), update_column_value=operation)


def _add_column_with_default_value(session: TesterSession, entry: _Entry) -> Step:
    table, column = entry.text("table"), entry.column()
    session._update(table, lambda d: d.with_column(column))
    operation = pb.AddOperation(
        add_column_with_default_value=pb.AddColumnWithDefaultValue(
            column=column.name,
            column_type=column.type.name,
            default_value=entry.optional("default_value"),
        )
    )
    return session._details(table, add=operation)


def _add_column_in_history_mode(session: TesterSession, entry: _Entry) -> Step:
    table, column = entry.text("table"), entry.column()
    session._update(table, lambda d: d.with_column(column))
    operation = pb.AddOperation(
        add_column_in_history_mode=pb.AddColumnInHistoryMode(
            column=column.name,
            column_type=column.type.name,
            default_value=entry.optional("default_value"),
            operation_timestamp=entry.text("operation_timestamp"),
        )
    )
    return session._details(table, add=operation)


def _drop_column_in_history_mode(session: TesterSession, entry: _Entry) -> Step:
    # The column stays in the table (history keeps its old values), so the definition is kept.
    operation = pb.DropOperation(
        drop_column_in_history_mode=pb.DropColumnInHistoryMode(
            column=entry.text("column"), operation_timestamp=entry.text("operation_timestamp")
        )
    )
    return session._details(entry.text("table"), drop=operation)


def _copy_table(session: TesterSession, entry: _Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    if source in session._tables:
        session._tables[target] = session._tables[source].renamed(target)
    operation = pb.CopyOperation(copy_table=pb.CopyTable(from_table=source, to_table=target))
    return session._details(source, copy=operation)


def _rename_column(session: TesterSession, entry: _Entry) -> Step:
    table, source, target = entry.text("table"), entry.text("from_column"), entry.text("to_column")

    def rename(d: TableDef) -> TableDef:
        columns = tuple(replace(c, name=target) if c.name == source else c for c in d.columns)
        return replace(d, columns=columns)

    session._update(table, rename)
    operation = pb.RenameOperation(
        rename_column=pb.RenameColumn(from_column=source, to_column=target)
    )
    return session._details(table, rename=operation)


def _rename_table(session: TesterSession, entry: _Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    if source in session._tables:
        session._tables[target] = session._tables.pop(source).renamed(target)
    operation = pb.RenameOperation(rename_table=pb.RenameTable(from_table=source, to_table=target))
    return session._details(source, rename=operation)


def _drop_table(session: TesterSession, entry: _Entry) -> Step:
    table = entry.text("table")
    session._tables.pop(table, None)
    return session._details(table, drop=pb.DropOperation(drop_table=True))


def _copy_table_to_history_mode(session: TesterSession, entry: _Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    if source in session._tables:
        copied = replace(session._tables[source].renamed(target), history_mode=True)
        session._tables[target] = copied
    operation = pb.CopyOperation(
        copy_table_to_history_mode=pb.CopyTableToHistoryMode(
            from_table=source,
            to_table=target,
            soft_deleted_column=entry.optional("deleted_column"),
        )
    )
    return session._details(source, copy=operation)


def _sync_mode(kind: str, history_after: bool) -> Callable[[TesterSession, _Entry], Step]:
    def handler(session: TesterSession, entry: _Entry) -> Step:
        table = entry.text("table")
        session._update(table, lambda d: replace(d, history_mode=history_after))
        operation = pb.TableSyncModeMigrationOperation(
            type=kind, soft_deleted_column=entry.optional("deleted_column")
        )
        if "keep_inactive_rows" in entry.data:
            operation.keep_deleted_rows = bool(entry.data["keep_inactive_rows"])
        return session._details(table, table_sync_mode_migration=operation)

    return handler


_MIGRATIONS: Final[Mapping[str, Callable[[TesterSession, _Entry], Step]]] = {
    "add_column": _add_column,
    "change_column_data_type": _change_column_data_type,
    "drop_column": _drop_column,
    "copy_column": _copy_column,
    "update_column_value": _update_column_value,
    "add_column_with_default_value": _add_column_with_default_value,
    "set_column_to_null": _set_column_to_null,
    "copy_table": _copy_table,
    "rename_column": _rename_column,
    "rename_table": _rename_table,
    "drop_table": _drop_table,
    "add_column_in_history_mode": _add_column_in_history_mode,
    "drop_column_in_history_mode": _drop_column_in_history_mode,
    "copy_table_to_history_mode": _copy_table_to_history_mode,
    "migrate_soft_delete_to_history": _sync_mode("SOFT_DELETE_TO_HISTORY", True),
    "migrate_history_to_soft_delete": _sync_mode("HISTORY_TO_SOFT_DELETE", False),
    # Withdrawn from the tester in Jan 2026 (LIVE mode); kept so a destination's "unsupported"
    # answer can still be exercised.
    "migrate_history_to_live": _sync_mode("HISTORY_TO_LIVE", False),
    "migrate_soft_delete_to_live": _sync_mode("SOFT_DELETE_TO_LIVE", False),
    "migrate_live_to_soft_delete": _sync_mode("LIVE_TO_SOFT_DELETE", False),
    "migrate_live_to_history": _sync_mode("LIVE_TO_HISTORY", True),
}


def sample_paths() -> list[Path]:
    """The input files shipped in ``spark_destination/samples``, in the tester's (name) order."""
    root = resources.files("spark_destination") / "samples"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".json"))
