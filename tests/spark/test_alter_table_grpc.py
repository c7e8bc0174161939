"""AlterTable end to end through gRPC on local Spark + Iceberg: additions, in-place widenings,
rewrites with conversions, key changes, drops, refusals that leave the table exactly as it was,
retries after a failure between steps, and a 100k-row table surviving type and key changes."""

from __future__ import annotations

import time
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.planner import metadata
from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.faults import InjectedFault
from spark_destination.runtime.execute.table_loader import load_table
from tests.support.destination import NULL, Destination, Lake, column

pytestmark = pytest.mark.spark

SYNC = "2024-03-01T10:00:00.000Z"


def outcome(response) -> str:
    return response.WhichOneof("response")


def described(dest: Destination, name: str) -> list:
    response = dest.describe(name)
    assert outcome(response) == "table", response
    return list(response.table.columns)


def physical(lake: Lake, dest: Destination, name: str) -> list[tuple[str, str, bool]]:
    schema = lake.child().table(qualified(lake.catalog, dest.schema, name)).schema
    return [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]


def identifier_fields(lake: Lake, dest: Destination, name: str) -> set[str]:
    """The key the table itself declares, read from the catalog API (SHOW TBLPROPERTIES shows
    text, and redacts it): Iceberg's identifier fields; on Delta, which has none, the key
    columns of the table's ``fivetran.columns`` property."""
    ref = TableRef(catalog=lake.catalog, schema=dest.schema, name=name)
    loaded = load_table(lake.child(), ref)
    assert loaded is not None
    if lake.on_delta:
        declared = metadata.decode(loaded.properties.get(metadata.PROPERTY), table=name)
        return {column.name for column in declared.values() if column.primary_key}
    return set(loaded.identifier_fields)


def required_keys(lake: Lake, columns: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]]:
    """``physical`` columns as Iceberg keeps them; on Delta a rewrite (``CREATE OR REPLACE
    TABLE … AS SELECT``) leaves every column nullable, keys too (open-source Delta cannot make
    one NOT NULL afterwards, docs/operations.md), so the expected key columns are nullable."""
    return [(n, t, True) for n, t, _ in columns] if lake.on_delta else columns


def state(lake: Lake, dest: Destination, name: str) -> tuple:
    """Everything 'unchanged' means: rows, physical schema, Fivetran description, key fields
    and the current snapshot."""
    lake.settle()  # deferred mode: the table as merge mode would have it
    table = qualified(lake.catalog, dest.schema, name)
    session = lake.child()
    rows = sorted(map(repr, (r.asDict() for r in session.table(table).collect())))
    snapshots = lake.snapshot_count(dest.schema, name)
    return (
        rows,
        physical(lake, dest, name),
        described(dest, name),
        identifier_fields(lake, dest, name),
        snapshots,
    )


def seed(dest: Destination, name: str, columns: list, rows: list[list[str]]) -> None:
    assert outcome(dest.create(name, columns)) == "success"
    header = [c.name for c in columns]
    rows = [[NULL if v == "" else v for v in row] for row in rows]  # "" stands for NULL here
    files = [dest.write_file(header, rows, encrypted=False)]
    assert outcome(dest.write(name, columns, replace=files, encrypted=False)) == "success"


def by_id(lake: Lake, dest: Destination, name: str) -> dict[object, dict]:
    """The rows by id; fails if an id is stored twice (``Lake.by_key``): a rewrite that
    copied a row twice must not pass."""
    return lake.by_key(dest.schema, name)


