"""The planner and metadata are pure: plans are compared by value, no Spark involved."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from spark_destination.core.config import parse_config
from spark_destination.core.errors import (
    ConfigurationError,
    InvalidRequestError,
    TableMetadataError,
)
from spark_destination.core.model import Column, DataType, DecimalParams, FileParams, Table
from spark_destination.core.requests import (
    AlterTableRequest,
    BatchFiles,
    CreateTableRequest,
    SoftTruncate,
    TableName,
    TruncateRequest,
    WriteBatchRequest,
)
from spark_destination.dialects.render import render
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    CreateNamespaceOp,
    CreateTableOp,
    MergeBatchOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    StageBatchOp,
    TruncateOp,
)
from spark_destination.planner.schema import plan_alter_table, plan_create_table
from spark_destination.planner.truncate import plan_truncate
from spark_destination.planner.write import plan_write_batch

ID = Column(name="id", type=DataType.INT, primary_key=True)
AMOUNT = Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2))
SYNCED = Column(name="_fivetran_synced", type=DataType.UTC_DATETIME)
ORDERS = Table(name="orders", columns=(ID, AMOUNT, SYNCED))
PARAMS = FileParams(null_string="N", unmodified_string="U")


def write_request(table: Table = ORDERS, **files: tuple[str, ...]) -> WriteBatchRequest:
    """``replace_files=``, ``update_files=``, ``delete_files=`` as in the protocol."""
    paths = [p for group in files.values() for p in group]
    kinds = {k.removesuffix("_files"): v for k, v in files.items()}
    batch = BatchFiles(params=PARAMS, keys=dict.fromkeys(paths, b"k" * 32), **kinds)
    return WriteBatchRequest(schema="s", table=table, files=batch)


def test_create_table_creates_namespace_table_and_identifier_fields() -> None:
    plan = plan_create_table(
        CreateTableRequest(schema="s", table=ORDERS), None, catalog="lake", target=SPARK_ICEBERG
    )
    kinds = [type(op) for op in plan.ops]
    assert kinds == [CreateNamespaceOp, CreateTableOp, SetPrimaryKeyOp]
    create = plan.ops[1]
    assert isinstance(create, CreateTableOp)
    stored = dict(create.properties)[metadata.PROPERTY]
    assert metadata.decode(stored) == {c.name: c for c in ORDERS.columns}
    # The table format's properties are the dialect's, added when the statement is rendered.
    assert all(key != "write.merge.mode" for key, _ in create.properties)
    (rendered,) = render(create, SPARK_ICEBERG)
    assert "'write.merge.mode'='merge-on-read'" in rendered.sql


def test_create_table_refuses_an_existing_table() -> None:
    with pytest.raises(InvalidRequestError, match="already exists"):
        plan_create_table(
            CreateTableRequest(schema="s", table=ORDERS),
            ORDERS,
            catalog="lake",
            target=SPARK_ICEBERG,
        )


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ((), "no columns"),
        ((ID, ID), "twice"),
        ((Column(name="x", type=DataType.UNSPECIFIED),), "UNSPECIFIED"),
        (
            (
                Column(
                    name="x", type=DataType.DECIMAL, decimal=DecimalParams(precision=39, scale=2)
                ),
            ),
            "not representable",
        ),
        (
            (Column(name="x", type=DataType.DECIMAL, decimal=DecimalParams(precision=5, scale=6)),),
            "not representable",
        ),
    ],
)
def test_create_table_rejects_impossible_definitions(
    columns: tuple[Column, ...], message: str
) -> None:
    request = CreateTableRequest(schema="s", table=Table(name="t", columns=columns))
    with pytest.raises(InvalidRequestError, match=message):
        plan_create_table(request, None, catalog="lake", target=SPARK_ICEBERG)


def test_write_batch_stages_files_in_replace_update_delete_order() -> None:
    request = write_request(replace_files=("r1", "r2"), update_files=("u1",), delete_files=("d1",))
    plan = plan_write_batch(request, ORDERS, catalog="lake", target=SPARK_ICEBERG)
    stage, merge = plan.ops
    assert isinstance(stage, StageBatchOp) and isinstance(merge, MergeBatchOp)
    # The staged view is typed and checked as it is decoded: the stage op carries the types.
    assert stage.columns == merge.columns and stage.key == merge.key
    assert (stage.null_string, stage.unmodified_string) == ("N", "U")
    assert [(f.kind.value, f.path) for f in stage.files] == [
        ("replace", "r1"),
        ("replace", "r2"),
        ("update", "u1"),
        ("delete", "d1"),
    ]
    assert merge.key == ("id",) and merge.has_upserts
    assert (merge.null_string, merge.unmodified_string) == ("N", "U")


def test_write_batch_filters_the_scan_only_by_keys_whose_literals_compare_exactly() -> None:
    table = Table(
        name="events",
        columns=(
            Column(name="n", type=DataType.LONG, primary_key=True),
            Column(name="at", type=DataType.UTC_DATETIME, primary_key=True),
            Column(name="code", type=DataType.STRING, primary_key=True),
            Column(
                name="amount",
                type=DataType.DECIMAL,
                primary_key=True,
                decimal=DecimalParams(precision=10, scale=2),
            ),
            Column(name="day", type=DataType.NAIVE_DATE, primary_key=True),
            SYNCED,
        ),
    )
    merge = plan_write_batch(
        write_request(table, replace_files=("r",)), table, catalog="l", target=SPARK_ICEBERG
    ).ops[-1]
    assert isinstance(merge, MergeBatchOp)
    assert merge.filter_key == ("n", "code", "day")


def test_write_batch_without_replace_files_never_inserts() -> None:
    plan = plan_write_batch(
        write_request(update_files=("u",)), ORDERS, catalog="lake", target=SPARK_ICEBERG
    )
    merge = plan.ops[-1]
    assert isinstance(merge, MergeBatchOp) and not merge.has_upserts


def test_write_batch_keyless_table_matches_on_fivetran_id() -> None:
    table = Table(
        name="events",
        columns=(Column(name="_fivetran_id", type=DataType.STRING, primary_key=True), SYNCED),
    )
    merge = plan_write_batch(
        write_request(table, replace_files=("r",)), table, catalog="l", target=SPARK_ICEBERG
    ).ops[-1]
    assert isinstance(merge, MergeBatchOp) and merge.key == ("_fivetran_id",)


def test_write_batch_errors_name_the_problem() -> None:
    with pytest.raises(InvalidRequestError, match="does not exist"):
        plan_write_batch(
            write_request(replace_files=("r",)), None, catalog="lake", target=SPARK_ICEBERG
        )
    wider = Table(name="orders", columns=(*ORDERS.columns, Column(name="new", type=DataType.INT)))
    with pytest.raises(InvalidRequestError, match="'new'"):
        plan_write_batch(
            write_request(wider, replace_files=("r",)), ORDERS, catalog="lake", target=SPARK_ICEBERG
        )
    missing_key = WriteBatchRequest(
        schema="s", table=ORDERS, files=BatchFiles(replace=("r",), params=PARAMS, keys={})
    )
    with pytest.raises(InvalidRequestError, match="no decryption key.*r"):
        plan_write_batch(missing_key, ORDERS, catalog="lake", target=SPARK_ICEBERG)


def test_write_batch_refuses_a_reserved_column_as_create_and_alter_do() -> None:
    # Named by the rule, not as a column the table lacks; before the table is looked at.
    reserved = Table(
        name="orders", columns=(*ORDERS.columns, Column(name="__sd_op", type=DataType.INT))
    )
    for current in (ORDERS, None):
        with pytest.raises(InvalidRequestError, match="'__sd_op' starts with '__sd_'"):
            plan_write_batch(
                write_request(reserved, replace_files=("r",)),
                current,
                catalog="lake",
                target=SPARK_ICEBERG,
            )


def test_write_batch_with_no_files_is_a_noop() -> None:
    assert plan_write_batch(
        write_request(), ORDERS, catalog="lake", target=SPARK_ICEBERG
    ).noop_reason


def test_empty_sentinels_mean_no_sentinel() -> None:
    request = WriteBatchRequest(
        schema="s",
        table=ORDERS,
        files=BatchFiles(
            replace=("r",),
            keys={"r": b"k" * 32},
            params=FileParams(null_string="", unmodified_string=""),
        ),
    )
    merge = plan_write_batch(request, ORDERS, catalog="lake", target=SPARK_ICEBERG).ops[-1]
    assert isinstance(merge, MergeBatchOp)
    assert merge.null_string is None and merge.unmodified_string is None


def test_alter_table_adds_missing_columns_and_keeps_absent_ones() -> None:
    extra = Column(name="extra", type=DataType.STRING)
    request = AlterTableRequest(schema="s", table=Table(name="orders", columns=(ID, extra)))
    add, props = plan_alter_table(request, ORDERS, catalog="lake", target=SPARK_ICEBERG).ops
    assert isinstance(add, AddColumnsOp) and add.columns == (extra,)
    assert isinstance(props, SetPropertiesOp)
    stored = metadata.decode(dict(props.properties)[metadata.PROPERTY])
    assert list(stored) == ["id", "amount", "_fivetran_synced", "extra"]


def test_alter_table_with_nothing_new_is_a_noop() -> None:
    request = AlterTableRequest(schema="s", table=ORDERS)
    assert plan_alter_table(request, ORDERS, catalog="lake", target=SPARK_ICEBERG).noop_reason


def test_truncate_cuts_at_milliseconds_and_missing_table_is_a_noop() -> None:
    before = datetime(2024, 1, 1, 0, 0, 0, 123999, tzinfo=UTC)
    request = TruncateRequest(
        target=TableName(schema="s", table="orders"),
        synced_column="_fivetran_synced",
        utc_delete_before=before,
    )
    assert plan_truncate(request, None, catalog="lake", target=SPARK_ICEBERG).noop_reason
    (op,) = plan_truncate(request, ORDERS, catalog="lake", target=SPARK_ICEBERG).ops
    assert isinstance(op, TruncateOp)
    assert op.before == datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)
    assert op.soft_deleted_column is None


def test_soft_truncate_adds_the_deleted_column_when_missing() -> None:
    request = TruncateRequest(
        target=TableName(schema="s", table="orders"),
        synced_column="_fivetran_synced",
        utc_delete_before=datetime(2024, 1, 1, tzinfo=UTC),
        soft=SoftTruncate(deleted_column="_fivetran_deleted"),
    )
    add, _props, truncate = plan_truncate(request, ORDERS, catalog="lake", target=SPARK_ICEBERG).ops
    assert isinstance(add, AddColumnsOp) and add.columns[0].type is DataType.BOOLEAN
    assert isinstance(truncate, TruncateOp)
    assert truncate.soft_deleted_column == "_fivetran_deleted"


def test_metadata_keeps_types_iceberg_cannot_tell_apart() -> None:
    columns = (
        Column(name="s", type=DataType.SHORT, primary_key=True),
        Column(name="t", type=DataType.NAIVE_TIME),
        Column(name="j", type=DataType.JSON),
        Column(name="x", type=DataType.XML, string_byte_length=256),
    )
    physical = [
        metadata.PhysicalColumn(name="s", type="int"),
        metadata.PhysicalColumn(name="t", type="string"),
        metadata.PhysicalColumn(name="j", type="string"),
        metadata.PhysicalColumn(name="x", type="string"),
        metadata.PhysicalColumn(name="later", type="decimal(12,3)"),
    ]
    table = metadata.reconcile("t", physical, metadata.encode(columns))
    assert table.columns[:4] == columns
    assert table.columns[4] == Column(
        name="later", type=DataType.DECIMAL, decimal=DecimalParams(precision=12, scale=3)
    )


def test_metadata_that_no_longer_matches_the_physical_type_is_ignored() -> None:
    stored = metadata.encode((Column(name="a", type=DataType.SHORT),))
    table = metadata.reconcile("t", [metadata.PhysicalColumn(name="a", type="bigint")], stored)
    assert table.columns[0].type is DataType.LONG


def test_configuration_defaults_and_validation() -> None:
    config = parse_config({})
    assert (config.warehouse, config.catalog, config.spark_master) == (
        "./warehouse",
        "lake",
        "local[*]",
    )
    assert parse_config({"spark_conf": "spark.a=1; spark.b = x"}).spark_conf == (
        ("spark.a", "1"),
        ("spark.b", "x"),
    )
    for bad in (
        {"catalog": "a-b"},
        {"driver_memory": "lots"},
        {"jar_source": "ftp"},
        {"spark_conf": "executor.memory=4g"},
    ):
        with pytest.raises(ConfigurationError):
            parse_config(bad)


@pytest.mark.parametrize(
    "stored",
    ["*********(redacted)", "{}", '[{"name": "a"}]', '[{"name": "a", "type": "SHORTISH"}]'],
    ids=["redacted-display-text", "not-a-list", "no-type", "unknown-type"],
)
def test_unreadable_metadata_fails_naming_the_table_never_falls_back(stored: str) -> None:
    physical = [metadata.PhysicalColumn(name="a", type="int")]
    with pytest.raises(TableMetadataError) as raised:
        metadata.reconcile("pages", physical, stored)
    message = str(raised.value)
    assert "'pages'" in message and metadata.PROPERTY in message
    assert stored not in message or stored == "{}"


def test_metadata_that_disagrees_with_the_physical_schema_is_reported() -> None:
    stored = metadata.encode((Column(name="a", type=DataType.SHORT, primary_key=True),))
    physical = [
        metadata.PhysicalColumn(name="a", type="bigint"),
        metadata.PhysicalColumn(name="extra", type="string"),
    ]
    told: list[str] = []
    table = metadata.reconcile("t", physical, stored, ("a",), on_mismatch=told.append)
    assert [c.type for c in table.columns] == [DataType.LONG, DataType.STRING]
    assert table.columns[0].primary_key
    assert len(told) == 2
    assert "'t'" in told[0] and "'a'" in told[0] and "SHORT" in told[0]
    assert "'extra'" in told[1]


def test_a_table_without_metadata_is_described_from_its_schema_silently() -> None:
    told: list[str] = []
    physical = [metadata.PhysicalColumn(name="id", type="int")]
    table = metadata.reconcile("t", physical, None, ("id",), on_mismatch=told.append)
    assert table.columns == (Column(name="id", type=DataType.INT, primary_key=True),)
    assert told == []
