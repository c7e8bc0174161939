"""A shared catalog, as production lakes have it: a real Hive metastore (pyspark's own jars,
``local_services.metastore``) with other writers on the same tables.

- The setup tests prove the catalog takes the commits a sync needs, and name the metastore
  setting to change when it does not (a metastore without its lock tables; one that refuses
  to drop a column).
- Every commit carries the request's identity in its snapshot summary, read back from the
  ``snapshots`` metadata table.
- A failed request never erases another writer's commit; deferred mode never takes another
  writer's commit for its own flush.
- Syncs race with an outside Spark process that appends, compacts and expires the same table;
  and two destination processes write the same table: every sync succeeds the first time (a
  lost race is retried inside the request), and the table equals the reference, nothing lost
  and nothing applied twice.
- A metastore stopped in the middle of a sync: gRPC UNAVAILABLE (Fivetran retries), the table
  as it was, and the retry completes once the metastore is back.
- pyiceberg reads the tables through the same metastore.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from spark_destination.core.config import parse_config
from spark_destination.engine.engine import Engine
from spark_destination.local_services.metastore import (
    COLUMN_TYPE_CHECK,
    Metastore,
    destination_configuration,
    hive_metastore,
)
from spark_destination.local_services.metastore import start as start_metastore
from spark_destination.local_services.metastore import stop as stop_metastore
from spark_destination.local_services.server_process import server_process
from spark_destination.runtime.execute import commits, executor, faults
from spark_destination.runtime.execute.retry_policy import RetryPolicy
from spark_destination.runtime.spark.provider import settings_for
from spark_destination.runtime.spark.session import register_catalog
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from tests.support.destination import NULL, Destination, Lake, column
from tests.support.outside_writer import FIRST_ID
from tests.support.retries import short_retries

pytestmark = [
    pytest.mark.spark,
    pytest.mark.parametrize("catalog_kind", ["hive"], indirect=True),
]

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING")]
HEADER = [c.name for c in COLUMNS]
REPO = Path(__file__).resolve().parents[2]


def _test(dest: Destination, name: str, configuration: dict[str, str] | None = None) -> Any:
    return dest.stub.Test(
        common.TestRequest(name=name, configuration=configuration or dest.configuration)
    )


def test_the_setup_tests_pass_on_a_metastore_set_as_iceberg_needs(dest: Destination) -> None:
    for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
        response = _test(dest, name)
        assert response.WhichOneof("response") == "success", (name, response)


@pytest.fixture(scope="module")
def lockless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metastore]:
    """A metastore as a fresh install has it: no transaction tables, so no commit locks."""
    with hive_metastore(tmp_path_factory.mktemp("lockless"), transaction_tables=False) as ms:
        yield ms


@pytest.fixture(scope="module")
def strict_columns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metastore]:
    """A metastore that refuses column layouts it deems incompatible (its default)."""
    with hive_metastore(tmp_path_factory.mktemp("strict"), allow_column_changes=False) as metastore:
        yield metastore


def _configuration(metastore: Metastore, catalog: str) -> dict[str, str]:
    return {"catalog": catalog, **destination_configuration(metastore)}


def test_a_metastore_without_lock_tables_is_named_by_the_setup_test_and_a_sync(
    dest: Destination, lockless: Metastore
) -> None:
    configuration = _configuration(lockless, "lockless")
    started = time.monotonic()
    response = _test(dest, form.TEST_CATALOG, configuration)
    seconds = time.monotonic() - started
    print(f"setup test on a metastore without lock tables: {seconds:.1f} s")
    assert response.WhichOneof("response") == "failure"
    assert "create a table (a locked commit)" in response.failure
    assert "HIVE_LOCKS" in response.failure
    assert "schematool -initSchema" in response.failure
    # A sync on it: a task naming the table and the cause, never a bare "already exists".
    synced = Destination(
        stub=dest.stub, workdir=dest.workdir, configuration=configuration, schema=dest.schema
    )
    created = synced.create("t", COLUMNS)
    assert created.WhichOneof("response") == "task"
    assert "'t'" in created.task.message
    assert "HIVE_LOCKS" in created.task.message
    assert synced.describe("t").not_found


def test_a_metastore_stopped_in_a_sync_is_retried_by_fivetran_and_the_retry_completes(
    dest: Destination,
    spark: Any,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The metastore stops just before the statement that commits: after the retry budget for
    a service that does not answer, the request ends with gRPC UNAVAILABLE naming the table
    (what Fivetran retries), the table is as it was, and once the metastore is back the same
    request gives the rows a clean run gives, without a restart of the destination."""
    short_retries(monkeypatch, RetryPolicy(unavailable_seconds=10.0))
    folder = tmp_path / "stopping"
    metastore = start_metastore(folder)
    port = int(metastore.uri.rsplit(":", 1)[1])
    try:
        configuration = _configuration(metastore, "stopping")
        synced = Destination(
            stub=dest.stub, workdir=dest.workdir, configuration=configuration, schema=dest.schema
        )
        spec = settings_for(parse_config(configuration)).catalog_spec
        lake = Lake(
            session=spark,
            catalog=spec.name,
            flush=engine.flush_pending,
            prepare=lambda session: register_catalog(session, spec),
        )
        first = synced.write_file(HEADER, [["1", "a"], ["2", "b"]])
        second = synced.write_file(HEADER, [["2", "B"], ["3", "c"]])
        for name in ("ref", "t"):
            assert synced.create(name, COLUMNS).WhichOneof("response") == "success"
            assert synced.write(name, COLUMNS, replace=[first]).WhichOneof("response") == "success"
        # A clean run on the reference table gives the boundary before the committing step.
        with faults.recording() as seen:
            assert synced.write("ref", COLUMNS, replace=[second]).WhichOneof("response") == (
                "success"
            )
        point = seen[-1].name
        before = _rows(lake, synced, "t")

        def stop_at(boundary: faults.Boundary) -> None:
            if boundary.name == point and not stopped:
                stopped.append(point)
                stop_metastore(metastore.pid)

        stopped: list[str] = []
        started = time.monotonic()
        with faults.installed(stop_at), pytest.raises(grpc.RpcError) as info:
            synced.write("t", COLUMNS, replace=[second])
        seconds = time.monotonic() - started
        error = info.value
        assert stopped, f"boundary {point} was not reached"
        assert isinstance(error, grpc.Call)
        print(f"answered in {seconds:.1f} s: {error.code()} {error.details()}")
        assert error.code() == grpc.StatusCode.UNAVAILABLE, error.details()
        assert "'t'" in error.details()
        assert seconds < 180, seconds
        metastore = start_metastore(folder, port=port)
        assert _rows(lake, synced, "t") == before
        assert synced.write("t", COLUMNS, replace=[second]).WhichOneof("response") == "success"
        assert _rows(lake, synced, "t") == _rows(lake, synced, "ref")
        assert _rows(lake, synced, "t") == collections.Counter(
            {(1, "a"): 1, (2, "B"): 1, (3, "c"): 1}
        )
    finally:
        stop_metastore(metastore.pid)


