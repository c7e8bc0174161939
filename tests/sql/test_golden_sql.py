"""Every operation the engine renders, as golden SQL, parsed back by sqlglot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.core.config import parse_config
from spark_destination.core.model import (
    Column,
    DataType,
    DecimalParams,
    FileKind,
)
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import Form, Stage
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    CreateNamespaceOp,
    CreateTableOp,
    ListNamespacesOp,
    MergeBatchOp,
    Op,
    OptimizeOp,
    Plan,
    RecordChangesOp,
    SetLayoutOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    StageBatchOp,
    StagedFile,
    TableRef,
    TruncateOp,
    VacuumOp,
)
from spark_destination.planner.layout import table_layout, with_layouts
from spark_destination.planner.maintenance import MaintenancePolicy, plan_maintenance
from tests.sql.conftest import assert_parses_back, golden_params, golden_text, rendered

# syrupy suggests embedding the test name in snapshot paths; the layout is deliberate.
pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TABLE = TableRef(catalog="lake", schema="sales", name="orders")
ODD_TABLE = TableRef(catalog="lake", schema="my-schema.v2", name="order `items` 2024")
# Odd names Unity Catalog accepts (a hyphen, backticks; no period, space or upper case): the
# ODD_TABLE cases' Databricks goldens are its refusal, these show their Databricks SQL.
UNITY_TABLE = TableRef(catalog="lake", schema="my-schema", name="order-`items`-2024")

ALL_TYPES = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="flag", type=DataType.BOOLEAN),
    Column(name="small", type=DataType.SHORT),
    Column(name="count", type=DataType.INT),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
    Column(name="ratio", type=DataType.FLOAT),
    Column(name="score", type=DataType.DOUBLE),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="local time stamp", type=DataType.NAIVE_DATETIME),
    Column(name="happened.at", type=DataType.UTC_DATETIME),
    Column(name="payload", type=DataType.BINARY),
    Column(name="doc", type=DataType.XML),
    Column(name="name-with-hyphen", type=DataType.STRING),
    Column(name="attrs", type=DataType.JSON),
    Column(name="at`time", type=DataType.NAIVE_TIME),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
)
ORDERS = (
    Column(name="id", type=DataType.INT, primary_key=True),
    Column(name="region", type=DataType.STRING, primary_key=True),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)),
    Column(name="note", type=DataType.STRING),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
)
KEYLESS = (
    Column(name="_fivetran_id", type=DataType.STRING, primary_key=True),
    Column(name="name", type=DataType.STRING),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
)
BEFORE = datetime(2024, 5, 17, 8, 30, 12, 345000, tzinfo=UTC)
SORTED = table_layout(parse_config({}).layout_of("sales", "orders"), ORDERS, ("id", "region"))
BUCKETED_V3 = table_layout(
    parse_config(
        {"table_layout": "bucketed", "bucket_count": "16", "format_version": "3"}
    ).layout_of("sales", "orders"),
    ORDERS,
    ("id", "region"),
)
PLAIN = table_layout(
    parse_config({"table_layout": "plain"}).layout_of("sales", "orders"), ORDERS, ("id",)
)

KEY_FILTERED_MERGE = MergeBatchOp(
    table=TABLE,
    view="sd_batch",
    columns=ORDERS,
    key=("id", "region"),
    null_string=NULL,
    unmodified_string=UNMOD,
    has_upserts=True,
    filter_key=("id", "region"),
)

CASES: dict[str, Op] = {
    "create_namespace": CreateNamespaceOp(catalog="lake", schema="my-schema.v2"),
    "create_namespace_unity_names": CreateNamespaceOp(catalog="lake", schema=UNITY_TABLE.schema),
    "create_table": CreateTableOp(
        table=ODD_TABLE,
        columns=ALL_TYPES,
        properties=((metadata.PROPERTY, metadata.encode(ALL_TYPES[:3])),),
    ),
    "create_table_unity_names": CreateTableOp(
        table=UNITY_TABLE,
        columns=ALL_TYPES,
        properties=((metadata.PROPERTY, metadata.encode(ALL_TYPES[:3])),),
    ),
    # The configured layouts (``planner.layout``): sorted by the key with bloom filters, and
    # bucketed; Delta renders neither (its OPTIMIZE clusters by the key).
    "create_table_sorted": CreateTableOp(
        table=TABLE,
        columns=ORDERS,
        properties=((metadata.PROPERTY, metadata.encode(ORDERS)),),
        layout=SORTED,
    ),
    "create_table_bucketed_v3": CreateTableOp(
        table=TABLE,
        columns=ORDERS,
        properties=((metadata.PROPERTY, metadata.encode(ORDERS)),),
        layout=BUCKETED_V3,
    ),
    # An existing plain table given the bucketed v3 layout (at its next maintenance).
    "set_layout": SetLayoutOp(table=TABLE, layout=BUCKETED_V3, current=PLAIN),
    "set_identifier_fields": SetPrimaryKeyOp(table=ODD_TABLE, columns=("id", "at`time")),
    "set_identifier_fields_unity_names": SetPrimaryKeyOp(
        table=UNITY_TABLE, columns=("id", "at`time")
    ),
    # A key changed in place on a sorted table: the write order follows it before any column
    # the old order sorted by is dropped (``with_layouts``).
    "set_identifier_fields_sorted": SetPrimaryKeyOp(
        table=TABLE, columns=("id",), write_order=("id",)
    ),
    "add_columns": AddColumnsOp(table=TABLE, columns=ALL_TYPES[1:5]),
    "set_properties": SetPropertiesOp(
        table=TABLE, properties=((metadata.PROPERTY, metadata.encode(ORDERS)),)
    ),
    "list_namespaces": ListNamespacesOp(catalog="lake"),
    "merge_batch": MergeBatchOp(
        table=TABLE,
        view="sd_batch",
        columns=ORDERS,
        key=("id", "region"),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=True,
    ),
    "merge_batch_all_types": MergeBatchOp(
        table=ODD_TABLE,
        view="sd_batch",
        columns=ALL_TYPES,
        key=("id",),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=True,
    ),
    "merge_batch_all_types_unity_names": MergeBatchOp(
        table=UNITY_TABLE,
        view="sd_batch",
        columns=ALL_TYPES,
        key=("id",),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=True,
    ),
    "merge_batch_without_upserts": MergeBatchOp(
        table=TABLE,
        view="sd_batch",
        columns=ORDERS,
        key=("id", "region"),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=False,
    ),
    "merge_batch_unique_keys": MergeBatchOp(
        table=TABLE,
        view="sd_batch",
        columns=ORDERS,
        key=("id", "region"),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=True,
    ),
    # One statement, two of its forms (``FORMS``): without the fold and with it.
    "merge_batch_key_filter": KEY_FILTERED_MERGE,
    "merge_batch_folded_key_filter": KEY_FILTERED_MERGE,
    "merge_batch_keyless_no_sentinels": MergeBatchOp(
        table=TABLE,
        view="sd_batch",
        columns=KEYLESS,
        key=("_fivetran_id",),
        null_string=None,
        unmodified_string=None,
        has_upserts=True,
    ),
    "truncate_hard": TruncateOp(
        table=TABLE, synced_column="_fivetran_synced", before=BEFORE, soft_deleted_column=None
    ),
    "truncate_soft": TruncateOp(
        table=TABLE,
        synced_column="_fivetran_synced",
        before=BEFORE,
        soft_deleted_column="_fivetran_deleted",
    ),
    # bad_value_policy=null: the schema's changes table, and the records of one batch.
    "record_changes": RecordChangesOp(
        table=TABLE,
        changes=TableRef(catalog="lake", schema="sales", name="sd__changes"),
        view="sd_batch",
        records="sd_changes",
        key=("id", "region"),
        synced=True,
    ),
    "record_changes_odd_names_no_synced": RecordChangesOp(
        table=ODD_TABLE,
        changes=TableRef(catalog="lake", schema="my-schema.v2", name="sd__changes"),
        view="sd_batch",
        records="sd_changes",
        key=("id", "at`time"),
        synced=False,
    ),
    "record_changes_unity_names_no_synced": RecordChangesOp(
        table=UNITY_TABLE,
        changes=TableRef(catalog="lake", schema=UNITY_TABLE.schema, name="sd__changes"),
        view="sd_batch",
        records="sd_changes",
        key=("id", "at`time"),
        synced=False,
    ),
    # A STRING column with a byte length: Databricks declares VARCHAR(n), Iceberg has no
    # length-limited type (its strings are unbounded).
    "create_table_string_lengths": CreateTableOp(
        table=TABLE,
        columns=(
            Column(name="id", type=DataType.INT, primary_key=True),
            Column(name="code", type=DataType.STRING, string_byte_length=12),
            Column(name="note", type=DataType.STRING),
            Column(name="doc", type=DataType.JSON, string_byte_length=300),
        ),
        properties=(),
    ),
}


# Cases whose golden file holds an alternative form of the statement.
FORMS = {
    "merge_batch_unique_keys": Form.UNIQUE_KEYS,
    "merge_batch_key_filter": Form.KEY_FILTER,
    "merge_batch_folded_key_filter": Form.FOLDED_KEY_FILTER,
}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_golden_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert golden_text(CASES[case], dialect, FORMS.get(case)) == sql_snapshot


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_rendered_sql_parses_back_strictly(case: str, dialect: str) -> None:
    for statement in rendered(CASES[case], dialect):
        assert_parses_back(statement, DIALECTS[dialect])


def test_a_key_changed_in_place_takes_the_configured_write_order() -> None:
    """History to live drops ``_fivetran_start``, which a sorted table's write order names:
    the order must follow the new key first, or Iceberg refuses the drop."""
    key_change = Plan(ops=(SetPrimaryKeyOp(table=TABLE, columns=("id",)),))
    sorted_plan = with_layouts(key_change, parse_config({}).layout_of, SPARK_ICEBERG)
    plain_config = parse_config({"table_layout": "plain"})
    plain_plan = with_layouts(key_change, plain_config.layout_of, SPARK_ICEBERG)
    delta_plan = with_layouts(key_change, parse_config({}).layout_of, DATABRICKS_DELTA)
    assert sorted_plan.ops == (SetPrimaryKeyOp(table=TABLE, columns=("id",), write_order=("id",)),)
    assert plain_plan.ops == (SetPrimaryKeyOp(table=TABLE, columns=("id",), write_order=()),)
    assert delta_plan == key_change  # Delta keeps no write order


def test_a_key_set_on_the_table_just_created_sets_no_second_write_order() -> None:
    """CreateTable (and a Migrate copy) creates the table, then sets its key: the CREATE's own
    write order is the key's, so the key step adds none (each ALTER is an Iceberg commit). A
    key set on a table that exists already (a retried Migrate copy: the attempt that created it
    may have stopped before its order) keeps its write order."""
    create = CreateTableOp(table=TABLE, columns=ORDERS, properties=())
    key = SetPrimaryKeyOp(table=TABLE, columns=("id", "region"))
    for layout in ({}, {"table_layout": "plain"}):
        layout_of = parse_config(layout).layout_of
        created = with_layouts(Plan(ops=(create, key)), layout_of, SPARK_ICEBERG)
        statements = [s.sql for op in created.ops for s in render(op, SPARK_ICEBERG)]
        orders = [sql for sql in statements if sql.startswith("ALTER TABLE") and " WRITE " in sql]
        assert len(orders) == (1 if layout == {} else 0), orders
        assert any("SET IDENTIFIER FIELDS" in sql for sql in statements)
    retried = with_layouts(Plan(ops=(key,)), parse_config({}).layout_of, SPARK_ICEBERG)
    assert retried.ops == (
        SetPrimaryKeyOp(table=TABLE, columns=key.columns, write_order=key.columns),
    )


def test_delta_tables_are_never_given_a_layout() -> None:
    """What the set_layout golden of Delta says: no layout is planned for Delta (a CREATE
    keeps none, maintenance of a table whose layout differs plans OPTIMIZE and VACUUM only)."""
    assert not DATABRICKS_DELTA.lays_out_tables
    create = Plan(ops=(CreateTableOp(table=TABLE, columns=ORDERS, properties=()),))
    assert with_layouts(create, parse_config({}).layout_of, DATABRICKS_DELTA) == create
    assert with_layouts(create, parse_config({}).layout_of, SPARK_ICEBERG) != create
    maintained = plan_maintenance(
        TABLE,
        MaintenancePolicy(retention=timedelta(hours=168)),
        now=BEFORE,
        target=DATABRICKS_DELTA,
        key=("id", "region"),
        layout=BUCKETED_V3,
        current=PLAIN,
    )
    assert [type(op) for op in maintained.ops] == [OptimizeOp, VacuumOp]
    assert render(CASES["set_layout"], DATABRICKS_DELTA) == ()


def test_staging_is_a_runtime_directive_without_sql() -> None:
    op = StageBatchOp(
        view="sd_batch",
        files=(StagedFile(kind=FileKind.REPLACE, path="/in/a.csv"),),
        columns=ALL_TYPES[:1],
    )
    (statement,) = rendered(op, "spark_iceberg")
    assert statement.directive and statement.sql == ""
    assert statement.run == Stage(op=op)
    assert "/in/a.csv" in statement.summary


def test_staging_says_what_bad_value_policy_null_changes() -> None:
    op = StageBatchOp(
        view="sd_batch",
        files=(StagedFile(kind=FileKind.REPLACE, path="/in/a.csv"),),
        columns=ORDERS,
        key=("id", "region"),
        lenient=("amount", "note"),
        max_lengths=(("note", 40),),
        changes_view="sd_changes",
        changes_key=("id", "region"),
    )
    (iceberg,) = rendered(op, "spark_iceberg")
    assert "a value of a non-key column that does not fit is NULL" in iceberg.summary
    assert "'sd_changes'" in iceberg.summary
    assert "a value of 'note' longer than 40 characters is cut to it" in iceberg.summary
