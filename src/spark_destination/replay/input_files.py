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

This module holds the session; the pieces it uses live beside it, one concern each:
``tester_values`` (JSON values as CSV text, instants), ``tester_tables`` (table definitions),
``tester_steps`` (the steps), ``tester_rows`` (ops as rows and their file values) and
``tester_migrations`` (``schema_migration`` handlers).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from spark_destination.core.model import (
    DELETED,
    HISTORY_START,
    Column,
    DataType,
    FileParams,
    Table,
)
from spark_destination.replay.batch_writer import (
    new_key,
    shuffled,
    write_batch_file,
    write_parquet_batch_file,
)
from spark_destination.replay.client import PLAIN_TEXT_FILE_PARAMS, TESTER_FILE_PARAMS
from spark_destination.replay.migrations import MIGRATIONS, Entry
from spark_destination.replay.rows import (
    OpRow,
    batch_values,
    check_row,
    close_versions,
    earliest_rows,
    history_delete_values,
    history_values,
    op_time,
    version_ends,
)
from spark_destination.replay.steps import (
    AlterStep,
    CreateStep,
    DescribeStep,
    MigrateStep,
    Step,
    TruncateStep,
    WriteHistoryStep,
    WriteStep,
    batch_files,
)
from spark_destination.replay.tables import TableDef, parse_table_def
from spark_destination.replay.values import (
    TMAX,
    JsonNumber,
    TesterInputError,
    format_instant,
    instant_datetime,
    load_input,
    parse_instant,
)
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

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

_TOP_LEVEL_KEYS: Final = frozenset(
    {"create_table", "alter_table", "describe_table", "ops", "schema_migration"}
)
_ROW_OPS: Final = ("upsert", "update", "soft_delete", "delete")
_TRUNCATE_OPS: Final = {"truncate_before": None, "soft_truncate_before": DELETED}


@dataclass(slots=True)
class _TableOps:
    rows: list[OpRow] = field(default_factory=list)
    truncates: list[TruncateStep] = field(default_factory=list)


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
        parquet: bool = False,
    ) -> None:
        self._workdir = workdir.resolve()
        # The tester's --batch-file-type PARQUET: files as AvroParquetWriter writes them.
        self._parquet = parquet
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
                    OpRow(op, row, ms) for row in rows
                )
        else:
            raise TesterInputError(f"{where}: unknown op {op!r}")

    def definition(self, name: str, where: str) -> TableDef:
        definition = self._tables.get(name)
        if definition is None:
            raise TesterInputError(f"{where}: table {name!r} was never defined by create_table")
        return definition

    def _write_step(self, name: str, rows: list[OpRow], input_name: str) -> Step:
        definition = self.definition(name, input_name)
        for row in rows:
            check_row(definition, row, input_name)
        if definition.history_mode:
            return self._history_step(definition, rows, input_name)
        return self._batch_step(definition, rows, input_name)

    def _batch_step(self, definition: TableDef, rows: list[OpRow], input_name: str) -> WriteStep:
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
                values = [batch_values(definition, table, r, params) for r in group]
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
        self, definition: TableDef, rows: list[OpRow], input_name: str
    ) -> WriteHistoryStep:
        table = definition.table()
        params = self.file_params
        # The tester's handling of soft_delete on a history table is not documented; a history
        # delete (close the active version) is the only meaning the history files can carry.
        versions = [r for r in rows if r.op in ("upsert", "update")]
        deletes = [r for r in rows if r.op in ("delete", "soft_delete")]
        starts = [op_time(r) for r in versions]
        ends = version_ends(definition, versions, starts, params)
        keys: dict[str, bytes] = {}
        files: dict[str, str] = {}
        earliest = earliest_rows(definition, versions, starts, params)
        if earliest:
            header = (*definition.source_key, HISTORY_START)
            files["earliest"] = self._write_file(
                definition.name, input_name, "earliest", table, earliest, keys, header=header
            )
        for op in ("upsert", "update"):
            values = [
                history_values(definition, table, r, start, end, params)
                for r, start, end in zip(versions, starts, ends, strict=True)
                if r.op == op
            ]
            if values:
                files[op] = self._write_file(definition.name, input_name, op, table, values, keys)
        if deletes:
            values = [history_delete_values(definition, table, r, params) for r in deletes]
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
        suffix = ".parquet" if self._parquet else ".csv"
        suffix += "" if self._plain_text else (".aes" if self._parquet else ".zstd.aes")
        self._workdir.mkdir(parents=True, exist_ok=True)
        path = self._workdir / f"{table_name}_{input_name}_{op}{suffix}"
        columns = shuffled(header or [c.name for c in table.columns], self._rng)
        key = None if self._plain_text else self._key_factory()
        self._written.append(str(path))
        if self._parquet:
            by_name = {c.name: c for c in table.columns}
            write_parquet_batch_file(
                path,
                [by_name.get(c) or Column(name=c, type=DataType.STRING) for c in columns],
                columns,
                [[r[c] for c in columns] for r in rows],
                params=params,
                key=key,
                rng=self._rng,
            )
        else:
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
                handler = MIGRATIONS.get(op)
                if handler is None:
                    raise TesterInputError(f"{where}: unknown schema migration {op!r}")
                if not isinstance(entries, list):
                    raise TesterInputError(f"{where}: {op} takes a list of entries")
                for entry in entries:
                    if not isinstance(entry, Mapping):
                        raise TesterInputError(f"{where}: {op} entries must be objects")
                    steps.append(handler(self, Entry(entry, f"{where}.{op}")))
        return steps

    def details(self, table: str, **operation: Any) -> MigrateStep:
        return MigrateStep(pb.MigrationDetails(schema=self._schema, table=table, **operation))

    def alter(self, definition: TableDef, *, drop_columns: bool = False) -> AlterStep:
        self._tables[definition.name] = definition
        return AlterStep(definition.table(), drop_columns=drop_columns)

    def update_table(self, name: str, change: Callable[[TableDef], TableDef]) -> None:
        """Track a Migrate's effect; tables the session never saw are left unknown."""
        if name in self._tables:
            self._tables[name] = change(self._tables[name])

    def define(self, definition: TableDef) -> None:
        """Track a table a migration created (copy, rename)."""
        self._tables[definition.name] = definition

    def forget(self, name: str) -> None:
        self._tables.pop(name, None)


def _one(path: str | None) -> tuple[str, ...]:
    return (path,) if path else ()


def _mapping(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise TesterInputError(f"{where}: '{key}' must be an object of table -> definition")
    return value


def sample_paths() -> list[Path]:
    """The input files shipped in ``spark_destination/samples``, in the tester's (name) order."""
    root = resources.files("spark_destination") / "samples"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".json"))
