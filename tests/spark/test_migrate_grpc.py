"""Migrate end to end: tester-style migration scripts replayed through the gRPC server on local
Spark + Iceberg, the resulting rows and DescribeTable checked; bad requests answered with a
task and the table unchanged; failures injected between steps, then the request retried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
import pytest

from spark_destination.replay.client import DestinationClient, response_outcome
from spark_destination.replay.input_files import TesterSession as Session
from spark_destination.replay.run import run_step
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.executor import Executor
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import CATALOGS_AND_DELTA, DELTA_CATALOG, Destination, Lake, column

pytestmark = [
    pytest.mark.spark,
    # Every Migrate operation on the Hadoop catalog, on a real Hive metastore, and on Delta.
    pytest.mark.parametrize("catalog_kind", CATALOGS_AND_DELTA, indirect=True),
]
# Every operation also runs on Delta in CI; retries after an interruption on Delta run with
# SPARK_DESTINATION_DELTA_ALL=1 (a failed request's restore on Delta runs in CI in
# test_delta.py).
DELTA_IN_CI = {
    "test_dml_migration_script",
    "test_rename_column_keeps_fivetran_types",
    "test_sync_modes_migration_script",
    "test_bad_requests_answer_a_task_and_change_nothing",
    "test_soft_delete_to_history_with_a_custom_column_drops_only_fivetran_deleted",
}

START, END, ACTIVE = "_fivetran_start", "_fivetran_end", "_fivetran_active"
SYNCED, DELETED = "_fivetran_synced", "_fivetran_deleted"
TMAX = datetime(9999, 12, 31, 23, 59, 59, 999000)
TMIN = "0001-01-01 00:00:00"  # as Spark prints it (UTC session)
TMAX_TEXT = "9999-12-31 23:59:59.999"


def timeline(lake: Lake, dest: Destination, table: str) -> list[dict[str, Any]]:
    """Rows ordered by id with start/end as Spark's UTC text: PySpark cannot turn the minimum
    timestamp (0001-01-01) into a Python datetime."""
    frame = lake.child().table(f"{lake.catalog}.{dest.schema}.{table}")
    frame = frame.selectExpr(
        "*",
        f"CAST({START} AS STRING) AS start",
        f"CAST({END} AS STRING) AS end",
        f"CAST({SYNCED} AS STRING) AS synced",
    ).drop(START, END)
    return [r.asDict() for r in frame.orderBy("id").collect()]


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


@pytest.fixture
def client(server_address: str) -> Iterator[DestinationClient]:
    with DestinationClient(grpc.insecure_channel(server_address)) as connected:
        yield connected


def run_script(
    client: DestinationClient, dest: Destination, tmp_path: Path, script: dict[str, Any]
) -> list[str]:
    """The steps of one tester input file, sent the way ``spark-destination replay`` sends them
    (without its Test calls); stops at the first answer other than success/warning/not_found."""
    path = tmp_path / "input_1.json"
    path.write_text(json.dumps(script))
    session = Session(workdir=tmp_path, schema=dest.schema, plain_text=False)
    outcomes = []
    for step in session.load(path):
        response = run_step(client, step, configuration=dest.configuration, schema=dest.schema)
        outcome, message = response_outcome(response)
        assert outcome in {"success", "warning", "not_found", "table"}, (step.summary, message)
        outcomes.append(outcome)
    return outcomes


def described(dest: Destination, name: str) -> list[tuple[str, str, bool]]:
    response = dest.describe(name)
    assert response.WhichOneof("response") == "table", response
    return [(c.name, common.DataType.Name(c.type), c.primary_key) for c in response.table.columns]


def migrate(dest: Destination, table: str, **operation: Any) -> pb.MigrateResponse:
    return dest.stub.Migrate(
        pb.MigrateRequest(
            configuration=dest.configuration,
            details=pb.MigrationDetails(schema=dest.schema, table=table, **operation),
        )
    )


def answer(response: pb.MigrateResponse) -> str:
    return str(response.WhichOneof("response"))


def test_dml_migration_script(
    client: DestinationClient, dest: Destination, lake: Lake, tmp_path: Path
) -> None:
    """The reference's ``schema_migrations_input_dml`` shape, plus the column-exists case."""
    outcomes = run_script(
        client,
        dest,
        tmp_path,
        {
            "create_table": {
                "transaction": {
                    "columns": {"id": "INT", "amount": "DOUBLE", "desc": "STRING", "n": "SHORT"},
                    "primary_key": ["id"],
                }
            },
            "ops": [
                {
                    "upsert": {
                        "transaction": [
                            {"id": 1, "amount": 100.45, "desc": None, "n": 1},
                            {"id": 2, "amount": 150.33, "desc": "two", "n": 2},
                        ]
                    }
                }
            ],
            "schema_migration": [
                {
                    "copy_column": [
                        {"table": "transaction", "from_column": "desc", "to_column": "desc_copy"},
                        {"table": "transaction", "from_column": "n", "to_column": "n_copy"},
                    ],
                    "update_column_value": [
                        {"table": "transaction", "column": "amount", "value": "202.57"}
                    ],
                    "add_column_with_default_value": [
                        {
                            "table": "transaction",
                            "column": "operation_time",
                            "data_type": "UTC_DATETIME",
                            "default_value": "2005-05-28T20:57:00Z",
                        },
                        # The column exists already: no ADD, the UPDATE still runs.
                        {
                            "table": "transaction",
                            "column": "desc_copy",
                            "data_type": "STRING",
                            "default_value": "filled",
                        },
                    ],
                    "set_column_to_null": [{"table": "transaction", "column": "desc"}],
                    "copy_table": [{"from_table": "transaction", "to_table": "transaction_new"}],
                    "rename_column": [
                        {"table": "transaction", "from_column": "amount", "to_column": "amt"},
                        {"table": "transaction", "from_column": "n", "to_column": "n_renamed"},
                    ],
                    "rename_table": [
                        {"from_table": "transaction_new", "to_table": "transaction_renamed"}
                    ],
                    "drop_table": [{"table": "transaction_drop"}, {"table": "transaction"}],
                }
            ],
        },
    )
    assert outcomes.count("task") == 0
    assert dest.describe("transaction").WhichOneof("response") == "not_found"
    assert dest.describe("transaction_new").WhichOneof("response") == "not_found"
    assert described(dest, "transaction_renamed") == [
        ("id", "INT", True),
        ("amount", "DOUBLE", False),
        ("desc", "STRING", False),
        ("n", "SHORT", False),
        (SYNCED, "UTC_DATETIME", False),
        (DELETED, "BOOLEAN", False),
        ("desc_copy", "STRING", False),
        ("n_copy", "SHORT", False),
        ("operation_time", "UTC_DATETIME", False),
    ]
    rows = lake.rows(dest.schema, "transaction_renamed", order_by="id")
    assert [
        (r["id"], r["amount"], r["desc"], r["n"], r["desc_copy"], r["n_copy"], r["operation_time"])
        for r in rows
    ] == [
        (1, 202.57, None, 1, "filled", 1, ts("2005-05-28T20:57:00Z")),
        (2, 202.57, None, 2, "filled", 2, ts("2005-05-28T20:57:00Z")),
    ]