def _rows(lake: Lake, dest: Destination, table: str) -> collections.Counter[tuple[Any, ...]]:
    return collections.Counter((row["id"], row["v"]) for row in lake.rows(dest.schema, table))


def test_a_metastore_that_refuses_dropped_columns_is_named_by_the_setup_test(
    dest: Destination, strict_columns: Metastore
) -> None:
    started = time.monotonic()
    response = _test(dest, form.TEST_CATALOG, _configuration(strict_columns, "strict"))
    print(f"setup test on a metastore refusing column changes: {time.monotonic() - started:.1f} s")
    assert response.WhichOneof("response") == "failure"
    assert "drop a column" in response.failure
    assert f"{COLUMN_TYPE_CHECK}=false" in response.failure
    # A sync that drops a column there: a task naming the table and the setting, at once (the
    # metastore's refusal is not retried), and the table as it was.
    synced = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration=_configuration(strict_columns, "strict"),
        schema=dest.schema,
    )
    wide = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
    assert synced.create("t", wide).WhichOneof("response") == "success"
    dropped = synced.alter("t", [wide[0], wide[2]], drop_columns=True)
    assert dropped.WhichOneof("response") == "task"
    assert "'t'" in dropped.task.message
    assert f"{COLUMN_TYPE_CHECK}=false" in dropped.task.message
    assert [c.name for c in synced.describe("t").table.columns] == ["id", "v", "n"]


def _summaries(lake: Lake, dest: Destination, table: str) -> list[dict[str, str]]:
    name = f"{lake.catalog}.`{dest.schema}`.`{table}`.snapshots"
    frame = lake.child().table(name).orderBy("committed_at")
    return [dict(row["summary"]) for row in frame.collect()]


def test_every_commit_says_which_request_made_it_and_what_it_did(
    dest: Destination, lake: Lake
) -> None:
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    replace = dest.write_file(HEADER, [["1", "a"], ["2", "b"], ["3", "c"]])
    delete = dest.write_file(HEADER, [["2", NULL]])
    assert (
        dest.write("t", COLUMNS, replace=[replace], delete=[delete]).WhichOneof("response")
        == "success"
    )
    (summary,) = [s for s in _summaries(lake, dest, "t") if s.get(commits.REQUEST_KIND)]
    assert summary[commits.REQUEST_KIND] == "WriteBatch"
    assert summary[commits.ROWS_REPLACED] == "3"
    assert summary[commits.ROWS_DELETED] == "1"
    assert summary[commits.BATCH_FILES] == "2"
    assert len(summary[commits.REQUEST_ID]) == 32
    assert int(summary[commits.STARTED_AT_MS]) > 0
    # Never a value: every entry of the destination's is a count, an id, a name or a time.
    assert not {"a", "b", "c"} & set(summary.values())


