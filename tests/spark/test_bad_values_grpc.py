"""bad_value_policy end to end: under ``null`` a non-key value its column cannot hold is
written as NULL, the row kept, every change recorded in the schema's changes table and the
request answers a Warning; under ``fail`` (the default) the same batch fails and nothing
changes. Keys, undecodable files and malformed rows fail under
either policy (``test_bad_input_grpc``)."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.engine import deferred as deferred_module
from spark_destination.engine import engine as engine_module
from spark_destination.engine.engine import Engine
from spark_destination.replay.batch_writer import new_key, write_parquet_table
from spark_destination.runtime.execute import faults
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.spark.conftest import CATALOG
from tests.support.destination import (
    DELTA,
    DELTA_CATALOG,
    NULL,
    UNMOD,
    WRITE_MODES,
    Destination,
    Lake,
    column,
)

pytestmark = [
    pytest.mark.spark,
    # Iceberg on the run's catalog, and Delta Lake tables.
    pytest.mark.parametrize("catalog_kind", (CATALOG, DELTA), indirect=True),
]

# The tests that also run on Delta in CI (the others with SPARK_DESTINATION_DELTA_ALL=1):
# nulled and recorded values, and history batches. A failed request's restore on Delta runs in
# CI in test_delta.py.
DELTA_IN_CI = {
    "test_every_bad_value_is_nulled_recorded_and_answered_with_a_warning",
    "test_history_batches_null_and_record_bad_values",
}
NULLS = {"bad_value_policy": "null"}
CHANGES = "sd__changes"
SYNC1 = "2024-03-01T10:00:00.000Z"
SYNC2 = "2024-03-02T10:00:00.000Z"
# Spark reads TIMESTAMP values back as naive datetimes in its session zone, UTC.
T1 = datetime(2024, 3, 1, 10)
T2 = datetime(2024, 3, 2, 10)

COLUMNS = [
    column("id", "INT", pk=True),
    column("b", "BOOLEAN"),
    column("sh", "SHORT"),
    column("i", "INT"),
    column("l", "LONG"),
    column("dec", "DECIMAL", precision=10, scale=2),
    column("f", "FLOAT"),
    column("d", "DOUBLE"),
    column("nd", "NAIVE_DATE"),
    column("ndt", "NAIVE_DATETIME"),
    column("utc", "UTC_DATETIME"),
    column("t", "NAIVE_TIME"),
    column("s", "STRING"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
GOOD = {
    "b": "true",
    "sh": "7",
    "i": "8",
    "l": "9",
    "dec": "1.50",
    "f": "1.5",
    "d": "2.5",
    "nd": "2024-01-02",
    "ndt": "2024-01-02T03:04:05",
    "utc": "2024-01-02T03:04:05Z",
    "t": "03:04:05",
    "s": "text",
}
GOOD_TYPED = {
    "b": True,
    "sh": 7,
    "i": 8,
    "l": 9,
    "dec": Decimal("1.50"),
    "f": 1.5,
    "d": 2.5,
    "nd": date(2024, 1, 2),
    "ndt": datetime(2024, 1, 2, 3, 4, 5),
    "utc": datetime(2024, 1, 2, 3, 4, 5),
    "t": "03:04:05",
    "s": "text",
}
# Per column, bad values (each marked so no value may leak) and the reason recorded.
BAD = {
    "b": ("yes", "not a valid BOOLEAN"),
    "sh": ("40000", "SMALLINT overflow"),
    "i": ("12x", "not a valid INT"),
    "l": ("9223372036854775808", "BIGINT overflow"),
    "dec": ("123456789.5", "DECIMAL(10, 2) overflow"),
    "f": ("3.5E+38", "FLOAT overflow"),
    "d": ("abc", "not a valid DOUBLE"),
    "nd": ("2021-02-30", "not a valid DATE"),
    "ndt": ("2021-13-01T00:00:00", "not a valid TIMESTAMP_NTZ"),
    "utc": ("2021-02-03T25:00:00Z", "not a valid TIMESTAMP"),
    "t": ("25:61:00", "not a valid time of day (HH:MM[:SS[.fraction]])"),
}


def outcome(response: object) -> str:
    return str(response.WhichOneof("response"))  # type: ignore[attr-defined]


def row(key: int, synced: str = SYNC1, **values: str) -> list[str]:
    full = {"id": str(key), **GOOD, "_fivetran_synced": synced, **values}
    return [full[name] for name in HEADER]


def typed(key: int, synced: datetime = T1, **values: object) -> dict[str, object]:
    return {"id": key, **GOOD_TYPED, "_fivetran_synced": synced, **values}


def lenient(dest: Destination) -> Destination:
    dest.configuration = {**dest.configuration, **NULLS}
    return dest


def rows(lake: Lake, dest: Destination, table: str = "t") -> list[dict[str, object]]:
    return lake.rows(dest.schema, table, order_by="id")


def records(lake: Lake, dest: Destination) -> list[dict[str, object]]:
    """The changes table without its ``recorded_at`` (checked separately), in a stable order."""
    found = lake.rows(dest.schema, CHANGES)
    for record in found:
        assert isinstance(record.pop("recorded_at"), datetime)
    return sorted(found, key=_record_order)


def _record_order(record: dict[str, object]) -> tuple[str, str, int, str]:
    return (
        str(record["table_name"]),
        str(record["batch_file"]),
        int(record["file_row"]),  # type: ignore[call-overload]
        str(record["column_name"]),
    )


def record(
    path: str, file_row: int, name: str, key: str, *, synced: datetime = T1, table: str = "t"
) -> dict[str, object]:
    return {
        "table_name": table,
        "column_name": name,
        "change": "NULLED",
        "reason": BAD[name][1],
        "batch_file": path,
        "file_row": file_row,
        "primary_key": key,
        "_fivetran_synced": synced,
    }


# Generous: the machine may be loaded; it bounds a hang, it does not measure anything.
BARRIER_SECONDS = 600.0


def committing_op(dest: Destination) -> str:
    """The step that commits a WriteBatch's rows, after its records: the MERGE into the table,
    or in deferred mode the append to the intermediate table (the flush merges later)."""
    return "AppendPendingOp" if dest.deferred else "MergeBatchOp"


@contextlib.contextmanager
def failing_before(op: str) -> Iterator[list[faults.Boundary]]:
    """Fail once at the first step boundary before an ``op`` statement; yields the hits."""
    hits: list[faults.Boundary] = []

    def hook(point: faults.Boundary) -> None:
        if not hits and point.op == op:
            hits.append(point)
            raise faults.InjectedFault(f"injected fault {point.name}")

    with faults.installed(hook):
        yield hits


def changes_exist(lake: Lake, dest: Destination) -> bool:
    name = qualified(lake.catalog, dest.schema, CHANGES)
    return bool(lake.child().catalog.tableExists(name))


@pytest.mark.parametrize("dest", WRITE_MODES, indirect=True)
def test_every_bad_value_is_nulled_recorded_and_answered_with_a_warning(
    dest: Destination, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    replace = dest.write_file(
        HEADER,
        [row(1), *(row(n, **{name: bad}) for n, (name, (bad, _)) in enumerate(BAD.items(), 2))],
    )
    # An update file: a bad value NULLs the column (not "unmodified"); others stay unmodified.
    update = dest.write_file(HEADER, [row(1, SYNC2, i="x9", s=UNMOD, b=NULL)])
    response = dest.write("t", COLUMNS, replace=[replace], update=[update])

    assert outcome(response) == "warning", response
    expected = [typed(1, T2, i=None, b=None)] + [
        typed(n, **{name: None}) for n, name in enumerate(BAD, 2)
    ]
    assert rows(lake, dest) == expected
    path = replace[0]
    assert records(lake, dest) == sorted(
        [
            *(record(path, n, name, f'{{"id":{n}}}') for n, name in enumerate(BAD, 2)),
            record(update[0], 1, "i", '{"id":1}', synced=T2),
        ],
        key=_record_order,
    )
    # One WARNING line, the same text as the Warning: table, columns, counts and reasons.
    warning = response.warning.message
    assert "'t'" in warning and f"'{CHANGES}'" in warning and "12 value(s)" in warning
    assert "column 'i': 2 NULLED (not a valid INT)" in warning
    assert "column 'dec': 1 NULLED (DECIMAL(10, 2) overflow)" in warning
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [warning]
    for bad, _ in BAD.values():
        assert bad not in warning and bad not in caplog.text
    assert '"id"' not in warning and '{"id"' not in caplog.text
    # The changes table is no part of the table, and Fivetran can never name it.
    assert [c.name for c in dest.describe("t").table.columns] == HEADER
    refused = dest.describe(CHANGES)
    assert outcome(refused) == "task" and "reserves" in refused.task.message


@pytest.mark.parametrize("dest", WRITE_MODES, indirect=True)
def test_the_fail_policy_fails_the_same_batch_and_records_nothing(
    dest: Destination, lake: Lake
) -> None:
    assert outcome(dest.create("t", COLUMNS)) == "success"
    good = dest.write_file(HEADER, [row(1)])
    assert outcome(dest.write("t", COLUMNS, replace=[good])) == "success"
    bad = dest.write_file(HEADER, [row(2), row(3, d="abc")])
    response = dest.write("t", COLUMNS, replace=[bad])
    assert outcome(response) == "task"
    assert "'d'" in response.task.message and "data row 2" in response.task.message
    assert rows(lake, dest) == [typed(1)]
    assert not changes_exist(lake, dest)


def test_a_clean_batch_under_null_succeeds_without_a_changes_table(
    dest: Destination, lake: Lake
) -> None:
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    response = dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [row(1), row(2)])])
    assert outcome(response) == "success"
    assert rows(lake, dest) == [typed(1), typed(2)]
    assert not changes_exist(lake, dest)


def test_keys_and_fivetran_columns_still_fail_under_null(dest: Destination, lake: Lake) -> None:
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    bad_key = row(1)
    bad_key[HEADER.index("id")] = "x1"
    for bad, where in ((bad_key, "'id'"), (row(1, synced="yesterday"), "'_fivetran_synced'")):
        response = dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [row(2), bad])])
        assert outcome(response) == "task", where
        assert where in response.task.message and "data row 2" in response.task.message
        assert "x1" not in response.task.message and "yesterday" not in response.task.message
    assert rows(lake, dest) == []
    assert not changes_exist(lake, dest)


def test_a_request_failing_after_its_records_leaves_neither_records_nor_rows(
    dest: Destination, lake: Lake
) -> None:
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    first = dest.write_file(HEADER, [row(1, i="bad")])
    assert outcome(dest.write("t", COLUMNS, replace=[first])) == "warning"
    before_rows, before_records = rows(lake, dest), records(lake, dest)
    snapshots = lake.snapshot_count(dest.schema, CHANGES)

    batch = dest.write_file(HEADER, [row(2, SYNC2, d="nope")])
    with failing_before(committing_op(dest)) as hits:
        response = dest.write("t", COLUMNS, replace=[batch])
    assert [h.index for h in hits] == [3] and outcome(response) == "task"
    assert rows(lake, dest) == before_rows
    assert records(lake, dest) == before_records
    # Iceberg's metadata is put back; on Delta the records' commit and the RESTORE that undid
    # it are two versions more (a Delta table's history only grows).
    undone = 2 if lake.catalog == DELTA_CATALOG else 0
    assert lake.snapshot_count(dest.schema, CHANGES) == snapshots + undone

    # The retry makes both changes once.
    assert outcome(dest.write("t", COLUMNS, replace=[batch])) == "warning"
    assert rows(lake, dest) == [typed(1, i=None), typed(2, T2, d=None)]
    assert records(lake, dest) == [
        record(first[0], 1, "i", '{"id":1}'),
        record(batch[0], 1, "d", '{"id":2}', synced=T2),
    ]


def test_a_retry_after_a_crash_between_records_and_merge_adds_no_second_record(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after the records' commit leaves them without the change (nothing restores
    after a SIGKILL); the retried request finds them, adds none, and makes the change."""
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    batch = dest.write_file(HEADER, [row(1), row(2, nd="2023-02-29", t="7")])
    with monkeypatch.context() as crashed_process:
        # A killed process restores nothing: the records' commit stays.
        for module in (engine_module, deferred_module):
            crashed_process.setattr(
                module, "restored_on_failure", lambda *_: contextlib.nullcontext()
            )
        with failing_before(committing_op(dest)) as hits:
            assert outcome(dest.write("t", COLUMNS, replace=[batch])) == "task"
    assert hits
    crashed = records(lake, dest)
    assert [(r["column_name"], r["file_row"]) for r in crashed] == [("nd", 2), ("t", 2)]
    assert rows(lake, dest) == []

    assert outcome(dest.write("t", COLUMNS, replace=[batch])) == "warning"
    assert records(lake, dest) == crashed
    assert rows(lake, dest) == [typed(1), typed(2, nd=None, t=None)]
    # The same again (Fivetran retrying a request that in fact succeeded): nothing new.
    assert outcome(dest.write("t", COLUMNS, replace=[batch])) == "warning"
    assert records(lake, dest) == crashed