def test_rename_column_keeps_fivetran_types(dest: Destination, lake: Lake) -> None:
    columns = [column("id", "INT", pk=True), column("n", "SHORT"), column("j", "JSON")]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    rename = pb.RenameOperation(rename_column=pb.RenameColumn(from_column="n", to_column="m"))
    assert answer(migrate(dest, "t", rename=rename)) == "success"
    # A retry after success: the source column is gone, the target exists -> converges.
    assert answer(migrate(dest, "t", rename=rename)) == "success"
    assert described(dest, "t") == [
        ("id", "INT", True),
        ("m", "SHORT", False),
        ("j", "JSON", False),
    ]


def test_sync_modes_migration_script(
    client: DestinationClient, dest: Destination, lake: Lake, tmp_path: Path
) -> None:
    """The reference's ``schema_migrations_input_sync_modes`` shape."""
    run_script(
        client,
        dest,
        tmp_path,
        {
            "create_table": {
                "transaction": {
                    "columns": {"id": "INT", "amount": "DOUBLE", "desc": "STRING"},
                    "primary_key": ["id"],
                },
                "transaction_history": {
                    "columns": {"id": "INT", "amount": "DOUBLE", "desc": "STRING"},
                    "primary_key": ["id"],
                    "history_mode": True,
                },
                "plain": {"columns": {"id": "INT", "v": "STRING"}, "primary_key": ["id"]},
            },
            "ops": [
                {
                    "upsert": {
                        "transaction": [
                            {"id": 1, "amount": 1.5, "desc": "one"},
                            {"id": 2, "amount": 2.5, "desc": "two"},
                            {"id": 3, "amount": 3.5, "desc": "three"},
                        ],
                        "plain": [{"id": 1, "v": "a"}],
                        "transaction_history": [
                            {
                                "id": 10,
                                "amount": 100,
                                "desc": "old",
                                "op_time": "2005-05-26T20:57:00Z",
                            },
                            {
                                "id": 10,
                                "amount": 200,
                                "desc": "new",
                                "op_time": "2005-05-27T20:57:00Z",
                            },
                            {
                                "id": 11,
                                "amount": 300,
                                "desc": None,
                                "op_time": "2005-05-26T20:57:00Z",
                            },
                        ],
                    }
                },
                {"soft_delete": {"transaction": [{"id": 3}]}},
            ],
            "schema_migration": [
                {
                    "add_column_in_history_mode": [
                        {
                            "table": "transaction_history",
                            "column": "extra",
                            "data_type": "INT",
                            "default_value": "7",
                            "operation_timestamp": "2005-05-28T20:57:00Z",
                        }
                    ],
                    "drop_column_in_history_mode": [
                        {
                            "table": "transaction_history",
                            "column": "desc",
                            "operation_timestamp": "2005-05-28T20:57:00Z",
                        }
                    ],
                    "copy_table_to_history_mode": [
                        {
                            "from_table": "transaction",
                            "to_table": "new_transaction_history",
                            "deleted_column": DELETED,
                        }
                    ],
                    "migrate_soft_delete_to_history": [
                        {"table": "transaction", "deleted_column": DELETED},
                        # No soft-delete column at all: every row is active.
                        {"table": "plain", "deleted_column": "no_such_column"},
                    ],
                    "migrate_history_to_soft_delete": [
                        {"table": "new_transaction_history", "deleted_column": DELETED}
                    ],
                }
            ],
        },
    )
    at = ts("2005-05-28T20:57:00Z")
    closed = ts("2005-05-28T20:56:59.999Z")
    history = lake.rows(dest.schema, "transaction_history", order_by="id")
    state = sorted(
        (
            (r["id"], r["amount"], r["desc"], r["extra"], r[START], r[END], r[ACTIVE])
            for r in history
        ),
        key=lambda row: (row[0], row[4]),
    )
    assert state == [
        (10, 100.0, "old", None, ts("2005-05-26T20:57:00Z"), ts("2005-05-27T20:56:59.999Z"), False),
        (10, 200.0, "new", None, ts("2005-05-27T20:57:00Z"), closed, False),
        (10, 200.0, None, 7, at, TMAX, True),
        (11, 300.0, None, None, ts("2005-05-26T20:57:00Z"), closed, False),
        (11, 300.0, None, 7, at, TMAX, True),
    ]
    assert ("desc", "STRING", False) in described(dest, "transaction_history")

    # SOFT_DELETE_TO_HISTORY in place: soft-deleted row 3 -> inactive at the minimum time.
    expected_history = [
        ("id", "INT", True),
        ("amount", "DOUBLE", False),
        ("desc", "STRING", False),
        (SYNCED, "UTC_DATETIME", False),
        (START, "UTC_DATETIME", True),
        (END, "UTC_DATETIME", False),
        (ACTIVE, "BOOLEAN", False),
    ]
    assert described(dest, "transaction") == expected_history
    rows = timeline(lake, dest, "transaction")
    latest = max(rows, key=lambda r: r[SYNCED])["synced"]
    assert [(r["id"], r["start"], r["end"], r[ACTIVE]) for r in rows] == [
        (1, latest, TMAX_TEXT, True),
        (2, latest, TMAX_TEXT, True),
        (3, TMIN, TMIN, False),
    ]
    assert [(r["id"], r[ACTIVE], r["end"]) for r in timeline(lake, dest, "plain")] == [
        (1, True, TMAX_TEXT)
    ]

    # copy_table_to_history_mode, then HISTORY_TO_SOFT_DELETE back: deleted = NOT active.
    assert described(dest, "new_transaction_history") == [
        ("id", "INT", True),
        ("amount", "DOUBLE", False),
        ("desc", "STRING", False),
        (SYNCED, "UTC_DATETIME", False),
        (DELETED, "BOOLEAN", False),
    ]
    back = lake.rows(dest.schema, "new_transaction_history", order_by="id")
    assert [(r["id"], r["desc"], r[DELETED]) for r in back] == [
        (1, "one", False),
        (2, "two", False),
        (3, "three", True),
    ]


