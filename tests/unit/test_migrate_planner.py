"""The Migrate planner (pure): which tables it needs, what it plans in every state a retry can
meet, what it refuses; plus the proto -> request mapping of MigrationDetails."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from spark_destination.core.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.core.model import Column, DataType, Table
from spark_destination.core.requests import (
    AddColumnInHistoryMode,
    AddColumnWithDefaultValue,
    CopyColumn,
    CopyTable,
    CopyTableToHistoryMode,
    DropColumnInHistoryMode,
    DropTable,
    MigrateRequest,
    MigrationOperation,
    RenameColumn,
    RenameTable,
    SyncModeMigrationType,
    TableSyncModeMigration,
    UpdateColumnValue,
)
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CopyRowsOp,
    CopyRowsToHistoryOp,
    CreateTableOp,
    DropColumnsOp,
    DropNotNullOp,
    DropTableOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    Plan,
    RenameColumnOp,
    RewriteToHistoryOp,
    SetColumnValueOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    TableRef,
)
from spark_destination.planner.migrate import migrate_tables, plan_migrate
from spark_destination.server import mapping
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

TS = "2005-05-28T20:57:00Z"
SOFT = Table(
    name="t",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="n", type=DataType.SHORT),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
    ),
)
HISTORY = Table(
    name="t",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="n", type=DataType.SHORT),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
    ),
)


HISTORY_REF = TableRef(catalog="lake", schema="s", name="t")


def request(operation: MigrationOperation, table: str = "t") -> MigrateRequest:
    return MigrateRequest(schema="s", table=table, operation=operation)


def plan(operation: MigrationOperation, **tables: Table | None) -> Plan:
    migration = request(operation)
    state = {name: tables.get(name) for name in migrate_tables(migration)}
    return plan_migrate(migration, state, catalog="lake", target=SPARK_ICEBERG)


def kinds(result: Plan) -> list[type]:
    return [type(op) for op in result.ops]


def stored(op: object) -> dict[str, Column]:
    assert isinstance(op, SetPropertiesOp)
    return metadata.decode(dict(op.properties)[metadata.PROPERTY])


def sync(kind: SyncModeMigrationType) -> TableSyncModeMigration:
    return TableSyncModeMigration(type=kind, soft_deleted_column="_fivetran_deleted")


def test_tables_each_operation_needs() -> None:
    assert migrate_tables(request(DropTable())) == ("t",)
    assert migrate_tables(request(CopyTable(from_table="a", to_table="b"))) == ("a", "b")
    assert migrate_tables(request(RenameTable(from_table="", to_table="b"))) == ("t", "b")
    assert migrate_tables(request(sync(SyncModeMigrationType.SOFT_DELETE_TO_HISTORY))) == ("t",)
    assert migrate_tables(request(sync(SyncModeMigrationType.HISTORY_TO_SOFT_DELETE))) == ("t",)


def test_drop_table_is_idempotent() -> None:
    assert plan(DropTable()).noop_reason is not None
    assert kinds(plan(DropTable(), t=SOFT)) == [DropTableOp]


@pytest.mark.parametrize(
    "operation",
    [
        UpdateColumnValue(column="n", value="1"),
        AddColumnWithDefaultValue(column="c", column_type=DataType.INT, default_value="1"),
        CopyColumn(from_column="n", to_column="m"),
        RenameColumn(from_column="n", to_column="m"),
        CopyTable(from_table="t", to_table="u"),
        RenameTable(from_table="t", to_table="u"),
        CopyTableToHistoryMode(from_table="t", to_table="u"),
        AddColumnInHistoryMode(
            column="c", column_type=DataType.INT, default_value="1", operation_timestamp=TS
        ),
        DropColumnInHistoryMode(column="n", operation_timestamp=TS),
        TableSyncModeMigration(type=SyncModeMigrationType.SOFT_DELETE_TO_HISTORY),
        TableSyncModeMigration(type=SyncModeMigrationType.HISTORY_TO_SOFT_DELETE),
    ],
    ids=lambda op: type(op).__name__,
)
def test_a_missing_table_is_an_invalid_request(operation: MigrationOperation) -> None:
    with pytest.raises(InvalidRequestError, match="'t' does not exist"):
        plan(operation)


@pytest.mark.parametrize(
    "kind",
    [
        SyncModeMigrationType.SOFT_DELETE_TO_LIVE,
        SyncModeMigrationType.HISTORY_TO_LIVE,
        SyncModeMigrationType.LIVE_TO_SOFT_DELETE,
        SyncModeMigrationType.LIVE_TO_HISTORY,
    ],
)
def test_live_sync_modes_are_unsupported(kind: SyncModeMigrationType) -> None:
    with pytest.raises(UnsupportedOperationError):
        plan(TableSyncModeMigration(type=kind), t=SOFT)


@pytest.mark.parametrize("value", ["NULL", ""])
def test_update_column_value_null_needs_no_check(value: str) -> None:
    result = plan(UpdateColumnValue(column="n", value=value), t=SOFT)
    assert result.ops == (
        SetColumnValueOp(table=result.ops[0].table, column=SOFT.columns[1], value=None),  # type: ignore[union-attr]
    )


def test_update_column_value_checks_the_value_first_and_refuses_bad_columns() -> None:
    result = plan(UpdateColumnValue(column="n", value="12"), t=SOFT)
    assert kinds(result) == [CheckLiteralOp, SetColumnValueOp]
    assert result.ops[0] == CheckLiteralOp(column=SOFT.columns[1], value="12")
    with pytest.raises(InvalidRequestError, match="no column 'x'"):
        plan(UpdateColumnValue(column="x", value="1"), t=SOFT)
    with pytest.raises(InvalidRequestError, match="primary key"):
        plan(UpdateColumnValue(column="id", value="1"), t=SOFT)


def test_add_column_with_default_writes_metadata_then_adds_then_fills() -> None:
    operation = AddColumnWithDefaultValue(column="c", column_type=DataType.SHORT, default_value="3")
    result = plan(operation, t=SOFT)
    assert kinds(result) == [CheckLiteralOp, SetPropertiesOp, AddColumnsOp, SetColumnValueOp]
    assert stored(result.ops[1])["c"].type is DataType.SHORT
    # Retry after the ADD (or the column existed): no ADD, the UPDATE still runs, typed from
    # the existing column.
    added = Table(name="t", columns=(*SOFT.columns, Column(name="c", type=DataType.INT)))
    result = plan(operation, t=added)
    assert kinds(result) == [CheckLiteralOp, SetColumnValueOp]
    assert result.ops[1].column == added.columns[-1]  # type: ignore[union-attr]
    # A NULL default on a new column needs no fill.
    empty = AddColumnWithDefaultValue(column="c", column_type=DataType.INT, default_value="")
    assert kinds(plan(empty, t=SOFT)) == [SetPropertiesOp, AddColumnsOp]


def test_copy_column_adds_the_column_only_once() -> None:
    operation = CopyColumn(from_column="n", to_column="m")
    assert kinds(plan(operation, t=SOFT)) == [SetPropertiesOp, AddColumnsOp, SetColumnValueOp]
    copied = Table(name="t", columns=(*SOFT.columns, Column(name="m", type=DataType.INT)))
    result = plan(operation, t=copied)
    assert result.ops == (
        SetColumnValueOp(table=result.ops[0].table, column=copied.columns[-1], from_column="n"),  # type: ignore[union-attr]
    )
    clash = Table(name="t", columns=(*SOFT.columns, Column(name="m", type=DataType.STRING)))
    with pytest.raises(InvalidRequestError, match="'m'"):
        plan(operation, t=clash)


def test_rename_column_in_every_state() -> None:
    operation = RenameColumn(from_column="n", to_column="m")
    result = plan(operation, t=SOFT)
    assert kinds(result) == [SetPropertiesOp, RenameColumnOp, SetPropertiesOp]
    assert {"n", "m"} <= set(stored(result.ops[0]))
    assert "n" not in stored(result.ops[2]) and stored(result.ops[2])["m"].type is DataType.SHORT
    renamed = Table(
        name="t",
        columns=tuple(
            c if c.name != "n" else Column(name="m", type=DataType.SHORT) for c in SOFT.columns
        ),
    )
    assert kinds(plan(operation, t=renamed)) == [SetPropertiesOp]
    both = Table(name="t", columns=(*SOFT.columns, Column(name="m", type=DataType.INT)))
    with pytest.raises(InvalidRequestError, match="already has a column 'm'"):
        plan(operation, t=both)
    with pytest.raises(InvalidRequestError, match="no column 'x'"):
        plan(RenameColumn(from_column="x", to_column="y"), t=SOFT)


def test_copy_and_rename_table_in_every_state() -> None:
    u = Table(name="u", columns=SOFT.columns)
    copy = CopyTable(from_table="t", to_table="u")
    assert kinds(plan(copy, t=SOFT)) == [CreateTableOp, SetPrimaryKeyOp, CopyRowsOp]
    assert kinds(plan(copy, t=SOFT, u=u)) == [SetPrimaryKeyOp, CopyRowsOp]
    rename = RenameTable(from_table="t", to_table="u")
    assert kinds(plan(rename, t=SOFT)) == [
        CreateTableOp,
        SetPrimaryKeyOp,
        CopyRowsOp,
        DropTableOp,
    ]
    assert kinds(plan(rename, t=SOFT, u=u)) == [SetPrimaryKeyOp, CopyRowsOp, DropTableOp]
    assert plan(rename, u=u).noop_reason is not None
    other = Table(name="u", columns=SOFT.columns[:2])
    with pytest.raises(InvalidRequestError, match="already exists with other columns"):
        plan(rename, t=SOFT, u=other)
    with pytest.raises(InvalidRequestError, match="same table"):
        plan(CopyTable(from_table="t", to_table="t"), t=SOFT)


def test_copy_table_to_history_mode_drops_the_soft_delete_column() -> None:
    result = plan(
        CopyTableToHistoryMode(
            from_table="t", to_table="h", soft_deleted_column="_fivetran_deleted"
        ),
        t=SOFT,
    )
    create, ident, rows = result.ops
    assert isinstance(create, CreateTableOp) and isinstance(rows, CopyRowsToHistoryOp)
    assert [c.name for c in create.columns] == [
        "id",
        "n",
        "_fivetran_synced",
        "_fivetran_start",
        "_fivetran_end",
        "_fivetran_active",
    ]
    assert ident == SetPrimaryKeyOp(table=create.table, columns=("id", "_fivetran_start"))
    assert rows.deleted == "_fivetran_deleted" and rows.synced == "_fivetran_synced"
    # No such column in the source: every row is active.
    absent = plan(
        CopyTableToHistoryMode(from_table="t", to_table="h", soft_deleted_column="x"), t=SOFT
    )
    assert absent.ops[-1].deleted is None  # type: ignore[union-attr]
    with pytest.raises(InvalidRequestError, match="already a history-mode table"):
        plan(CopyTableToHistoryMode(from_table="t", to_table="h"), t=HISTORY)


def test_soft_delete_to_history_rewrites_the_table_in_one_commit() -> None:
    operation = sync(SyncModeMigrationType.SOFT_DELETE_TO_HISTORY)
    rewrite, ident, end, active, meta = plan(operation, t=SOFT).ops
    ref = HISTORY_REF
    assert rewrite == RewriteToHistoryOp(
        table=ref,
        columns=SOFT.columns[:3],  # _fivetran_deleted is dropped
        deleted="_fivetran_deleted",
        synced="_fivetran_synced",
        start="_fivetran_start",
        end="_fivetran_end",
        active="_fivetran_active",
    )
    assert ident == SetPrimaryKeyOp(table=ref, columns=("id", "_fivetran_start"))
    assert (end, active) == (
        DropNotNullOp(table=ref, column="_fivetran_end"),
        DropNotNullOp(table=ref, column="_fivetran_active"),
    )
    # The metadata comes last: DescribeTable shows the history key only once all is done.
    assert tuple(stored(meta).values()) == HISTORY.columns
    # No such column in the table: every row is active; _fivetran_deleted still goes.
    absent = plan(
        TableSyncModeMigration(
            type=SyncModeMigrationType.SOFT_DELETE_TO_HISTORY, soft_deleted_column="x"
        ),
        t=SOFT,
    ).ops[0]
    assert isinstance(absent, RewriteToHistoryOp)
    assert absent.deleted is None and absent.columns == SOFT.columns[:3]


def test_soft_delete_to_history_keeps_a_custom_soft_delete_column() -> None:
    gone = Column(name="is_gone", type=DataType.BOOLEAN)
    table = Table(name="t", columns=(*SOFT.columns, gone))
    custom = TableSyncModeMigration(
        type=SyncModeMigrationType.SOFT_DELETE_TO_HISTORY, soft_deleted_column="is_gone"
    )
    rewrite, *_, meta = plan(custom, t=table).ops
    assert isinstance(rewrite, RewriteToHistoryOp)
    assert rewrite.deleted == "is_gone"
    assert rewrite.columns == (*SOFT.columns[:3], gone)
    assert [c.name for c in stored(meta).values()] == [
        "id",
        "n",
        "_fivetran_synced",
        "is_gone",
        "_fivetran_start",
        "_fivetran_end",
        "_fivetran_active",
    ]
    # Copying into history mode follows the same rule.
    copy = plan(
        CopyTableToHistoryMode(from_table="t", to_table="h", soft_deleted_column="is_gone"),
        t=table,
    )
    create, _, rows = copy.ops
    assert isinstance(create, CreateTableOp) and isinstance(rows, CopyRowsToHistoryOp)
    assert "_fivetran_deleted" not in [c.name for c in create.columns]
    assert rows.deleted == "is_gone" and "is_gone" in rows.columns
    # Without a soft-delete column the copy is LIVE_TO_HISTORY: every column stays.
    live = plan(CopyTableToHistoryMode(from_table="t", to_table="h"), t=table).ops[0]
    assert isinstance(live, CreateTableOp)
    assert "_fivetran_deleted" in [c.name for c in live.columns]


def test_soft_delete_to_history_resumes_after_the_rewrite() -> None:
    operation = sync(SyncModeMigrationType.SOFT_DELETE_TO_HISTORY)
    # Rewritten, metadata not yet written: DescribeTable knows the old key only, and the new
    # columns by their physical types.
    rewritten = Table(
        name="t",
        columns=tuple(
            Column(name=c.name, type=c.type, primary_key=c.name == "id") for c in HISTORY.columns
        ),
    )
    assert kinds(plan(operation, t=rewritten)) == [
        SetPrimaryKeyOp,
        DropNotNullOp,
        DropNotNullOp,
        SetPropertiesOp,
    ]
    ident, *_, meta = plan(operation, t=rewritten).ops
    assert ident == SetPrimaryKeyOp(table=HISTORY_REF, columns=("id", "_fivetran_start"))
    assert tuple(stored(meta).values()) == HISTORY.columns
    # Done: nothing left (the metadata names _fivetran_start as a key column).
    assert plan(operation, t=HISTORY).noop_reason is not None


def test_soft_delete_to_history_refuses_mixed_tables() -> None:
    operation = sync(SyncModeMigrationType.SOFT_DELETE_TO_HISTORY)
    partial = Table(name="t", columns=(*SOFT.columns, HISTORY.columns[-1]))
    with pytest.raises(InvalidRequestError, match="already has column"):
        plan(operation, t=partial)
    both = Table(
        name="t",
        columns=tuple(
            Column(name=c.name, type=c.type, primary_key=c.name == "id")
            for c in (*HISTORY.columns, SOFT.columns[-1])
        ),
    )
    with pytest.raises(InvalidRequestError, match="neither"):
        plan(operation, t=both)
    keyed = TableSyncModeMigration(
        type=SyncModeMigrationType.SOFT_DELETE_TO_HISTORY, soft_deleted_column="id"
    )
    with pytest.raises(InvalidRequestError, match="primary key"):
        plan(keyed, t=SOFT)


def test_history_to_soft_delete_in_place_and_after_an_interruption() -> None:
    operation = sync(SyncModeMigrationType.HISTORY_TO_SOFT_DELETE)
    result = plan(operation, t=HISTORY)
    assert kinds(result) == [
        SetPropertiesOp,
        AddColumnsOp,
        KeepLatestVersionsOp,
        SetPrimaryKeyOp,
        DropColumnsOp,
        SetPropertiesOp,
    ]
    assert result.ops[3].columns == ("id",)  # type: ignore[union-attr]
    assert list(stored(result.ops[-1])) == ["id", "n", "_fivetran_synced", "_fivetran_deleted"]
    assert kinds(plan(operation, t=SOFT)) == [SetPropertiesOp]
    keyless = Table(name="t", columns=SOFT.columns[:3])
    with pytest.raises(InvalidRequestError, match="history-mode table"):
        plan(operation, t=keyless)


def test_add_and_drop_column_in_history_mode() -> None:
    add = AddColumnInHistoryMode(
        column="c", column_type=DataType.INT, default_value="7", operation_timestamp=TS
    )
    result = plan(add, t=HISTORY)
    assert kinds(result) == [
        CheckLiteralOp,
        CheckHistoryStartOp,
        SetPropertiesOp,
        AddColumnsOp,
        HistoryColumnChangeOp,
    ]
    change = result.ops[-1]
    assert isinstance(change, HistoryColumnChangeOp)
    assert change.operation_timestamp == datetime(2005, 5, 28, 20, 57, tzinfo=UTC)
    assert change.key == ("id",) and change.value == "7" and not change.only_non_null
    with_c = Table(name="t", columns=(*HISTORY.columns, Column(name="c", type=DataType.INT)))
    assert kinds(plan(add, t=with_c)) == [
        CheckLiteralOp,
        CheckHistoryStartOp,
        HistoryColumnChangeOp,
    ]
    with pytest.raises(InvalidRequestError, match="history-mode table"):
        plan(add, t=SOFT)
    bad_ts = AddColumnInHistoryMode(
        column="c", column_type=DataType.INT, default_value="7", operation_timestamp="yesterday"
    )
    with pytest.raises(InvalidRequestError, match="'yesterday'"):
        plan(bad_ts, t=HISTORY)

    drop = plan(DropColumnInHistoryMode(column="n", operation_timestamp=TS), t=HISTORY)
    assert kinds(drop) == [CheckHistoryStartOp, HistoryColumnChangeOp]
    assert drop.ops[-1].value is None and drop.ops[-1].only_non_null  # type: ignore[union-attr]
    for column in ("id", "_fivetran_start", "x"):
        with pytest.raises(InvalidRequestError):
            plan(DropColumnInHistoryMode(column=column, operation_timestamp=TS), t=HISTORY)


def details(**operation: object) -> pb.MigrateRequest:
    return pb.MigrateRequest(details=pb.MigrationDetails(schema="s", table="t", **operation))


def test_proto_mapping_of_every_operation() -> None:
    cases: list[tuple[pb.MigrateRequest, MigrationOperation]] = [
        (details(drop=pb.DropOperation(drop_table=True)), DropTable()),
        (
            details(
                drop=pb.DropOperation(
                    drop_column_in_history_mode=pb.DropColumnInHistoryMode(
                        column="c", operation_timestamp=TS
                    )
                )
            ),
            DropColumnInHistoryMode(column="c", operation_timestamp=TS),
        ),
        (
            details(copy=pb.CopyOperation(copy_table=pb.CopyTable(from_table="a", to_table="b"))),
            CopyTable(from_table="a", to_table="b"),
        ),
        (
            details(
                copy=pb.CopyOperation(copy_column=pb.CopyColumn(from_column="a", to_column="b"))
            ),
            CopyColumn(from_column="a", to_column="b"),
        ),
        (
            details(
                copy=pb.CopyOperation(
                    copy_table_to_history_mode=pb.CopyTableToHistoryMode(
                        from_table="a", to_table="b", soft_deleted_column="d"
                    )
                )
            ),
            CopyTableToHistoryMode(from_table="a", to_table="b", soft_deleted_column="d"),
        ),
        (
            details(
                rename=pb.RenameOperation(rename_table=pb.RenameTable(from_table="a", to_table="b"))
            ),
            RenameTable(from_table="a", to_table="b"),
        ),
        (
            details(
                rename=pb.RenameOperation(
                    rename_column=pb.RenameColumn(from_column="a", to_column="b")
                )
            ),
            RenameColumn(from_column="a", to_column="b"),
        ),
        (
            details(
                add=pb.AddOperation(
                    add_column_with_default_value=pb.AddColumnWithDefaultValue(
                        column="c", column_type=common.SHORT, default_value="1"
                    )
                )
            ),
            AddColumnWithDefaultValue(column="c", column_type=DataType.SHORT, default_value="1"),
        ),
        (
            details(
                add=pb.AddOperation(
                    add_column_in_history_mode=pb.AddColumnInHistoryMode(
                        column="c",
                        column_type=common.INT,
                        default_value="1",
                        operation_timestamp=TS,
                    )
                )
            ),
            AddColumnInHistoryMode(
                column="c", column_type=DataType.INT, default_value="1", operation_timestamp=TS
            ),
        ),
        (
            details(update_column_value=pb.UpdateColumnValueOperation(column="c", value="NULL")),
            UpdateColumnValue(column="c", value="NULL"),
        ),
        (
            details(
                table_sync_mode_migration=pb.TableSyncModeMigrationOperation(
                    type=pb.HISTORY_TO_SOFT_DELETE, soft_deleted_column="d"
                )
            ),
            TableSyncModeMigration(
                type=SyncModeMigrationType.HISTORY_TO_SOFT_DELETE, soft_deleted_column="d"
            ),
        ),
    ]
    for message, expected in cases:
        assert mapping.migrate_from_proto(message) == request(expected)
    # An unset type decodes as SOFT_DELETE_TO_LIVE (value 0), which is unsupported.
    unset = details(table_sync_mode_migration=pb.TableSyncModeMigrationOperation())
    assert mapping.migrate_from_proto(unset).operation == TableSyncModeMigration(
        type=SyncModeMigrationType.SOFT_DELETE_TO_LIVE
    )
    with pytest.raises(UnsupportedOperationError, match="no known operation"):
        mapping.migrate_from_proto(details())
    with pytest.raises(UnsupportedOperationError, match="without a known entity"):
        mapping.migrate_from_proto(details(drop=pb.DropOperation()))
