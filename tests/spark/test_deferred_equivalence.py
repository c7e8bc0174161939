"""Deferred mode gives exactly merge mode's tables: random sequences of requests to two tables
are applied in merge mode to one schema and in deferred mode to another, then both schemas must
hold the same tables, row for row and column for column. The WriteBatch requests hold replace,
update with unmodified values, hard and soft deletes, keys repeated inside a batch and across
batches, NULLs, requests that leave columns out, every Fivetran type; AlterTable (a column
added, widened, converted by a rewrite, dropped) and Truncate (hard and soft) come between them.
Deferred mode flushes at random points, some flushes interrupted between the MERGE's commit and
the clean-up (as a kill leaves them; the next request finishes them).

A flush is interrupted exactly when rows are pending: with nothing pending (no batch since the
last flush, or only empty ones) it returns before the MERGE, and the test checks that it then
reaches no boundary; every flush must fold exactly the rows written since the one before.

CI runs ``EXAMPLES`` random sequences (a new draw every run, so runs explore; a failure prints
the ``@reproduce_failure`` blob that replays it); ``SPARK_DESTINATION_DEFERRED_EXAMPLES`` runs
more (a few hundred for a long run). The explicit example is the sequence that breaks a naive
fold: delete then upsert; upsert, delete, then update; an update before a new key's first
upsert; updates chaining.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import enum
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.core.requests import (
    AlterTableRequest,
    BatchFiles,
    CreateTableRequest,
    SoftTruncate,
    TableName,
    TruncateRequest,
    WriteBatchRequest,
)
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine
from spark_destination.replay.batch_writer import write_batch_file
from spark_destination.runtime.execute import faults
from tests.support.destination import NULL, UNMOD, Lake, mode_configuration

# One write mode is enough: it sets both modes itself.
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

EXAMPLES = int(os.environ.get("SPARK_DESTINATION_DEFERRED_EXAMPLES", "5"))
PARAMS = FileParams(
    compression=Compression.OFF,
    encryption=Encryption.NONE,
    null_string=NULL,
    unmodified_string=UNMOD,
)
MERGE, DEFERRED = mode_configuration("merge"), mode_configuration("deferred")
KEY = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="region", type=DataType.STRING, primary_key=True),
)
# Every Fivetran type, with values that round-trip (CSV text).
VALUES: dict[Column, tuple[str, ...]] = {
    Column(name="flag", type=DataType.BOOLEAN): ("true", "false"),
    Column(name="small", type=DataType.SHORT): ("-32768", "7"),
    Column(name="count", type=DataType.INT): ("2147483647", "-1"),
    Column(name="big", type=DataType.LONG): ("9007199254740993", "0"),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)): (
        "12345678901234.5678",
        "-0.0001",
    ),
    Column(name="ratio", type=DataType.FLOAT): ("1.5", "-2.25"),
    Column(name="score", type=DataType.DOUBLE): ("-2.2250738585072014E-308", "3.14"),
    Column(name="day", type=DataType.NAIVE_DATE): ("2007-12-03", "0001-01-01"),
    Column(name="local", type=DataType.NAIVE_DATETIME): (
        "2007-12-03T10:15:30",
        "2024-01-02T03:04:05.123456",
    ),
    Column(name="at", type=DataType.UTC_DATETIME): (
        "2023-10-27T15:00:00.123456789Z",
        "1970-01-01T00:00:00Z",
    ),
    Column(name="payload", type=DataType.BINARY): (
        base64.b64encode(b"\x00\xff").decode(),
        base64.b64encode(b"x").decode(),
    ),
    Column(name="doc", type=DataType.XML): ("<a>x</a>", "<b/>"),
    Column(name="name", type=DataType.STRING): ('héllo, "world"\nline', ""),
    Column(name="attrs", type=DataType.JSON): ('{"k": [1, 2]}', "{}"),
    Column(name="clock", type=DataType.NAIVE_TIME): ("10:15:30", "23:59:59.5"),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME): (
        "2024-03-01T10:00:00.000Z",
        "2024-03-02T10:00:00.000Z",
    ),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN): ("false", "true"),
}
COLUMNS = (*KEY, *VALUES)
OTHERS = tuple(c.name for c in VALUES)
# A column AlterTable may add, and its values.
NOTE = Column(name="note", type=DataType.STRING)
POOLS = {c.name: v for c, v in VALUES.items()} | {NOTE.name: ("n1", "")}
# Columns AlterTable may drop (the system columns stay: Truncate needs them).
DROPPABLE = ("ratio", "doc", "clock", NOTE.name)
KEYS = [(str(i), region) for i in range(3) for region in ("a", "b")]
TABLES = ("t", "u")
# Truncate cut-offs: between the two ``_fivetran_synced`` values, and after both.
CUTOFFS = (datetime(2024, 3, 2, tzinfo=UTC), datetime(2024, 3, 3, tzinfo=UTC))
_examples = itertools.count()


class Flush(enum.Enum):
    NO = "no"
    YES = "yes"
    # Killed after the MERGE committed, before the clean-up.
    INTERRUPTED = "interrupted"


Row = tuple[tuple[str, str], dict[str, str]]


@dataclass(frozen=True)
class Batch:
    named: tuple[str, ...]  # the value columns the request names
    replace: tuple[Row, ...] = ()
    update: tuple[Row, ...] = ()
    delete: tuple[tuple[str, str], ...] = ()
    flush: Flush = Flush.NO  # deferred mode flushes the table after the batch

    @property
    def rows(self) -> int:
        return len(self.replace) + len(self.update) + len(self.delete)


@dataclass(frozen=True)
class Write:
    table: str
    batch: Batch
    columns: tuple[Column, ...]  # the table's value columns when the request is sent


@dataclass(frozen=True)
class Alter:
    table: str
    columns: tuple[Column, ...]  # the value columns the request declares
    drop: bool = False


@dataclass(frozen=True)
class Truncate:
    table: str
    before: datetime
    soft: bool


Step = Write | Alter | Truncate


def _cells(named: Sequence[str]) -> st.SearchStrategy[dict[str, str]]:
    """A value, NULL or "unmodified" per named column (replace files may hold "unmodified"
    too: merge mode keeps the stored value there, and inserts NULL)."""
    return st.fixed_dictionaries(
        {name: st.sampled_from((*POOLS[name], NULL, UNMOD)) for name in named}
    )


def _batch(draw: st.DrawFn, others: Sequence[str]) -> Batch:
    every = draw(st.booleans())
    named = tuple(others) if every else tuple(draw(st.sets(st.sampled_from(others), max_size=5)))
    named = tuple(n for n in others if n in named)
    key = st.sampled_from(KEYS)
    row = st.tuples(key, _cells(named))
    # A soft delete: an update setting only ``_fivetran_deleted``.
    soft = {n: "true" if n == "_fivetran_deleted" else UNMOD for n in named}
    update = st.one_of(row, st.tuples(key, st.just(soft)))
    return Batch(
        named=named,
        replace=tuple(draw(st.lists(row, max_size=3))),
        update=tuple(draw(st.lists(update, max_size=3))),
        delete=tuple(draw(st.lists(key, max_size=2))),
        # Half the batches leave their rows pending, so flushes fold several batches and
        # AlterTable and Truncate find rows pending (and must flush them first).
        flush=draw(st.sampled_from((Flush.NO, Flush.NO, Flush.YES, Flush.INTERRUPTED))),
    )


def _alterations(columns: tuple[Column, ...]) -> list[Alter]:
    """The AlterTable requests the generator may send to a table with value ``columns``
    (``table`` is filled in by the caller): a column added, INT widened in place, LONG
    converted to STRING (a rewrite of the table), a column dropped."""
    names = {c.name: c for c in columns}
    retyped = {"count": DataType.LONG, "big": DataType.STRING}
    changes: list[Alter] = []
    if NOTE.name not in names:
        changes.append(Alter(table="", columns=(*columns, NOTE)))
    for name, to in retyped.items():
        if name in names and names[name].type is not to:
            changes.append(
                Alter(
                    table="",
                    columns=tuple(dataclasses.replace(c, type=to) if c.name == name else c
                                  for c in columns),
                )
            )  # fmt: skip
    changes.extend(
        Alter(table="", columns=tuple(c for c in columns if c.name != name), drop=True)
        for name in DROPPABLE
        if name in names
    )
    return changes


@st.composite
def sequences(draw: st.DrawFn) -> list[Step]:
    """Steps on ``TABLES``; each WriteBatch declares its table's columns as they are then."""
    columns = dict.fromkeys(TABLES, tuple(VALUES))
    steps: list[Step] = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        table = draw(st.sampled_from(TABLES))
        # Mostly writes (shrinking moves towards them); one step in five an AlterTable, one in
        # five a Truncate.
        kind = draw(st.integers(min_value=0, max_value=9))
        alterations = _alterations(columns[table])
        if kind in (6, 7) and alterations:
            alter = dataclasses.replace(draw(st.sampled_from(alterations)), table=table)
            columns[table] = alter.columns
            steps.append(alter)
        elif kind in (8, 9):
            before, soft = draw(st.sampled_from(CUTOFFS)), draw(st.booleans())
            steps.append(Truncate(table=table, before=before, soft=soft))
        else:
            batch = _batch(draw, [c.name for c in columns[table]])
            steps.append(Write(table=table, batch=batch, columns=columns[table]))
    return steps