def test_bad_requests_answer_a_task_and_change_nothing(dest: Destination, lake: Lake) -> None:
    columns = [column("id", "INT", pk=True), column("n", "INT"), column("s", "STRING")]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    header = [c.name for c in columns]
    dest.write("t", columns, replace=[dest.write_file(header, [["1", "5", "x"]])])
    before = (
        described(dest, "t"),
        lake.rows(dest.schema, "t"),
        lake.snapshot_count(dest.schema, "t"),
    )

    def task(response: pb.MigrateResponse, *words: str) -> None:
        assert answer(response) == "task", response
        for word in words:
            assert word in response.task.message, response.task.message

    update = pb.UpdateColumnValueOperation
    task(migrate(dest, "t", update_column_value=update(column="nope", value="1")), "'nope'")
    task(migrate(dest, "t", update_column_value=update(column="n", value="abc")), "'abc'", "'n'")
    bad_default = pb.AddOperation(
        add_column_with_default_value=pb.AddColumnWithDefaultValue(
            column="d", column_type=common.NAIVE_DATE, default_value="2024-13-45"
        )
    )
    task(migrate(dest, "t", add=bad_default), "'2024-13-45'", "'d'")
    copy = pb.CopyOperation(copy_column=pb.CopyColumn(from_column="missing", to_column="x"))
    task(migrate(dest, "t", copy=copy), "'missing'")
    history = pb.DropOperation(
        drop_column_in_history_mode=pb.DropColumnInHistoryMode(
            column="n", operation_timestamp="2024-01-01T00:00:00Z"
        )
    )
    task(migrate(dest, "t", drop=history), "history")
    rename = pb.RenameOperation(rename_column=pb.RenameColumn(from_column="n", to_column="s"))
    task(migrate(dest, "t", rename=rename), "'s'")
    task(migrate(dest, "absent", update_column_value=update(column="n", value="1")), "'absent'")
    copy_table = pb.CopyOperation(copy_table=pb.CopyTable(from_table="absent", to_table="x"))
    task(migrate(dest, "absent", copy=copy_table), "'absent'")
    # Dropping a missing table is idempotent; the LIVE sync modes are unsupported.
    assert answer(migrate(dest, "absent", drop=pb.DropOperation(drop_table=True))) == "success"
    for kind in (
        pb.SOFT_DELETE_TO_LIVE,
        pb.HISTORY_TO_LIVE,
        pb.LIVE_TO_SOFT_DELETE,
        pb.LIVE_TO_HISTORY,
    ):
        sync = pb.TableSyncModeMigrationOperation(type=kind)
        assert answer(migrate(dest, "t", table_sync_mode_migration=sync)) == "unsupported"
    after = (
        described(dest, "t"),
        lake.rows(dest.schema, "t"),
        lake.snapshot_count(dest.schema, "t"),
    )
    assert after == before