def _outside_append(lake: Lake, dest: Destination, ids: range) -> None:
    """Another writer appends rows (NULL in every column but ``id`` and ``v``: an Iceberg
    INSERT names every column)."""
    session = lake.child()
    table = f"{lake.catalog}.`{dest.schema}`.t"
    names = session.table(table).columns
    given = {"id": "{}", "v": "'outside'"}
    row = "(" + ", ".join(given.get(name, "NULL") for name in names) + ")"
    values = ", ".join(row.format(i) for i in ids)
    session.sql(f"INSERT INTO {table} VALUES {values}").collect()


def test_a_failed_request_keeps_what_another_writer_committed_meanwhile(
    dest: Destination, lake: Lake
) -> None:
    """An AlterTable that adds a column, then rewrites the table to change a type, fails
    half-way; another writer appended rows after its first commit. Restoring the table's
    metadata from before the request would erase that append: the table is left as it is
    (the append kept), and the retry completes the change."""
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    batch = dest.write_file(HEADER, [["1", "a"]])
    assert dest.write("t", COLUMNS, replace=[batch]).WhichOneof("response") == "success"
    changed = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "LONG")]
    hits: list[str] = []

    def append_then_fail(point: faults.Boundary) -> None:
        if point.index == 1 and not hits:
            hits.append(point.name)
            _outside_append(lake, dest, range(FIRST_ID, FIRST_ID + 3))
            raise faults.InjectedFault("injected after another writer's append")

    with faults.installed(append_then_fail):
        failed = dest.alter("t", [*changed[:2], column("n", "LONG")])
        again = dest.alter("t", [column("id", "INT", pk=True), column("v", "STRING")])
    assert hits, "the request had no second statement"
    assert failed.WhichOneof("response") == "task"
    ids = sorted(row["id"] for row in lake.rows(dest.schema, "t"))
    assert ids == [1, FIRST_ID, FIRST_ID + 1, FIRST_ID + 2]
    assert again.WhichOneof("response") == "success"


def test_deferred_mode_does_not_take_another_writers_commit_for_its_flush(
    dest: Destination, lake: Lake, engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush is interrupted before its MERGE commits (its record stays in the intermediate
    table), then another writer appends to the table. The next flush must fold the pending
    rows: the table moved, but not by that flush's commit."""
    deferred = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={**dest.configuration, "write_mode": "deferred", "merge_interval_ms": "-1"},
        schema=dest.schema,
    )
    assert deferred.create("t", COLUMNS).WhichOneof("response") == "success"
    batch = deferred.write_file(HEADER, [["1", "a"], ["2", "b"]])
    assert deferred.write("t", COLUMNS, replace=[batch]).WhichOneof("response") == "success"
    original = executor.bound_sql

    def merge_fails(session: Any, text: str, args: Any) -> Any:
        if text.lstrip().upper().startswith("MERGE"):
            raise faults.InjectedFault("injected: the flush's MERGE did not commit")
        return original(session, text, args)

    monkeypatch.setattr(executor, "bound_sql", merge_fails)
    with pytest.raises(Exception, match="injected"):
        engine.flush(deferred.configuration, dest.schema, "t")
    monkeypatch.setattr(executor, "bound_sql", original)
    _outside_append(lake, dest, range(FIRST_ID, FIRST_ID + 2))
    engine.flush(deferred.configuration, dest.schema, "t")
    ids = sorted(row["id"] for row in lake.rows(dest.schema, "t"))
    assert ids == [1, 2, FIRST_ID, FIRST_ID + 1]


def _sync_batches(rounds: int, seed: int, first: int) -> list[tuple[list[list[str]], list[int]]]:
    """Per sync: upserted rows (new and existing ids) and deleted ids, all below
    ``FIRST_ID``, in a range of ids of their own."""
    import random

    rng = random.Random(seed)
    batches = []
    for sync in range(rounds):
        upserts = [[str(first + rng.randrange(60)), f"s{sync}"] for _ in range(20)]
        deletes = [first + rng.randrange(60) for _ in range(4)]
        batches.append((upserts, deletes))
    return batches


def _apply(model: dict[int, str], upserts: list[list[str]], deletes: list[int]) -> None:
    for key, value in upserts:
        model[int(key)] = value
    for key in deletes:
        model.pop(key, None)