def _full(key: tuple[str, str], **values: str) -> Row:
    return key, {n: values.get(n, POOLS[n][0]) for n in OTHERS}


def _partial(key: tuple[str, str], **values: str) -> Row:
    return key, {n: values.get(n, UNMOD) for n in OTHERS}


A, B, C = ("0", "a"), ("1", "b"), ("2", "a")
WITHOUT_COUNT = tuple(n for n in OTHERS if n != "count")
# An update of a new key before its first upsert, which leaves a column out (the flush of these
# is interrupted after its MERGE: folding them again would set that column); delete then
# upsert, across and inside batches; upsert, updates, delete in one batch; updates chaining
# and updates of a deleted key.
TRICKY = [
    Batch(named=OTHERS, replace=(_full(A), _full(B, count="-1"))),
    Batch(named=OTHERS, update=(_partial(C, count="7"), _partial(A, name="x"))),
    Batch(named=WITHOUT_COUNT, replace=(_full(C),), flush=Flush.INTERRUPTED),
    Batch(named=OTHERS, delete=(A,)),
    Batch(named=OTHERS, replace=(_full(A, name=""),), update=(_partial(B, small="7"),)),
    Batch(
        named=WITHOUT_COUNT,
        replace=((C, {n: POOLS[n][1] for n in OTHERS}), _full(B)),
        update=(_partial(B, doc="<b/>"), _partial(B, name=NULL)),
        delete=(B,),
    ),
    Batch(
        named=OTHERS,
        update=(_partial(B, count="0"), _partial(C, day=NULL), _partial(C, day="2007-12-03")),
        flush=Flush.YES,
    ),
]