def test_add_columns_and_widen_in_place_keep_every_row(dest: Destination, lake: Lake) -> None:
    columns = [
        column("id", "INT", pk=True),
        column("count", "INT"),
        column("ratio", "FLOAT"),
        column("amount", "DECIMAL", precision=10, scale=2),
        column("small", "SHORT"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    seed(dest, "t", columns, [["1", "7", "1.5", "12.34", "-3", SYNC], ["2", "", "", "", "", SYNC]])
    target = [
        column("id", "LONG", pk=True),
        column("count", "LONG"),
        column("ratio", "DOUBLE"),
        column("amount", "DECIMAL", precision=20, scale=2),
        column("small", "INT"),
        column("_fivetran_synced", "UTC_DATETIME"),
        column("doc", "JSON"),
        column("tiny", "SHORT"),
        column("t", "NAIVE_TIME"),
        column("price", "DECIMAL", precision=12, scale=3),
    ]
    assert outcome(dest.alter("t", target)) == "success"
    assert described(dest, "t") == target
    assert physical(lake, dest, "t")[:5] == required_keys(
        lake,
        [
            ("id", "bigint", False),
            ("count", "bigint", True),
            ("ratio", "double", True),
            ("amount", "decimal(20,2)", True),
            ("small", "int", True),
        ],
    )
    assert identifier_fields(lake, dest, "t") == {"id"}
    row = by_id(lake, dest, "t")[1]
    assert (row["count"], row["ratio"], row["amount"], row["small"]) == (
        7,
        1.5,
        Decimal("12.34"),
        -3,
    )
    assert row["doc"] is None and row["price"] is None

    # The same request again changes nothing (no new snapshot, same description).
    before = state(lake, dest, "t")
    assert outcome(dest.alter("t", target)) == "success"
    assert state(lake, dest, "t") == before

    # History tables take new columns the same way.
    history = [
        column("id", "INT", pk=True),
        column("_fivetran_start", "UTC_DATETIME", pk=True),
        column("_fivetran_end", "UTC_DATETIME"),
        column("_fivetran_active", "BOOLEAN"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    assert outcome(dest.create("h", history)) == "success"
    wider = [*history, column("extra", "DECIMAL", precision=8, scale=2)]
    assert outcome(dest.alter("h", wider)) == "success"
    assert described(dest, "h") == wider
    assert identifier_fields(lake, dest, "h") == {"id", "_fivetran_start"}


def test_rewrite_conversions_and_a_failing_one_leaves_the_table_as_it_was(
    dest: Destination, lake: Lake
) -> None:
    columns = [
        column("id", "INT", pk=True),
        column("s", "STRING"),
        column("n", "LONG"),
        column("d", "DOUBLE"),
        column("ts", "UTC_DATETIME"),
        column("nd", "NAIVE_DATE"),
        column("j", "JSON"),
        column("flag", "STRING"),
        column("amount", "DECIMAL", precision=10, scale=4),
    ]
    seed(
        dest,
        "t",
        columns,
        [
            [
                "1",
                "10",
                "5",
                "1.0",
                "2024-01-02T03:04:05Z",
                "2024-01-02",
                '{"a":1}',
                "true",
                "1.2345",
            ],
            ["2", "", "", "2.5", "", "", "", "no", ""],
        ],
    )
    target = [
        column("id", "INT", pk=True),
        column("s", "INT"),
        column("n", "STRING"),
        column("d", "DOUBLE"),
        column("ts", "NAIVE_DATETIME"),
        column("nd", "UTC_DATETIME"),
        column("j", "STRING"),
        column("flag", "BOOLEAN"),
        column("amount", "DECIMAL", precision=10, scale=2),
    ]
    assert outcome(dest.alter("t", target)) == "success"
    assert described(dest, "t") == target
    rows = by_id(lake, dest, "t")
    assert (rows[1]["s"], rows[1]["n"], rows[1]["j"], rows[1]["flag"]) == (10, "5", '{"a":1}', True)
    assert rows[1]["ts"] == datetime(2024, 1, 2, 3, 4, 5) and rows[1]["nd"] == datetime(2024, 1, 2)
    assert rows[1]["amount"] == Decimal("1.23") and rows[2]["flag"] is False
    assert (rows[2]["s"], rows[2]["n"], rows[2]["ts"]) == (None, None, None)
    assert identifier_fields(lake, dest, "t") == {"id"}
    assert required_keys(lake, [("id", "int", False)])[0] in physical(lake, dest, "t")

    # DOUBLE -> INT cannot keep 2.5: refused, naming column and value, nothing changed.
    before = state(lake, dest, "t")
    narrowed = [column("d", "INT") if c.name == "d" else c for c in target]
    response = dest.alter("t", narrowed)
    assert outcome(response) == "task"
    assert "'d'" in response.task.message and "'2.5'" in response.task.message
    assert "DOUBLE to INT" in response.task.message
    assert state(lake, dest, "t") == before

    # Types without any conversion are refused up front.
    impossible = [column("ts", "INT") if c.name == "ts" else c for c in target]
    response = dest.alter("t", impossible)
    assert outcome(response) == "task" and "NAIVE_DATETIME to INT" in response.task.message
    assert state(lake, dest, "t") == before


def test_primary_key_changes(dest: Destination, lake: Lake) -> None:
    columns = [
        column("id", "INT", pk=True),
        column("region", "STRING"),
        column("grp", "INT"),
        column("note", "STRING"),
    ]
    seed(dest, "t", columns, [["1", "eu", "1", "a"], ["2", "us", "1", "b"], ["3", "eu", "2", ""]])

    # A key that would not be unique: a task, and the table stays as it was.
    before = state(lake, dest, "t")
    not_unique = [column("id", "INT"), column("region", "STRING", pk=True), *columns[2:]]
    response = dest.alter("t", not_unique)
    assert outcome(response) == "task"
    assert "not unique" in response.task.message and "'region'" in response.task.message
    assert state(lake, dest, "t") == before
    # A key column holding NULL: a task too.
    with_null = [*columns[:3], column("note", "STRING", pk=True)]
    response = dest.alter("t", with_null)
    assert outcome(response) == "task" and "NULL" in response.task.message
    assert state(lake, dest, "t") == before

    # Add a key column: the table is rewritten with it required.
    two = [column("id", "INT", pk=True), column("region", "STRING", pk=True), *columns[2:]]
    assert outcome(dest.alter("t", two)) == "success"
    assert described(dest, "t") == two
    assert identifier_fields(lake, dest, "t") == {"id", "region"}
    assert required_keys(lake, [("region", "string", False)])[0] in physical(lake, dest, "t")

    # Remove one again (in place) and change the type of the remaining one.
    retyped = [column("id", "STRING", pk=True), column("region", "STRING"), *columns[2:]]
    assert outcome(dest.alter("t", retyped)) == "success"
    assert described(dest, "t") == retyped
    assert identifier_fields(lake, dest, "t") == {"id"}
    assert physical(lake, dest, "t")[:2] == required_keys(
        lake, [("id", "string", False), ("region", "string", True)]
    )
    assert sorted(by_id(lake, dest, "t")) == ["1", "2", "3"]

    # A new key column: only possible while no row would hold NULL in it.
    added = [*retyped, column("code", "STRING", pk=True)]
    response = dest.alter("t", added)
    assert outcome(response) == "task" and "'code'" in response.task.message
    assert outcome(dest.alter("e", [column("id", "INT", pk=True)])) == "task"  # missing table
    assert outcome(dest.create("e", [column("id", "INT", pk=True)])) == "success"
    empty_added = [column("id", "INT", pk=True), column("code", "STRING", pk=True)]
    assert outcome(dest.alter("e", empty_added)) == "success"
    assert identifier_fields(lake, dest, "e") == {"id", "code"}


def test_drop_columns_only_when_asked_and_bad_requests_change_nothing(
    dest: Destination, lake: Lake
) -> None:
    columns = [column("id", "INT", pk=True), column("a", "STRING"), column("b", "INT")]
    seed(dest, "t", columns, [["1", "x", "2"]])
    before = state(lake, dest, "t")
    assert outcome(dest.alter("t", columns[:2])) == "success"
    assert state(lake, dest, "t") == before
    assert outcome(dest.alter("t", columns[:2], drop_columns=True)) == "success"
    assert described(dest, "t") == columns[:2]
    assert lake.rows(dest.schema, "t") == [{"id": 1, "a": "x"}]

    before = state(lake, dest, "t")
    clash = dest.alter("t", [*columns[:2], column("A", "STRING")])
    assert outcome(clash) == "task" and "differs only in case" in clash.task.message
    unspecified = dest.alter("t", [*columns[:2], column("c", "UNSPECIFIED")])
    assert outcome(unspecified) == "task" and "'c'" in unspecified.task.message
    assert state(lake, dest, "t") == before


def test_a_failure_between_steps_then_a_retry_converges(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    if lake.on_delta:
        pytest.skip(
            "the steps it fails are Iceberg's (identifier fields, then properties); on Delta the "
            "rewrite is one statement, and test_delta.py fails a request after its commit"
        )
    columns = [column("id", "INT", pk=True), column("code", "STRING"), column("v", "INT")]
    seed(dest, "t", columns, [["1", "10", "5"], ["2", "20", "6"]])
    target = [column("id", "INT", pk=True), column("code", "INT", pk=True), column("v", "LONG")]
    real_sql = Executor.sql
    failures = {"set identifier fields": 1, "set properties": 1}

    def flaky(self: Executor, text: str, *, what: str, **kwargs: Any) -> list[object]:
        for prefix, left in failures.items():
            if what.startswith(prefix) and left:
                failures[prefix] = left - 1
                raise InjectedFault("injected failure")
        return real_sql(self, text, what=what, **kwargs)

    monkeypatch.setattr(Executor, "sql", flaky)
    before = state(lake, dest, "t")
    # 1st attempt: the rewrite commits, setting the identifier fields fails: the rewrite is
    # undone, the table is exactly as it was.
    assert outcome(dest.alter("t", target)) == "task"
    assert state(lake, dest, "t") == before
    # 2nd attempt: planned again from the same state; fails on the last step (the property):
    # undone again.
    assert outcome(dest.alter("t", target)) == "task"
    assert state(lake, dest, "t") == before
    assert described(dest, "t") != target
    # 3rd attempt converges; a 4th is a no-op.
    assert outcome(dest.alter("t", target)) == "success"
    done = state(lake, dest, "t")
    assert done[2] == target and done[3] == {"id", "code"}
    assert done[1] == [("id", "int", False), ("code", "int", False), ("v", "bigint", True)]
    assert lake.rows(dest.schema, "t", order_by="id") == [
        {"id": 1, "code": 10, "v": 5},
        {"id": 2, "code": 20, "v": 6},
    ]
    assert outcome(dest.alter("t", target)) == "success"
    assert state(lake, dest, "t") == done


def test_100k_rows_survive_a_type_change_and_key_changes(dest: Destination, lake: Lake) -> None:
    n = 100_000
    columns = [
        column("id", "LONG", pk=True),
        column("code", "STRING"),
        column("amount", "DECIMAL", precision=12, scale=2),
        column("note", "STRING"),
        column("day", "NAIVE_DATE"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    rows = [
        [
            str(i),
            str(i * 7),
            f"{i}.{i % 100:02d}",
            f"note {i}" if i % 3 else "",
            str(date(2024, 1, 1 + i % 28)),
            SYNC,
        ]
        for i in range(n)
    ]
    seed(dest, "big", columns, rows)
    lake.settle()  # deferred mode: the seed's rows are pending until a flush
    table = qualified(lake.catalog, dest.schema, "big")
    session = lake.child()
    assert session.table(table).count() == n
    original = lake.current_version(dest.schema, "big")

    # code STRING -> LONG and joins the key; day NAIVE_DATE -> UTC_DATETIME (rewrite).
    target = [
        column("id", "LONG", pk=True),
        column("code", "LONG", pk=True),
        column("amount", "DECIMAL", precision=12, scale=2),
        column("note", "STRING"),
        column("day", "UTC_DATETIME"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    started = time.perf_counter()
    assert outcome(dest.alter("big", target)) == "success"
    rewrite_seconds = time.perf_counter() - started
    expected = (
        f"SELECT id, CAST(code AS BIGINT) AS code, amount, note, CAST(day AS TIMESTAMP) AS day, "
        f"_fivetran_synced FROM {table} VERSION AS OF {original}"  # noqa: S608 - test
    )
    session = lake.child()
    assert session.sql(f"{expected} EXCEPT ALL SELECT * FROM {table}").count() == 0  # noqa: S608
    assert session.sql(f"SELECT * FROM {table} EXCEPT ALL {expected}").count() == 0  # noqa: S608
    assert session.table(table).count() == n
    assert identifier_fields(lake, dest, "big") == {"id", "code"}

    # Then widen amount in place and drop code from the key again.
    final = [
        column("id", "LONG", pk=True),
        column("code", "LONG"),
        column("amount", "DECIMAL", precision=18, scale=2),
        *target[3:],
    ]
    started = time.perf_counter()
    assert outcome(dest.alter("big", final)) == "success"
    in_place_seconds = time.perf_counter() - started
    session = lake.child()
    assert session.sql(f"{expected} EXCEPT ALL SELECT * FROM {table}").count() == 0  # noqa: S608
    assert session.sql(f"SELECT * FROM {table} EXCEPT ALL {expected}").count() == 0  # noqa: S608
    assert described(dest, "big") == final
    assert identifier_fields(lake, dest, "big") == {"id"}
    print(f"100k rows: rewrite {rewrite_seconds:.1f} s, in-place {in_place_seconds:.1f} s")