def _sync(dest: Destination, upserts: list[list[str]], deletes: list[int]) -> float:
    """One sync as Fivetran makes it, which must succeed the first time: a race lost to another
    writer is retried inside the destination (its retry budget), never handed to Fivetran.
    Returns its seconds."""
    # Deduplicate as Fivetran does: a key once per file.
    replace = dest.write_file(HEADER, list({r[0]: r for r in upserts}.values()))
    delete = dest.write_file(HEADER, [[str(k), NULL] for k in sorted(set(deletes))])
    started = time.monotonic()
    response = dest.write("t", COLUMNS, replace=[replace], delete=[delete])
    assert response.WhichOneof("response") == "success", response
    return round(time.monotonic() - started, 1)


def _table(lake: Lake, dest: Destination) -> collections.Counter[tuple[int, str]]:
    return collections.Counter((row["id"], row["v"]) for row in lake.rows(dest.schema, "t"))


def test_syncs_race_with_an_outside_process_that_appends_compacts_and_expires(
    dest: Destination, lake: Lake, metastore: Metastore, tmp_path: Path
) -> None:
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    model: dict[int, str] = {}
    work = tmp_path / "outside"
    work.mkdir()
    command = [
        sys.executable,
        "-m",
        "tests.support.outside_writer",
        "--uri",
        metastore.uri,
        "--warehouse",
        str(metastore.warehouse),
        "--table",
        f"{dest.schema}.t",
        "--work",
        str(work),
    ]
    with (tmp_path / "outside.log").open("wb") as log:
        writer = subprocess.Popen(  # noqa: S603
            command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy()
        )
    try:
        deadline = time.monotonic() + 180
        while not (work / "ready").exists():
            assert writer.poll() is None, (tmp_path / "outside.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the outside writer did not start"
            time.sleep(0.5)
        answers = []
        # 12 syncs in CI (about a minute of racing); SD_RACE_SYNCS=25 for the full run.
        for upserts, deletes in _sync_batches(int(os.environ.get("SD_RACE_SYNCS", "12")), 1, 0):
            answers.append(_sync(dest, upserts, deletes))
            _apply(model, upserts, deletes)
        (work / "stop").write_text("stop")
        assert writer.wait(timeout=300) == 0, (tmp_path / "outside.log").read_text()[-2000:]
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    report = json.loads((work / "report.json").read_text())
    print(
        f"syncs: {answers}; outside writer: {len(report['appended'])} rows appended, "
        f"failures {report['failures']}"
    )
    expected = collections.Counter(model.items())
    expected.update((i, "outside") for i in report["appended"])
    assert _table(lake, dest) == expected
    assert report["appended"], "the outside writer never appended: nothing raced"


def test_two_destination_processes_share_the_metastore(
    dest: Destination, lake: Lake, metastore: Metastore, tmp_path: Path
) -> None:
    """A second server process (its own JVM) and this one write the same table (different
    keys) and a table each, at the same time."""
    flags = [
        "--catalog",
        dest.configuration["catalog"],
        "--catalog-type",
        "hive",
        "--catalog-uri",
        metastore.uri,
        "--warehouse",
        str(metastore.warehouse),
    ]
    with server_process(log_file=tmp_path / "second.log", flags=flags) as second:
        # Batch files of its own: both drivers number theirs from 1.
        (tmp_path / "second").mkdir()
        other = Destination(
            stub=second.stub, workdir=tmp_path / "second", configuration={}, schema=dest.schema
        )
        assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
        models = [dict[int, str](), dict[int, str]()]
        errors: list[BaseException] = []

        def run(index: int, driver: Destination) -> None:
            try:
                for upserts, deletes in _sync_batches(6, index, index * 1000):
                    _sync(driver, upserts, deletes)
                    _apply(models[index], upserts, deletes)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [
            threading.Thread(target=run, args=(0, dest)),
            threading.Thread(target=run, args=(1, other)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        assert other.create("own", COLUMNS).WhichOneof("response") == "success"
        own = other.write_file(HEADER, [["7", "x"]])
        assert other.write("own", COLUMNS, replace=[own]).WhichOneof("response") == "success"
    expected = collections.Counter({**models[0], **models[1]}.items())
    assert _table(lake, dest) == expected
    assert lake.rows(dest.schema, "own") == [{"id": 7, "v": "x"}]


def test_pyiceberg_reads_the_tables_through_the_metastore(
    dest: Destination, lake: Lake, metastore: Metastore
) -> None:
    from pyiceberg.catalog.hive import HiveCatalog

    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    batch = dest.write_file(HEADER, [["1", "a"], ["2", "b"]])
    assert dest.write("t", COLUMNS, replace=[batch]).WhichOneof("response") == "success"
    catalog = HiveCatalog("hms", uri=metastore.uri)
    table = catalog.load_table((dest.schema, "t"))
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["v"]) for r in rows] == [(1, "a"), (2, "b")]
    spark_rows = lake.rows(dest.schema, "t", order_by="id")
    assert [(r["id"], r["v"]) for r in spark_rows] == [(1, "a"), (2, "b")]