def fail_once(monkeypatch: pytest.MonkeyPatch, step: str) -> list[str]:
    """Make the first statement whose summary starts with ``step`` fail (after the earlier
    steps of the request ran); returns the log of failed summaries."""
    original = Executor.sql
    failed: list[str] = []

    def sql(self: Executor, text: str, *, what: str, **kwargs: Any) -> list[object]:
        if what.startswith(step) and not failed:
            failed.append(what)
            raise faults.InjectedFault(what)
        return original(self, text, what=what, **kwargs)

    monkeypatch.setattr(Executor, "sql", sql)
    return failed


def test_interrupted_migrations_converge_when_retried(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    columns = [
        column("id", "INT", pk=True),
        column("n", "SHORT"),
        column(SYNCED, "UTC_DATETIME"),
        column(DELETED, "BOOLEAN"),
    ]
    header = [c.name for c in columns]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    dest.write(
        "t",
        columns,
        replace=[
            dest.write_file(
                header,
                [
                    ["1", "5", "2024-01-01T00:00:00Z", "false"],
                    ["2", "6", "2024-01-02T00:00:00Z", "true"],
                ],
            )
        ],
    )

    # add_column_with_default_value: the column is added, then the fill fails; the added
    # column is undone.
    add = pb.AddOperation(
        add_column_with_default_value=pb.AddColumnWithDefaultValue(
            column="d", column_type=common.SHORT, default_value="9"
        )
    )
    failed = fail_once(monkeypatch, "set column 'd'")
    assert answer(migrate(dest, "t", add=add)) == "task"
    assert failed and "d" not in [c for c, _, _ in described(dest, "t")]
    monkeypatch.undo()
    assert answer(migrate(dest, "t", add=add)) == "success"
    assert ("d", "SHORT", False) in described(dest, "t")
    assert {r["d"] for r in lake.rows(dest.schema, "t")} == {9}

    # rename_table: the copy is made, then dropping the source fails.
    rename = pb.RenameOperation(rename_table=pb.RenameTable(from_table="t", to_table="u"))
    failed = fail_once(monkeypatch, "drop table 't'")
    assert answer(migrate(dest, "t", rename=rename)) == "task"
    assert failed and dest.describe("t").WhichOneof("response") == "table"
    monkeypatch.undo()
    assert answer(migrate(dest, "t", rename=rename)) == "success"
    assert dest.describe("t").WhichOneof("response") == "not_found"
    assert sorted((r["id"], r["n"], r["d"]) for r in lake.rows(dest.schema, "u")) == [
        (1, 5, 9),
        (2, 6, 9),
    ]

    # SOFT_DELETE_TO_HISTORY is one REPLACE TABLE ... AS SELECT (one commit), then the
    # identifier fields, the nullability of _fivetran_end/_fivetran_active and the metadata.
    sync = pb.TableSyncModeMigrationOperation(
        type=pb.SOFT_DELETE_TO_HISTORY, soft_deleted_column=DELETED
    )
    # The rewrite fails: the table is as it was.
    snapshots = lake.snapshot_count(dest.schema, "u")
    before = (described(dest, "u"), lake.rows(dest.schema, "u", order_by="id"))
    failed = fail_once(monkeypatch, "rewrite 'u'")
    assert answer(migrate(dest, "u", table_sync_mode_migration=sync)) == "task"
    assert failed and (described(dest, "u"), lake.rows(dest.schema, "u", order_by="id")) == before
    monkeypatch.undo()
    # The rewrite is committed, then the next step fails: the committed rewrite is undone,
    # the table is exactly as it was (rows, DescribeTable, snapshots).
    failed = fail_once(monkeypatch, "make column '_fivetran_end' of 'u' nullable")
    assert answer(migrate(dest, "u", table_sync_mode_migration=sync)) == "task"
    assert failed and (described(dest, "u"), lake.rows(dest.schema, "u", order_by="id")) == before
    # Iceberg's metadata is put back; Delta's RESTORE is a commit of its own after the
    # rewrite's (a Delta table's history only grows).
    delta = lake.catalog == DELTA_CATALOG
    assert lake.snapshot_count(dest.schema, "u") == snapshots + (2 if delta else 0)
    monkeypatch.undo()
    assert answer(migrate(dest, "u", table_sync_mode_migration=sync)) == "success"
    migrated = lake.snapshot_count(dest.schema, "u")
    assert answer(migrate(dest, "u", table_sync_mode_migration=sync)) == "success"
    assert lake.snapshot_count(dest.schema, "u") == migrated  # not rewritten again
    if not delta:  # Iceberg's ALTERs make no snapshot: the rewrite is the one added
        assert migrated == snapshots + 1
    fields = lake.child().table(f"{lake.catalog}.{dest.schema}.u").schema.fields
    # Required exactly as in a history table CreateTable makes: the key. (A Delta table made
    # by REPLACE TABLE ... AS SELECT has nullable columns, and open-source Delta cannot make a
    # nullable column NOT NULL: its key is kept in the column metadata only.)
    assert {f.name: f.nullable for f in fields} == {
        "id": delta,
        "n": True,
        SYNCED: True,
        "d": True,
        START: delta,
        END: True,
        ACTIVE: True,
    }
    assert [c for c, _, pk in described(dest, "u") if pk] == ["id", START]
    rows = timeline(lake, dest, "u")
    assert [(r["id"], r["n"], r["start"], r[ACTIVE]) for r in rows] == [
        (1, 5, "2024-01-02 00:00:00", True),
        (2, 6, TMIN, False),
    ]


def test_soft_delete_to_history_with_a_custom_column_drops_only_fivetran_deleted(
    dest: Destination, lake: Lake
) -> None:
    """The SDK's guide: the request's soft-delete column decides which rows are active, then
    ``_fivetran_deleted`` is dropped if present; a custom soft-delete column keeps its data, in
    place and when the table is copied into history mode."""
    columns = [
        column("id", "INT", pk=True),
        column("n", "SHORT"),
        column(SYNCED, "UTC_DATETIME"),
        column(DELETED, "BOOLEAN"),
        column("is_gone", "BOOLEAN"),
    ]
    header = [c.name for c in columns]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    rows = [
        # _fivetran_deleted and is_gone disagree on purpose: only is_gone may decide.
        ["1", "5", "2024-01-01T00:00:00Z", "true", "false"],
        ["2", "6", "2024-01-02T00:00:00Z", "false", "true"],
        ["3", "7", "2024-01-03T00:00:00Z", "false", "false"],
    ]
    dest.write("t", columns, replace=[dest.write_file(header, rows)])
    copy = pb.CopyOperation(
        copy_table_to_history_mode=pb.CopyTableToHistoryMode(
            from_table="t", to_table="h", soft_deleted_column="is_gone"
        )
    )
    assert answer(migrate(dest, "t", copy=copy)) == "success"
    sync = pb.TableSyncModeMigrationOperation(
        type=pb.SOFT_DELETE_TO_HISTORY, soft_deleted_column="is_gone"
    )
    assert answer(migrate(dest, "t", table_sync_mode_migration=sync)) == "success"
    latest = "2024-01-03 00:00:00"
    for name in ("t", "h"):
        assert described(dest, name) == [
            ("id", "INT", True),
            ("n", "SHORT", False),
            (SYNCED, "UTC_DATETIME", False),
            ("is_gone", "BOOLEAN", False),
            (START, "UTC_DATETIME", True),
            (END, "UTC_DATETIME", False),
            (ACTIVE, "BOOLEAN", False),
        ]
        stored = [f.name for f in lake.child().table(f"{lake.catalog}.{dest.schema}.{name}").schema]
        assert stored == ["id", "n", SYNCED, "is_gone", START, END, ACTIVE]
        assert [
            (r["id"], r["n"], r["is_gone"], r["start"], r["end"], r[ACTIVE])
            for r in timeline(lake, dest, name)
        ] == [
            (1, 5, False, latest, TMAX_TEXT, True),
            (2, 6, True, TMIN, TMIN, False),
            (3, 7, False, latest, TMAX_TEXT, True),
        ]