def test_history_batches_null_and_record_bad_values(dest: Destination, lake: Lake) -> None:
    lenient(dest)
    columns = [
        column("id", "INT", pk=True),
        column("n", "INT"),
        column("_fivetran_start", "UTC_DATETIME", pk=True),
        column("_fivetran_end", "UTC_DATETIME"),
        column("_fivetran_active", "BOOLEAN"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    assert outcome(dest.create("h", columns)) == "success"
    tmax = "9999-12-31T23:59:59.999Z"
    path, key = dest.write_file(
        header,
        [["1", "5", SYNC1, tmax, "true", SYNC1], ["2", "99999999999", SYNC1, tmax, "true", SYNC1]],
    )
    request = pb.WriteHistoryBatchRequest(
        configuration=dest.configuration,
        schema_name=dest.schema,
        table=common.Table(name="h", columns=columns),
        keys={path: key},
        replace_files=[path],
        file_params=pb.FileParams(
            compression=pb.ZSTD, encryption=pb.AES, null_string=NULL, unmodified_string=UNMOD
        ),
    )
    response = dest.stub.WriteHistoryBatch(request)
    assert outcome(response) == "warning", response
    assert [(r["id"], r["n"]) for r in lake.rows(dest.schema, "h", order_by="id")] == [
        (1, 5),
        (2, None),
    ]
    (only,) = records(lake, dest)
    assert only["table_name"] == "h" and only["column_name"] == "n"
    assert only["reason"] == "INT overflow" and only["file_row"] == 2
    assert only["primary_key"] == '{"id":2,"_fivetran_start":"2024-03-01T10:00:00.000Z"}'


@pytest.mark.parametrize("dest", WRITE_MODES, indirect=True)
def test_parquet_batch_files_null_and_record_bad_values(
    dest: Destination,
    lake: Lake,
    parquet_stub: pb_grpc.DestinationConnectorStub,
    parquet_engine: Engine,
) -> None:
    """Fivetran's Parquet types most columns (a SHORT as INT32, which may not fit) and writes
    dates, instants and times as text: both kinds of misfit are NULLed and recorded."""
    dest.stub, lake.flush = parquet_stub, parquet_engine.flush_pending
    dest.configuration = {**dest.configuration, **NULLS}
    columns = [
        column("id", "INT", pk=True),
        column("sh", "SHORT"),
        column("nd", "NAIVE_DATE"),
        column("t", "NAIVE_TIME"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    assert outcome(dest.create("p", columns)) == "success"
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "sh": pa.array([7, 40000, None], pa.int32()),
            "nd": pa.array(["2024-01-02", "2024-01-03", "2021-02-30"], pa.string()),
            "t": pa.array(["25:61:00", "03:04:05", None], pa.string()),
            "_fivetran_synced": pa.array([SYNC1] * 3, pa.string()),
        }
    )
    path, key = dest.workdir / "batch.parquet.aes", new_key()
    write_parquet_table(path, table, params=dest.params(), key=key)
    response = dest.write("p", columns, replace=[(str(path), key)])
    assert outcome(response) == "warning", response
    assert [(r["id"], r["sh"], r["nd"], r["t"]) for r in rows(lake, dest, "p")] == [
        (1, 7, date(2024, 1, 2), None),
        (2, None, date(2024, 1, 3), "03:04:05"),
        (3, None, None, None),
    ]
    assert [(r["column_name"], r["file_row"], r["reason"]) for r in records(lake, dest)] == [
        ("t", 1, "not a valid time of day (HH:MM[:SS[.fraction]])"),
        ("sh", 2, "SMALLINT overflow"),
        ("nd", 3, "not a valid DATE"),
    ]


def test_tables_of_one_schema_record_their_changes_at_the_same_time(
    dest: Destination, lake: Lake
) -> None:
    """Requests on different tables run in parallel and share the schema's changes table:
    each holds it from its records to its MERGE, so every record lands once."""
    lenient(dest)
    names = ["a", "b", "c"]
    for name in names:
        assert outcome(dest.create(name, COLUMNS)) == "success"
    files = {
        name: dest.write_file(HEADER, [row(1, i="x"), row(2), row(3, d="y")]) for name in names
    }
    inside, most, guard = 0, 0, threading.Lock()
    commit = committing_op(dest)
    # Each request waits just before its first write to the changes table (the step that
    # takes hold of it) until all three are there, so they do contend for it: "one at a
    # time" below then shows the hold, not requests that happened never to overlap.
    arrived = threading.Barrier(len(names), timeout=BARRIER_SECONDS)
    reached: list[str] = []

    def hook(point: faults.Boundary) -> None:
        # Between its records and its MERGE (deferred mode: its append) a request holds the
        # changes table: count how many requests are there at once (a moment's wait widens
        # the window).
        nonlocal inside, most
        if point.op == "RecordChangesOp" and point.index == 1:
            reached.append(point.table)
            arrived.wait()
        elif point.op == "RecordChangesOp" and point.index == 2:
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.3)
        elif point.op == commit:
            with guard:
                inside -= 1

    with faults.installed(hook), ThreadPoolExecutor(len(names)) as pool:
        responses = list(
            pool.map(lambda name: dest.write(name, COLUMNS, replace=[files[name]]), names)
        )
    assert not arrived.broken, f"the requests never reached the changes table together: {reached}"
    assert most == 1, f"{most} requests held the changes table at once"
    assert [outcome(r) for r in responses] == ["warning"] * 3, responses
    assert records(lake, dest) == sorted(
        [
            expected for name in names for expected in (
                record(files[name][0], 1, "i", '{"id":1}', table=name),
                record(files[name][0], 3, "d", '{"id":3}', table=name),
            )
        ],
        key=_record_order,
    )  # fmt: skip
    for name in names:
        assert rows(lake, dest, name) == [typed(1, i=None), typed(2), typed(3, d=None)]


def _readme_query() -> str:
    """The README's example query (the first SQL block of its "Bad values" section)."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Bad values", 1)[1].split("\n## ", 1)[0]
    return section.split("```sql\n", 1)[1].split("```", 1)[0]


def test_the_readme_query_lists_what_the_last_sync_nulled(dest: Destination, lake: Lake) -> None:
    lenient(dest)
    assert outcome(dest.create("t", COLUMNS)) == "success"
    batch = dest.write_file(HEADER, [row(1, i="x"), row(2, i="y", d="z"), row(3)])
    assert outcome(dest.write("t", COLUMNS, replace=[batch])) == "warning"
    query = _readme_query().replace("lake.sales.", f"{lake.catalog}.{dest.schema}.")
    found = [tuple(r) for r in lake.child().sql(query).collect()]
    assert found == [
        ("t", "d", "not a valid DOUBLE", 1, '{"id":2}'),
        ("t", "i", "not a valid INT", 2, '{"id":1}'),
    ]