ALL = tuple(VALUES)
# ``count`` widened in place (INT to LONG), ``big`` converted by a rewrite (LONG to STRING).
RETYPED = tuple(
    dataclasses.replace(
        c, type={"count": DataType.LONG, "big": DataType.STRING}.get(c.name, c.type)
    )
    for c in ALL
)
# AlterTable and Truncate with rows pending in both tables (each must flush its own table
# first, and only it): a soft then a hard Truncate, a column dropped, two retyped, one added,
# each followed by writes.
SCHEMA_CHANGES: list[Step] = [
    Write(table="t", batch=Batch(named=OTHERS, replace=(_full(A), _full(B))), columns=ALL),
    Write(table="u", batch=Batch(named=OTHERS, replace=(_full(A), _full(C))), columns=ALL),
    Write(table="t", batch=Batch(named=OTHERS, update=(_partial(B, name="x"),)), columns=ALL),
    Truncate(table="t", before=CUTOFFS[0], soft=True),
    Write(
        table="t",
        batch=Batch(
            named=OTHERS, replace=(_full(C, _fivetran_synced=POOLS["_fivetran_synced"][1]),)
        ),
        columns=ALL,
    ),
    Alter(table="u", columns=tuple(c for c in ALL if c.name != "doc"), drop=True),
    Write(table="t", batch=Batch(named=OTHERS, delete=(A,)), columns=ALL),
    Truncate(table="t", before=CUTOFFS[0], soft=False),
    Write(table="t", batch=Batch(named=OTHERS, replace=(_full(A),)), columns=ALL),
    Alter(table="t", columns=RETYPED),
    Write(
        table="t",
        batch=Batch(named=OTHERS, update=(_partial(A, count="-1", big="0"),)),
        columns=RETYPED,
    ),
    Alter(table="u", columns=(*(c for c in ALL if c.name != "doc"), NOTE)),
    Write(
        table="u",
        batch=Batch(named=("note",), update=((A, {"note": "n1"}),), flush=Flush.INTERRUPTED),
        columns=(*(c for c in ALL if c.name != "doc"), NOTE),
    ),
]


@contextlib.contextmanager
def _killed_before_the_clean_up(table: str) -> Iterator[None]:
    """As a SIGKILL between the MERGE's commit and the clean-up leaves it: nothing restored."""
    with (
        mock.patch(
            "spark_destination.runtime.execute.deferred.restored_on_failure",
            lambda *_: contextlib.nullcontext(),
        ),
        faults.inject("before 1:ClearPendingOp", table=table),
        pytest.raises(faults.InjectedFault),
    ):
        yield


