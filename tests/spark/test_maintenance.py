"""Table maintenance on real Iceberg tables: ``maintain`` keeps every row identical and removes
the delete files and snapshots that merge-on-read batches leave; the automatic mode does the same
between requests once the delete-file threshold is reached, or once a small write has rewritten
a big write's deletes."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render
from spark_destination.engine.engine import Engine
from spark_destination.planner.ir import (
    TableHealthOp,
    TableRef,
)
from spark_destination.planner.maintenance import MaintenancePolicy
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.location_files import has_file_before
from spark_destination.runtime.execute.maintenance import TableHealth, table_health
from spark_destination.runtime.execute.table_loader import spark_table
from tests.spark.test_write_batch_grpc import HEADER, SYNC1, SYNC2, by_id, orders, outcome
from tests.support.destination import CATALOGS, UNMOD, WRITE_MODES, Destination, Lake

pytestmark = [
    pytest.mark.spark,
    # Maintenance (its stored procedures and commits) on the Hadoop catalog and a Hive metastore.
    pytest.mark.parametrize("catalog_kind", CATALOGS, indirect=True),
]


def _small_batches(dest: Destination, lake: Lake, batches: int) -> None:
    """Seed 40 rows, then small batches that update and delete a few (one delete file each).

    Deferred mode: each batch is flushed before the next (as a timer shorter than the time
    between syncs does), so the table gets merge mode's commits."""
    assert outcome(dest.create("orders", orders())) == "success"
    seed = [[str(i), f"{i}.00", f"note {i}", SYNC1, "false"] for i in range(40)]
    assert outcome(dest.write("orders", orders(), replace=[dest.write_file(HEADER, seed)])) == (
        "success"
    )
    lake.settle()
    for n in range(batches):
        update = dest.write_file(HEADER, [[str(n), f"{n}.99", UNMOD, SYNC2, "false"]])
        delete = dest.write_file(HEADER, [[str(39 - n), UNMOD, UNMOD, SYNC2, "true"]])
        upsert = dest.write_file(HEADER, [[str(100 + n), "1.00", "new", SYNC2, "false"]])
        response = dest.write(
            "orders", orders(), replace=[upsert], update=[update], delete=[delete]
        )
        assert outcome(response) == "success"
        lake.settle()


def _health(engine: Engine, dest: Destination) -> TableHealth:
    config = engine.config(dest.configuration)
    executor = Executor(engine.sessions.for_request(config))
    table = TableRef(catalog=config.catalog, schema=dest.schema, name="orders")
    (statement,) = render(TableHealthOp(table=table), DEFAULT)
    return table_health(executor, statement)


