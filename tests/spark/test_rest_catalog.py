"""``catalog_type=rest`` end to end, through the gRPC server as Fivetran drives it, against a
real Iceberg REST catalog server (``local_services.rest_catalog``: Iceberg's own handlers behind an
HTTP layer, OAuth2 client credentials, started for the run and stopped by its pid).

- The setup tests pass, and a wrong OAuth2 secret fails them naming the credential key,
  never its value.
- Every RPC: CreateTable, DescribeTable, AlterTable (add, drop; a failed one put back),
  WriteBatch (upsert, update, delete), Truncate, WriteHistoryBatch, Migrate; deferred mode
  with a flush; ``maintain``; a multi-table transaction sent to the server directly.
- Every commit carries the request's identity in its snapshot summary.
- A commit the server applied but answered 504 (Iceberg: ``CommitStateUnknownException``)
  is found by that identity: the request succeeds and its rows are there once.
- pyiceberg's ``RestCatalog`` reads the tables through the same server.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from spark_destination.engine.engine import Engine
from spark_destination.local_services import rest_catalog as rest
from spark_destination.runtime.execute import commits
from spark_destination.runtime.execute.faults import InjectedFault
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.spark.test_history_grpc import (
    ACTIVE,
    END,
    START,
    SYNCED,
    TMAX,
    history_columns,
    write_history,
)
from tests.spark.test_migrate_grpc import migrate
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark
# The REST catalog server of the project's own (OAuth2, its fault hook); the tests that hold for
# any catalog also run on S3: SeaweedFS's own REST catalog (SigV4) and a Hive metastore, both
# with Iceberg's S3FileIO.
ON_THE_SERVER = pytest.mark.parametrize("catalog_kind", ["rest"], indirect=True)
ON_EVERY_CATALOG = pytest.mark.parametrize(
    "catalog_kind", ["rest", "rest_s3", "hive_s3"], indirect=True
)

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
HEADER = [c.name for c in COLUMNS]


def _test(dest: Destination, name: str, configuration: dict[str, str] | None = None) -> Any:
    return dest.stub.Test(
        common.TestRequest(name=name, configuration=configuration or dest.configuration)
    )


def _ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def _rows(lake: Lake, dest: Destination, table: str = "t") -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in lake.rows(dest.schema, table, order_by="id")]


def _summaries(lake: Lake, dest: Destination, table: str) -> list[dict[str, str]]:
    name = f"{lake.catalog}.`{dest.schema}`.`{table}`.snapshots"
    frame = lake.child().table(name).orderBy("committed_at")
    return [dict(row["summary"]) for row in frame.collect()]


@ON_EVERY_CATALOG
def test_the_setup_tests_pass(dest: Destination) -> None:
    for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
        response = _test(dest, name)
        assert response.WhichOneof("response") == "success", (name, response)


@ON_THE_SERVER
def test_a_wrong_secret_fails_the_setup_test_naming_the_credential_not_its_value(
    dest: Destination,
) -> None:
    secret = "not-the-secret-4Fq9"
    configuration = {
        **dest.configuration,
        "catalog": "rst_wrong",
        "catalog_credential": f"spark-destination:{secret}",
    }
    response = _test(dest, form.TEST_CATALOG, configuration)
    assert response.WhichOneof("response") == "failure", response
    assert "catalog_credential" in response.failure
    assert secret not in response.failure
    assert dest.configuration["catalog_credential"] not in response.failure


@ON_EVERY_CATALOG
def test_every_rpc_on_a_rest_catalog(dest: Destination, lake: Lake) -> None:
    _ok(dest.create("t", COLUMNS))
    described = dest.describe("t")
    assert [c.name for c in described.table.columns] == HEADER
    assert dest.describe("absent").not_found

    upsert = dest.write_file(HEADER, [["1", "a", "10"], ["2", "b", "20"], ["3", "c", "30"]])
    _ok(dest.write("t", COLUMNS, replace=[upsert]))
    update = dest.write_file(HEADER, [["2", "B", UNMOD]])
    delete = dest.write_file(HEADER, [["3", NULL, NULL]])
    _ok(dest.write("t", COLUMNS, update=[update], delete=[delete]))
    assert _rows(lake, dest) == [(1, "a", 10), (2, "B", 20)]

    (summary, *_) = [s for s in reversed(_summaries(lake, dest, "t")) if s.get(commits.REQUEST_ID)]
    assert len(summary[commits.REQUEST_ID]) == 32
    if not dest.deferred:  # deferred mode: the table's commits are its flushes
        assert summary[commits.REQUEST_KIND] == "WriteBatch"
        assert summary[commits.ROWS_UPDATED] == "1"
        assert summary[commits.ROWS_DELETED] == "1"

    # AlterTable: add a column, then drop one (a rewrite through the REST catalog).
    wider = [*COLUMNS, column("extra", "STRING")]
    _ok(dest.alter("t", wider))
    _ok(dest.alter("t", [COLUMNS[0], COLUMNS[1], wider[3]], drop_columns=True))
    assert [c.name for c in dest.describe("t").table.columns] == ["id", "v", "extra"]
    assert _rows(lake, dest) == [(1, "a", None), (2, "B", None)]

    # Migrate: rename a column.
    rename = pb.RenameColumn(from_column="extra", to_column="more")
    renamed = migrate(dest, "t", rename=pb.RenameOperation(rename_column=rename))
    _ok(renamed)
    assert [c.name for c in dest.describe("t").table.columns] == ["id", "v", "more"]

    # Truncate: the rows synced before the cut-off go.
    synced = [column("id", "INT", pk=True), column("_fivetran_synced", "UTC_DATETIME")]
    _ok(dest.create("tr", synced))
    old, new = "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z"
    batch = dest.write_file(["id", "_fivetran_synced"], [["1", old], ["2", new]])
    _ok(dest.write("tr", synced, replace=[batch]))
    _ok(dest.truncate("tr", datetime(2024, 2, 1, tzinfo=UTC)))
    assert [r["id"] for r in lake.rows(dest.schema, "tr")] == [2]


@ON_EVERY_CATALOG
def test_history_mode_on_a_rest_catalog(dest: Destination, lake: Lake) -> None:
    columns = history_columns(column("v", "STRING"))
    header = [c.name for c in columns]
    _ok(dest.create("hist", columns))
    t1, t2 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"
    first = dest.write_file(header, [["1", "a", t1, TMAX, "true", t1]])
    _ok(write_history(dest, "hist", columns, replace=[first]))
    earliest = dest.write_file(["id", START], [["1", t2]])
    second = dest.write_file(header, [["1", "b", t2, TMAX, "true", t2]])
    _ok(write_history(dest, "hist", columns, earliest=[earliest], replace=[second]))
    rows = lake.rows(dest.schema, "hist", order_by=START)
    assert [(r["v"], r[ACTIVE]) for r in rows] == [("a", False), ("b", True)]
    assert rows[0][END] < rows[1][START]
    assert all(r[SYNCED] is not None for r in rows)


@ON_EVERY_CATALOG
def test_deferred_mode_and_its_flush_on_a_rest_catalog(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    deferred = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={**dest.configuration, "write_mode": "deferred", "merge_interval_ms": "-1"},
        schema=dest.schema,
    )
    _ok(deferred.create("t", COLUMNS))
    _ok(deferred.write("t", COLUMNS, replace=[deferred.write_file(HEADER, [["1", "a", "1"]])]))
    _ok(deferred.write("t", COLUMNS, replace=[deferred.write_file(HEADER, [["1", "b", "2"]])]))
    engine.flush(deferred.configuration, dest.schema, "t")
    table = f"{lake.catalog}.`{dest.schema}`.t"
    assert [tuple(r) for r in lake.child().table(table).collect()] == [(1, "b", 2)]
    flushes = [s for s in _summaries(lake, dest, "t") if s.get(commits.FLUSH_ID)]
    assert flushes, "the flush's MERGE carries no flush id"


@ON_EVERY_CATALOG
def test_maintain_on_a_rest_catalog(dest: Destination, lake: Lake, engine: Engine) -> None:
    from spark_destination.planner.maintenance import MaintenancePolicy

    _ok(dest.create("t", COLUMNS))
    for i in range(3):
        batch = dest.write_file(HEADER, [[str(i), f"v{i}", str(i)], ["0", f"w{i}", "0"]])
        _ok(dest.write("t", COLUMNS, replace=[batch]))
        before = _rows(lake, dest)  # (deferred mode: a flush, so a snapshot, per batch)
    report = engine.maintain(
        dest.configuration,
        dest.schema,
        "t",
        policy=MaintenancePolicy(retention=timedelta(0)),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )
    assert _rows(lake, dest) == before
    assert report.after.snapshots < report.before.snapshots


@ON_THE_SERVER
def test_a_commit_answered_504_after_it_applied_is_a_success_applied_once(
    dest: Destination, lake: Lake, rest_catalog: rest.RestCatalog
) -> None:
    _ok(dest.create("t", COLUMNS))
    _ok(dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["1", "a", "1"]])]))
    assert _rows(lake, dest) == [(1, "a", 1)]  # (deferred mode: flushed)
    snapshots = lake.snapshot_count(dest.schema, "t")
    batch = dest.write_file(HEADER, [["2", "b", "2"], ["3", "c", "3"]])
    rest.inject_commit_unknown(rest_catalog)
    response = dest.write("t", COLUMNS, replace=[batch])
    assert response.WhichOneof("response") == "success", response
    assert "504" in rest_catalog.log.read_text(), "the fault was not injected"
    assert _rows(lake, dest) == [(1, "a", 1), (2, "b", 2), (3, "c", 3)]
    # One commit for the batch (deferred mode: the flush's MERGE; the append that was answered
    # 504 went to the intermediate table).
    assert lake.snapshot_count(dest.schema, "t") == snapshots + 1


@ON_THE_SERVER
def test_pyiceberg_reads_the_tables_through_the_rest_catalog(
    dest: Destination, lake: Lake, rest_catalog: rest.RestCatalog
) -> None:
    from pyiceberg.catalog.rest import RestCatalog

    _ok(dest.create("t", COLUMNS))
    batch = dest.write_file(HEADER, [["1", "a", "1"], ["2", "b", "2"]])
    _ok(dest.write("t", COLUMNS, replace=[batch]))
    lake.settle()  # deferred mode: the rows pend in the intermediate table until a flush
    catalog = RestCatalog("rst", uri=rest_catalog.uri, credential=rest_catalog.credential)
    table = catalog.load_table((dest.schema, "t"))
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["v"], r["n"]) for r in rows] == [(1, "a", 1), (2, "b", 2)]


@ON_THE_SERVER
def test_a_multi_table_transaction_commits_every_table_or_is_refused(
    rest_catalog: rest.RestCatalog, dest: Destination
) -> None:
    """``POST /v1/transactions/commit`` (not used by Spark or the destination; served for
    other clients): every table's requirements are checked before any is committed."""
    import json
    import urllib.error
    import urllib.request

    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("rst", uri=rest_catalog.uri, credential=rest_catalog.credential)
    catalog.create_namespace(dest.schema)
    tables = [catalog.create_table((dest.schema, n), pa.schema([("id", pa.int64())])) for n in "ab"]
    token = rest.token(rest_catalog)

    def commit(uuids: list[str], value: str) -> int:
        changes = [
            {
                "identifier": {"namespace": [dest.schema], "name": table.name()[-1]},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                "updates": [{"action": "set-properties", "updates": {"k": value}}],
            }
            for table, uuid in zip(tables, uuids, strict=True)
        ]
        request = urllib.request.Request(
            f"{rest_catalog.uri}/v1/transactions/commit",
            data=json.dumps({"table-changes": changes}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return error.code

    uuids = [str(t.metadata.table_uuid) for t in tables]
    assert commit(uuids, "1") == 204
    assert commit([uuids[0], "00000000-0000-0000-0000-000000000000"], "2") == 409
    loaded = [catalog.load_table((dest.schema, n)) for n in "ab"]
    assert [t.properties.get("k") for t in loaded] == ["1", "1"]


@ON_THE_SERVER
def test_a_failed_alter_table_is_put_back_on_a_rest_catalog(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite commits, the next step fails: the table is put back as it was. A REST
    catalog takes changes, not whole metadata: restoring by committing the old metadata object
    sent none and left the rewrite in place (while the log said "restored")."""
    from spark_destination.runtime.execute.executor import Executor
    from tests.spark.test_alter_table_grpc import seed, state

    columns = [column("id", "INT", pk=True), column("code", "STRING"), column("v", "INT")]
    seed(dest, "t", columns, [["1", "10", "5"], ["2", "20", "6"]])
    target = [column("id", "INT", pk=True), column("code", "INT", pk=True), column("v", "LONG")]
    real_sql = Executor.sql
    failed: list[str] = []

    def flaky(self: Executor, text: str, *, what: str, **kwargs: Any) -> list[object]:
        if what.startswith("set identifier fields") and not failed:
            failed.append(what)
            raise InjectedFault("injected failure")
        return real_sql(self, text, what=what, **kwargs)

    monkeypatch.setattr(Executor, "sql", flaky)
    before = state(lake, dest, "t")
    assert dest.alter("t", target).WhichOneof("response") == "task"
    assert failed
    assert state(lake, dest, "t") == before
    _ok(dest.alter("t", target))
    assert [c.name for c in dest.describe("t").table.columns if c.primary_key] == ["id", "code"]