def _request(schema: str, write: Write, folder: Path, number: int) -> WriteBatchRequest:
    batch = write.batch
    header = ["id", "region", *batch.named]
    files: dict[str, tuple[str, ...]] = {}
    kinds: list[tuple[str, list[list[str]]]] = [
        ("replace", [[*k, *(v[n] for n in batch.named)] for k, v in batch.replace]),
        ("update", [[*k, *(v[n] for n in batch.named)] for k, v in batch.update]),
        ("delete", [[*k, *(NULL for _ in batch.named)] for k in batch.delete]),
    ]
    for kind, rows in kinds:
        if rows:
            path = folder / f"{number}_{kind}.csv"
            write_batch_file(path, header, rows, params=PARAMS, key=None)
            files[kind] = (str(path),)
    named = tuple(c for c in write.columns if c.name in batch.named)
    return WriteBatchRequest(
        schema=schema,
        table=Table(name=write.table, columns=(*KEY, *named)),
        files=BatchFiles(params=PARAMS, **files),  # type: ignore[arg-type]
    )


def _change(schema: str, step: Alter | Truncate) -> AlterTableRequest | TruncateRequest:
    if isinstance(step, Alter):
        table = Table(name=step.table, columns=(*KEY, *step.columns))
        return AlterTableRequest(schema=schema, table=table, drop_columns=step.drop)
    return TruncateRequest(
        target=TableName(schema=schema, table=step.table),
        synced_column="_fivetran_synced",
        utc_delete_before=step.before,
        soft=SoftTruncate(deleted_column="_fivetran_deleted") if step.soft else None,
    )


def _flush(
    engine: Engine,
    configuration: dict[str, str],
    schema: str,
    table: str,
    how: Flush,
    pending: int,
) -> None:
    """Flush deferred mode's ``table``, interrupted if ``how`` says so and rows are pending;
    it must fold exactly the ``pending`` rows written since the last flush."""
    if pending and how is Flush.INTERRUPTED:
        event("interrupted flush")
        with _killed_before_the_clean_up(table):
            engine.flush(configuration, schema, table)
        return
    if pending:
        outcome = engine.flush(configuration, schema, table)
    else:
        # The flush returns before the MERGE, so it reaches no boundary to fail at.
        with faults.inject("before 1:ClearPendingOp", table=table) as hits:
            outcome = engine.flush(configuration, schema, table)
        assert not hits
    assert (outcome.rows if outcome else 0) == pending


def _table(lake: Lake, schema: str, table: str) -> tuple[list[tuple[str, str]], list[Any]]:
    """The table's columns (name, type) and its rows sorted by key."""
    frame = lake.child().table(qualified(lake.catalog, schema, table))
    rows = sorted((tuple(r) for r in frame.collect()), key=lambda r: (r[0], r[1]))
    return frame.dtypes, rows


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(steps=sequences())
@example(steps=[Write(table="t", batch=b, columns=ALL) for b in TRICKY])
@example(steps=SCHEMA_CHANGES)
def test_deferred_mode_gives_merge_modes_table(
    steps: list[Step],
    engine: Engine,
    lake: Lake,
    tmp_path_factory: pytest.TempPathFactory,
    catalog_configuration: dict[str, str],
) -> None:
    number = next(_examples)
    folder = Path(tmp_path_factory.mktemp("equivalence"))
    merged, deferred = f"eq_{number}_merge", f"eq_{number}_deferred"
    # Each mode on the test's catalog.
    merge = {**catalog_configuration, **MERGE}
    defer = {**catalog_configuration, **DEFERRED}
    for schema, configuration in ((merged, merge), (deferred, defer)):
        for name in TABLES:
            table = Table(name=name, columns=COLUMNS)
            engine.apply(configuration, CreateTableRequest(schema=schema, table=table))
    # Rows written to each table in deferred mode since its last flush (by the model: every
    # row of every file is appended; AlterTable and Truncate flush first).
    pending = dict.fromkeys(TABLES, 0)
    for index, step in enumerate(steps):
        event(type(step).__name__)  # --hypothesis-show-statistics: what the examples held
        if isinstance(step, Write):
            engine.apply(merge, _request(merged, step, folder, index))
            engine.apply(defer, _request(deferred, step, folder, index))
            pending[step.table] += step.batch.rows
            if step.batch.flush is not Flush.NO:
                _flush(engine, defer, deferred, step.table, step.batch.flush, pending[step.table])
                pending[step.table] = 0
        else:
            engine.apply(merge, _change(merged, step))
            engine.apply(defer, _change(deferred, step))
            pending[step.table] = 0
    for name in TABLES:
        _flush(engine, defer, deferred, name, Flush.YES, pending[name])
        assert _table(lake, deferred, name) == _table(lake, merged, name)