def test_maintain_keeps_rows_and_removes_delete_files_and_old_snapshots(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    _small_batches(dest, lake, 4)
    rows = by_id(lake, dest)
    before = _health(engine, dest)
    # Iceberg folds a data file's earlier position deletes into each new delete file, so one
    # live delete file per data file that lost rows; a snapshot per batch.
    assert before.delete_files >= 1 and before.snapshots == 5

    report = engine.maintain(
        dest.configuration,
        dest.schema,
        "orders",
        policy=MaintenancePolicy(retention=timedelta(0)),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )

    assert by_id(lake, dest) == rows
    after = _health(engine, dest)
    assert report.before == before and report.after == after
    assert after.delete_files == 0
    # Every snapshot from before the cut-off is gone; what is left are maintenance's own
    # commits (the compaction and the dangling-delete removal), newer than the cut-off.
    assert after.snapshots <= 2
    assert after.data_files < before.data_files
    assert [step for step, _, _ in report.steps][0].startswith("compact data files")
    # The table still takes batches afterwards.
    more = dest.write_file(HEADER, [["7", "7.77", UNMOD, SYNC2, "false"]])
    assert outcome(dest.write("orders", orders(), update=[more])) == "success"
    assert str(by_id(lake, dest)[7]["amount"]) == "7.77"


def test_maintain_expires_nothing_it_need_not_look_for(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    """Every snapshot within the retention: ``expire_snapshots`` is not run (it would commit
    and run Spark jobs over the manifests to delete nothing). A tag that keeps its own
    retention brings it back."""
    _small_batches(dest, lake, 2)
    before = _health(engine, dest)
    assert before.oldest_snapshot_ms is not None and before.refs_with_own_retention == 0

    def steps() -> list[str]:
        week = MaintenancePolicy(retention=timedelta(days=7))
        report = engine.maintain(dest.configuration, dest.schema, "orders", policy=week)
        return [step for step, _, _ in report.steps]

    first = steps()
    assert first[0].startswith("compact data files")
    assert not [step for step in first if step.startswith("expire snapshots")]
    after = _health(engine, dest)
    assert after.snapshots >= before.snapshots  # none expired
    assert after.oldest_snapshot_ms == before.oldest_snapshot_ms

    config = engine.config(dest.configuration)
    table = qualified(config.catalog, dest.schema, "orders")
    lake.child().sql(f"ALTER TABLE {table} CREATE TAG `kept` RETAIN 1 DAYS")
    assert _health(engine, dest).refs_with_own_retention == 1
    assert [step for step in steps() if step.startswith("expire snapshots")]


def test_maintain_removes_orphans_only_when_some_file_is_old_enough(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    """A table younger than the orphan cut-off: its location is listed first, and with no file
    that old ``remove_orphan_files`` is not run (it would read every manifest to delete
    nothing). An old file there (left, say, by a table dropped at the same place) brings the
    step back, which deletes it."""
    _small_batches(dest, lake, 2)
    config = engine.config(dest.configuration)
    ref = TableRef(catalog=config.catalog, schema=dest.schema, name="orders")
    session = engine.sessions.for_request(config)
    week = MaintenancePolicy(retention=timedelta(days=7))

    def steps() -> list[str]:
        report = engine.maintain(dest.configuration, dest.schema, "orders", policy=week)
        return [step for step, _, _ in report.steps]

    now = datetime.now(UTC)
    assert has_file_before(session, ref, now - timedelta(days=7)) is False
    assert has_file_before(session, ref, now + timedelta(days=1)) is True  # every file
    missing = TableRef(catalog=config.catalog, schema=dest.schema, name="nope")
    assert has_file_before(session, missing, now) is None

    first = steps()
    assert first[0].startswith("compact data files")
    assert not [step for step in first if step.startswith("remove unreferenced files")]

    loaded = spark_table(session, ref)
    location = Path(urlparse(str(loaded.table().location())).path)
    stray = location / "data" / "left-behind.parquet"
    stray.write_bytes(b"not referenced by any snapshot")
    month_ago = (now - timedelta(days=30)).timestamp()
    os.utime(stray, (month_ago, month_ago))
    rows = by_id(lake, dest)

    second = steps()
    assert [step for step in second if step.startswith("remove unreferenced files")]
    assert not stray.exists()
    assert by_id(lake, dest) == rows


def test_maintain_refuses_a_missing_table(engine: Engine, dest: Destination) -> None:
    from spark_destination.core.errors import InvalidRequestError

    with pytest.raises(InvalidRequestError, match="does not exist"):
        engine.maintain(dest.configuration, dest.schema, "nope")


def test_automatic_maintenance_runs_between_requests_past_the_delete_file_threshold(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    dest.configuration = {
        **dest.configuration,
        "maintenance_delete_files": "1",
        "snapshot_retention_hours": "0",
    }
    _small_batches(dest, lake, 3)
    engine.wait_for_maintenance(timeout=600)
    rows = by_id(lake, dest)
    assert sorted(rows) == [*range(37), 100, 101, 102]
    health = _health(engine, dest)
    # Maintenance ran after each batch that left a delete file: the batches' snapshots are
    # expired, their delete files compacted away.
    assert health.delete_files == 0
    assert health.snapshots <= 2


@pytest.mark.parametrize("dest", WRITE_MODES, indirect=True)
def test_a_small_write_that_rewrites_a_big_writes_deletes_starts_maintenance(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    dest.configuration = {
        **dest.configuration,
        "maintenance_every_commits": "0",
        "maintenance_rewritten_deletes": "20",
        "snapshot_retention_hours": "0",
    }
    assert outcome(dest.create("orders", orders())) == "success"
    seed = [[str(i), f"{i}.00", f"note {i}", SYNC1, "false"] for i in range(40)]
    big = [[str(i), f"{i}.50", f"again {i}", SYNC2, "false"] for i in range(30)]
    for rows in (seed, big):
        response = dest.write("orders", orders(), replace=[dest.write_file(HEADER, rows)])
        assert outcome(response) == "success"
        engine.flush_pending()  # deferred mode: each write's own flush MERGE (merge mode: none)
    engine.wait_for_maintenance(timeout=600)
    # The big write deleted 30 of the seed file's rows and rewrote no earlier delete: no run.
    assert _health(engine, dest).delete_files == 1

    # One row of the seed file again: Iceberg folds the file's 30 deletes into the new delete
    # file beside this one (30 rewritten for 1), with 31 of 71 rows deleted.
    small = [[str(35), "35.99", "once more", SYNC2, "false"]]
    response = dest.write("orders", orders(), replace=[dest.write_file(HEADER, small)])
    assert outcome(response) == "success"
    engine.flush_pending()
    engine.wait_for_maintenance(timeout=600)
    health = _health(engine, dest)
    assert health.delete_files == 0
    assert health.data_files == 1
    assert sorted(by_id(lake, dest)) == list(range(40))
