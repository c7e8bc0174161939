"""The plan AlterTable chooses for each kind of change, and its refusals (pure, no Spark)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spark_destination.core.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.core.model import Column, DataType, DecimalParams, Table
from spark_destination.core.requests import AlterTableRequest
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.spark_delta import SPARK_DELTA
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner import metadata
from spark_destination.planner.alter import plan_alter_table
from spark_destination.planner.ir import (
    AddColumnsOp,
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckUniqueKeyOp,
    ColumnChange,
    DropColumnsOp,
    DropNotNullOp,
    Plan,
    RewriteTableOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
)

ID = Column(name="id", type=DataType.INT, primary_key=True)
REGION = Column(name="region", type=DataType.STRING)
AMOUNT = Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2))
COUNT = Column(name="count", type=DataType.INT)
RATIO = Column(name="ratio", type=DataType.FLOAT)
NOTE = Column(name="note", type=DataType.STRING)
SYNCED = Column(name="_fivetran_synced", type=DataType.UTC_DATETIME)
CURRENT = Table(name="orders", columns=(ID, REGION, AMOUNT, COUNT, RATIO, NOTE, SYNCED))


def plan(*columns: Column, drop: bool = False, current: Table = CURRENT) -> Plan:
    request = AlterTableRequest(
        schema="s", table=Table(name="orders", columns=columns), drop_columns=drop
    )
    result = plan_alter_table(request, current, catalog="lake", target=SPARK_ICEBERG)
    render_plan(result, SPARK_ICEBERG)  # every planned op renders and parses back
    return result


def with_column(column: Column) -> tuple[Column, ...]:
    return tuple(column if c.name == column.name else c for c in CURRENT.columns)


def kinds(result: Plan) -> list[type]:
    return [type(op) for op in result.ops]


def stored(result: Plan) -> tuple[Column, ...]:
    last = result.ops[-1]
    assert isinstance(last, SetPropertiesOp)
    return tuple(metadata.decode(dict(last.properties)[metadata.PROPERTY]).values())


def test_same_definition_is_a_noop_and_a_retry_of_a_done_change_too() -> None:
    assert plan(*CURRENT.columns).noop_reason
    # DECIMAL without params keeps the stored params (never a silent rescale).
    assert plan(*with_column(replace(AMOUNT, decimal=None))).noop_reason


def test_added_columns_of_any_type_are_added_in_place() -> None:
    extra = (
        Column(name="small", type=DataType.SHORT),
        Column(name="doc", type=DataType.JSON),
        Column(name="t", type=DataType.NAIVE_TIME),
    )
    result = plan(*CURRENT.columns, *extra)
    assert kinds(result) == [AddColumnsOp, SetPropertiesOp]
    assert stored(result) == (*CURRENT.columns, *extra)


def test_in_place_widenings() -> None:
    wider = (
        replace(COUNT, type=DataType.LONG),
        replace(RATIO, type=DataType.DOUBLE),
        replace(AMOUNT, decimal=DecimalParams(precision=20, scale=2)),
        replace(ID, type=DataType.LONG),
    )
    columns = CURRENT.columns
    for column in wider:
        columns = tuple(column if c.name == column.name else c for c in columns)
    result = plan(*columns)
    assert kinds(result) == [AlterColumnTypeOp] * 4 + [SetPropertiesOp]
    assert stored(result) == columns


def test_metadata_only_changes_touch_only_the_property() -> None:
    short = Column(name="s", type=DataType.SHORT)
    current = Table(name="orders", columns=(ID, short, NOTE))
    as_int = plan(ID, replace(short, type=DataType.INT), NOTE, current=current)
    assert kinds(as_int) == [SetPropertiesOp]
    as_json = plan(ID, short, replace(NOTE, type=DataType.JSON), current=current)
    assert kinds(as_json) == [SetPropertiesOp]
    sized = plan(ID, short, replace(NOTE, string_byte_length=256), current=current)
    assert kinds(sized) == [SetPropertiesOp]


def test_narrowing_metadata_changes_are_checked_first() -> None:
    result = plan(*with_column(replace(COUNT, type=DataType.SHORT)))
    assert kinds(result) == [CheckConversionsOp, SetPropertiesOp]
    time = plan(*with_column(replace(NOTE, type=DataType.NAIVE_TIME)))
    assert kinds(time) == [CheckConversionsOp, SetPropertiesOp]


@pytest.mark.parametrize(
    ("column", "target"),
    [
        (COUNT, DataType.STRING),
        (COUNT, DataType.DOUBLE),
        (RATIO, DataType.INT),
        (NOTE, DataType.LONG),
        (NOTE, DataType.BOOLEAN),
        (NOTE, DataType.NAIVE_DATE),
        (NOTE, DataType.UTC_DATETIME),
        (SYNCED, DataType.NAIVE_DATETIME),
        (SYNCED, DataType.STRING),
    ],
)
def test_other_type_changes_rewrite_the_table_after_a_check(
    column: Column, target: DataType
) -> None:
    changed = replace(column, type=target, decimal=None)
    result = plan(*with_column(changed))
    rewrite = next(op for op in result.ops if isinstance(op, RewriteTableOp))
    assert kinds(result)[-3:] == [RewriteTableOp, SetPrimaryKeyOp, SetPropertiesOp]
    assert ColumnChange(source=column, target=changed) in rewrite.columns
    assert [c.target.name for c in rewrite.columns] == [c.name for c in CURRENT.columns]


def test_conversions_that_cannot_fail_skip_the_check() -> None:
    assert kinds(plan(*with_column(replace(COUNT, type=DataType.STRING)))) == [
        RewriteTableOp,
        SetPrimaryKeyOp,
        SetPropertiesOp,
    ]


def test_decimal_scale_change_rewrites() -> None:
    scaled = replace(AMOUNT, decimal=DecimalParams(precision=10, scale=4))
    result = plan(*with_column(scaled))
    assert kinds(result) == [
        CheckConversionsOp,
        RewriteTableOp,
        SetPrimaryKeyOp,
        SetPropertiesOp,
    ]


def test_impossible_type_change_is_refused_before_anything_runs() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"'_fivetran_synced'.*UTC_DATETIME to INT"):
        plan(*with_column(replace(SYNCED, type=DataType.INT)))


def test_key_column_joining_rewrites_after_null_and_uniqueness_checks() -> None:
    result = plan(*with_column(replace(REGION, primary_key=True)))
    assert kinds(result) == [
        CheckConversionsOp,
        CheckUniqueKeyOp,
        RewriteTableOp,
        SetPrimaryKeyOp,
        SetPropertiesOp,
    ]
    check, unique, _, ident, _ = result.ops
    assert isinstance(check, CheckConversionsOp) and [c.target.name for c in check.not_null] == [
        "region"
    ]
    assert isinstance(unique, CheckUniqueKeyOp)
    assert [c.target.name for c in unique.key] == ["id", "region"]
    assert isinstance(ident, SetPrimaryKeyOp) and ident.columns == ("id", "region")


def test_new_key_column_is_added_by_the_rewrite() -> None:
    code = Column(name="code", type=DataType.STRING, primary_key=True)
    result = plan(*CURRENT.columns, code)
    rewrite = next(op for op in result.ops if isinstance(op, RewriteTableOp))
    assert rewrite.columns[-1] == ColumnChange(source=None, target=code)


def test_key_column_leaving_is_in_place_after_a_uniqueness_check() -> None:
    current = Table(name="orders", columns=(ID, replace(REGION, primary_key=True), NOTE))
    result = plan(ID, REGION, NOTE, current=current)
    assert kinds(result) == [
        CheckUniqueKeyOp,
        SetPrimaryKeyOp,
        DropNotNullOp,
        SetPropertiesOp,
    ]
    dropped = plan(ID, NOTE, drop=True, current=current)
    assert kinds(dropped) == [
        CheckUniqueKeyOp,
        SetPrimaryKeyOp,
        DropColumnsOp,
        SetPropertiesOp,
    ]


def test_key_type_change_checks_uniqueness_of_converted_values() -> None:
    current = Table(name="orders", columns=(ID, replace(REGION, primary_key=True), NOTE))
    leaving = plan(replace(ID, type=DataType.STRING), REGION, NOTE, current=current)
    assert kinds(leaving) == [
        CheckUniqueKeyOp,
        RewriteTableOp,
        SetPrimaryKeyOp,
        DropNotNullOp,
        SetPropertiesOp,
    ]
    result = plan(*with_column(replace(ID, type=DataType.STRING)))
    assert kinds(result) == [
        CheckUniqueKeyOp,
        RewriteTableOp,
        SetPrimaryKeyOp,
        SetPropertiesOp,
    ]


def test_floating_point_key_is_refused() -> None:
    with pytest.raises(UnsupportedOperationError, match="FLOAT/DOUBLE"):
        plan(*with_column(replace(RATIO, primary_key=True)))


def test_drop_columns_false_keeps_missing_columns_true_drops_them() -> None:
    kept = plan(ID, REGION)
    assert kept.noop_reason
    dropped = plan(ID, REGION, drop=True)
    assert kinds(dropped) == [DropColumnsOp, SetPropertiesOp]
    drop = dropped.ops[0]
    assert isinstance(drop, DropColumnsOp)
    assert drop.columns == ("amount", "count", "ratio", "note", "_fivetran_synced")
    assert stored(dropped) == (ID, REGION)


def test_a_target_that_drops_no_column_in_place_rewrites_the_table_without_it() -> None:
    request = AlterTableRequest(
        schema="s", table=Table(name="orders", columns=(ID, REGION)), drop_columns=True
    )
    result = plan_alter_table(request, CURRENT, catalog="spark_catalog", target=SPARK_DELTA)
    render_plan(result, SPARK_DELTA)
    assert kinds(result) == [RewriteTableOp, SetPrimaryKeyOp, SetPropertiesOp]
    rewrite = result.ops[0]
    assert isinstance(rewrite, RewriteTableOp)
    assert rewrite.columns == (
        ColumnChange(source=ID, target=ID),
        ColumnChange(source=REGION, target=REGION),
    )
    assert stored(result) == (ID, REGION)


def test_missing_table_and_bad_definitions_are_refused() -> None:
    request = AlterTableRequest(schema="s", table=CURRENT)
    with pytest.raises(InvalidRequestError, match="does not exist"):
        plan_alter_table(request, None, catalog="lake", target=SPARK_ICEBERG)
    with pytest.raises(InvalidRequestError, match="differs only in case"):
        plan(*CURRENT.columns, Column(name="Note", type=DataType.STRING))
    with pytest.raises(InvalidRequestError, match="UNSPECIFIED"):
        plan(*CURRENT.columns, Column(name="x", type=DataType.UNSPECIFIED))


def test_preview_shows_the_rewrite_sql() -> None:
    from spark_destination.engine.preview import preview
    from spark_destination.engine.request_json import parse_request

    data = {
        "request": "alter_table",
        "schema": "sales",
        "existing_table": {
            "name": "orders",
            "columns": [
                {"name": "id", "type": "INT", "primary_key": True},
                {"name": "code", "type": "STRING"},
            ],
        },
        "table": {
            "name": "orders",
            "columns": [
                {"name": "id", "type": "INT", "primary_key": True},
                {"name": "code", "type": "INT", "primary_key": True},
            ],
        },
    }
    text = preview(parse_request(data))
    assert "COUNT_IF(`code` IS NULL) AS `null_count_0`" in text
    assert "CREATE OR REPLACE TABLE `lake`.`sales`.`orders`" in text
    assert "SET IDENTIFIER FIELDS `id`, `code`" in text
    assert text.index("CREATE OR REPLACE") < text.index("'fivetran.columns'")


def test_a_key_column_the_request_lacks_is_kept_but_leaves_the_key() -> None:
    """The destination tester swaps key column ``old_pk`` for ``new_pk`` without
    ``drop_columns``: ``old_pk`` stays as an ordinary column and the key is the request's."""
    pk1 = Column(name="pk1", type=DataType.INT, primary_key=True)
    old_pk = Column(name="old_pk", type=DataType.STRING, primary_key=True)
    new_pk = Column(name="new_pk", type=DataType.STRING, primary_key=True)
    value = Column(name="value", type=DataType.STRING)
    current = Table(name="orders", columns=(pk1, old_pk, value))
    result = plan(pk1, new_pk, value, current=current)
    keys = [op for op in result.ops if isinstance(op, SetPrimaryKeyOp)]
    assert [op.columns for op in keys] == [("pk1", "new_pk")]
    final = {c.name: c for c in stored(result)}
    assert final["old_pk"] == replace(old_pk, primary_key=False)
    assert final["new_pk"].primary_key and final["pk1"].primary_key
    assert not any(isinstance(op, DropColumnsOp) for op in result.ops)
