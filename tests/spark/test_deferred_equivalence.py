"""Deferred mode gives exactly merge mode's table: random sequences of WriteBatch requests
(replace, update with unmodified values, hard and soft deletes, keys repeated inside a batch
and across batches, NULLs, requests that leave columns out, every Fivetran type) are applied
to one table in merge mode and to another in deferred mode, with flushes at random points, some
of them interrupted between the MERGE's commit and the clean-up (as a kill leaves them; the
next request finishes them); then both tables must be equal, row for row.

Few examples in CI (each is a dozen Spark requests); ``SPARK_DESTINATION_DEFERRED_EXAMPLES``
runs more. The explicit examples are the sequences that break a naive fold: delete then upsert;
upsert, delete, then update; an update before a new key's first upsert; updates chaining.
"""

from __future__ import annotations

import base64
import contextlib
import enum
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
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
from spark_destination.core.requests import BatchFiles, CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.runtime.execute import faults
from spark_destination.service.engine import Engine
from spark_destination.tester.batch_writer import write_batch_file
from tests.support.destination import NULL, UNMOD, Lake, mode_configuration

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("SPARK_DESTINATION_DEFERRED_EXAMPLES", "4"))
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
POOLS = {c.name: v for c, v in VALUES.items()}
KEYS = [(str(i), region) for i in range(3) for region in ("a", "b")]
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
    flush: Flush = Flush.NO


def _cells(named: Sequence[str]) -> st.SearchStrategy[dict[str, str]]:
    """A value, NULL or "unmodified" per named column (replace files may hold "unmodified"
    too: merge mode keeps the stored value there, and inserts NULL)."""
    return st.fixed_dictionaries(
        {name: st.sampled_from((*POOLS[name], NULL, UNMOD)) for name in named}
    )


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    every = draw(st.booleans())
    named = OTHERS if every else tuple(draw(st.sets(st.sampled_from(OTHERS), max_size=5)))
    named = tuple(n for n in OTHERS if n in named)
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
        flush=draw(st.sampled_from(Flush)),
    )


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


@contextlib.contextmanager
def _killed_before_the_clean_up() -> Iterator[None]:
    """As a SIGKILL between the MERGE's commit and the clean-up leaves it: nothing restored."""
    with (
        mock.patch(
            "spark_destination.runtime.execute.pending.restored_on_failure",
            lambda *_: contextlib.nullcontext(),
        ),
        faults.inject("before 1:ClearPendingOp", table="t"),
        pytest.raises(faults.InjectedFault),
    ):
        yield


def _request(schema: str, batch: Batch, folder: Path, number: int) -> WriteBatchRequest:
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
    table = Table(name="t", columns=(*KEY, *(c for c in VALUES if c.name in batch.named)))
    return WriteBatchRequest(
        schema=schema,
        table=table,
        files=BatchFiles(params=PARAMS, **files),  # type: ignore[arg-type]
    )


def _rows(lake: Lake, schema: str) -> list[tuple[Any, ...]]:
    frame = lake.child().table(qualified(lake.catalog, schema, "t"))
    return sorted((tuple(r) for r in frame.collect()), key=lambda r: (r[0], r[1]))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=st.lists(batches(), min_size=1, max_size=4))
@example(sequence=TRICKY)
def test_deferred_mode_gives_merge_modes_table(
    sequence: list[Batch],
    engine: Engine,
    lake: Lake,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    number = next(_examples)
    folder = Path(tmp_path_factory.mktemp("equivalence"))
    merged, deferred = f"eq_{number}_merge", f"eq_{number}_deferred"
    for schema, configuration in ((merged, MERGE), (deferred, DEFERRED)):
        engine.apply(
            configuration, CreateTableRequest(schema=schema, table=Table(name="t", columns=COLUMNS))
        )
    for index, batch in enumerate(sequence):
        engine.apply(MERGE, _request(merged, batch, folder, index))
        engine.apply(DEFERRED, _request(deferred, batch, folder, index))
        if batch.flush is Flush.YES:
            engine.flush(DEFERRED, deferred, "t")
        elif batch.flush is Flush.INTERRUPTED:
            with _killed_before_the_clean_up():
                engine.flush(DEFERRED, deferred, "t")
    engine.flush(DEFERRED, deferred, "t")
    assert _rows(lake, deferred) == _rows(lake, merged)
