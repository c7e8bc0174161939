"""Every statement AlterTable renders, as golden SQL, parsed back by sqlglot."""

from __future__ import annotations

import pytest
import sqlglot
from syrupy.assertion import SnapshotAssertion

from spark_destination.core.model import Column, DataType, DecimalParams, Table
from spark_destination.core.requests import AlterTableRequest
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render_plan
from spark_destination.engine.preview import format_statements
from spark_destination.planner.alter import plan_alter_table
from spark_destination.planner.ir import (
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckUniqueKeyOp,
    ColumnChange,
    DropNotNullOp,
    Op,
    Plan,
    RewriteTableOp,
    TableRef,
)
from tests.sql.conftest import assert_parses_back, golden_params, golden_text, rendered

# syrupy suggests embedding the test name in snapshot paths; the layout is deliberate.
pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

TABLE = TableRef(catalog="lake", schema="sales", name="orders")
ODD_TABLE = TableRef(catalog="lake", schema="my-schema.v2", name="order `items` 2024")
# Odd names Unity Catalog accepts: the ODD_TABLE cases' Databricks goldens are its refusal.
UNITY_TABLE = TableRef(catalog="lake", schema="my-schema", name="order-`items`-2024")


def col(name: str, type_: DataType, *, pk: bool = False, p: int = 0, s: int = 0) -> Column:
    decimal = DecimalParams(precision=p, scale=s) if type_ is DataType.DECIMAL else None
    return Column(name=name, type=type_, primary_key=pk, decimal=decimal)


def change(source: Column | None, target: Column) -> ColumnChange:
    return ColumnChange(source=source, target=target)


ID_INT = col("id", DataType.INT, pk=True)
# One conversion of each family the rewrite and its check handle.
CONVERSIONS = (
    change(col("code", DataType.STRING), col("code", DataType.INT, pk=True)),
    change(col("amount", DataType.DOUBLE), col("amount", DataType.LONG)),
    change(col("price", DataType.DECIMAL, p=10, s=4), col("price", DataType.DECIMAL, p=10, s=2)),
    change(col("ratio", DataType.DOUBLE), col("ratio", DataType.FLOAT)),
    change(col("flag", DataType.INT), col("flag", DataType.BOOLEAN)),
    change(col("day", DataType.UTC_DATETIME), col("day", DataType.NAIVE_DATE)),
    change(col("local`at", DataType.UTC_DATETIME), col("local`at", DataType.NAIVE_DATETIME)),
    change(col("on day", DataType.STRING), col("on day", DataType.UTC_DATETIME)),
    change(col("small", DataType.INT), col("small", DataType.SHORT)),
    change(col("at.time", DataType.STRING), col("at.time", DataType.NAIVE_TIME)),
)
REWRITE = (
    change(ID_INT, col("id", DataType.LONG, pk=True)),
    *CONVERSIONS,
    change(col("payload", DataType.BINARY), col("payload", DataType.STRING)),
    change(col("doc", DataType.JSON), col("doc", DataType.STRING)),
    change(col("n", DataType.LONG), col("n", DataType.STRING)),
    change(None, col("region", DataType.STRING, pk=True)),
    change(None, col("added", DataType.DECIMAL, p=12, s=3)),
    change(col("d", DataType.NAIVE_DATE, pk=True), col("d", DataType.NAIVE_DATE, pk=True)),
    change(
        col("ts", DataType.NAIVE_DATETIME, pk=True), col("ts", DataType.NAIVE_DATETIME, pk=True)
    ),
    change(col("b", DataType.BINARY, pk=True), col("b", DataType.BINARY, pk=True)),
    change(col("ok", DataType.BOOLEAN, pk=True), col("ok", DataType.BOOLEAN, pk=True)),
    change(
        col("whole", DataType.DECIMAL, pk=True, p=5, s=0),
        col("whole", DataType.DECIMAL, pk=True, p=5, s=0),
    ),
)

CASES: dict[str, Op] = {
    "alter_column_type": AlterColumnTypeOp(
        table=ODD_TABLE, column=col("amount", DataType.DECIMAL, p=20, s=2)
    ),
    "alter_column_type_unity_names": AlterColumnTypeOp(
        table=UNITY_TABLE, column=col("amount", DataType.DECIMAL, p=20, s=2)
    ),
    "drop_not_null": DropNotNullOp(table=ODD_TABLE, column="region `code`"),
    "drop_not_null_unity_names": DropNotNullOp(table=UNITY_TABLE, column="region `code`"),
    "check_conversions": CheckConversionsOp(
        table=TABLE,
        conversions=CONVERSIONS,
        not_null=(CONVERSIONS[0], change(None, col("region", DataType.STRING, pk=True))),
    ),
    "check_unique_key": CheckUniqueKeyOp(table=TABLE, key=(change(ID_INT, ID_INT), CONVERSIONS[0])),
    "rewrite_table": RewriteTableOp(table=ODD_TABLE, columns=REWRITE),
    "rewrite_table_unity_names": RewriteTableOp(table=UNITY_TABLE, columns=REWRITE),
}


# Whole AlterTable plans, per dialect: where a decimal change is in place and where it
# rewrites the table (Delta: DECIMAL(p, s) -> DECIMAL(p + k1, s + k2) iff k1 >= k2 >= 0;
# Iceberg: precision up, same scale).
DECIMAL_TABLE = Table(name="orders", columns=(ID_INT, col("amount", DataType.DECIMAL, p=18, s=4)))
PLANNED: dict[str, AlterTableRequest] = {
    "alter_decimal_scale_down": AlterTableRequest(
        schema="sales",
        table=Table(name="orders", columns=(ID_INT, col("amount", DataType.DECIMAL, p=20, s=2))),
    ),
    "alter_decimal_scale_up": AlterTableRequest(
        schema="sales",
        table=Table(name="orders", columns=(ID_INT, col("amount", DataType.DECIMAL, p=22, s=6))),
    ),
}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_golden_alter_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert golden_text(CASES[case], dialect) == sql_snapshot


def _planned(case: str, dialect: str) -> Plan:
    target = DIALECTS[dialect]
    return plan_alter_table(PLANNED[case], DECIMAL_TABLE, catalog="lake", target=target)


@pytest.mark.parametrize(("case", "dialect"), golden_params(PLANNED), ids=lambda v: v)
def test_golden_alter_plan(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    plan = _planned(case, dialect)
    chosen = DIALECTS[dialect]
    statements = render_plan(plan, chosen)
    for statement in statements:
        assert_parses_back(statement, chosen)
    assert format_statements(statements) == sql_snapshot


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_alter_sql_parses_back_strictly(case: str, dialect: str) -> None:
    for statement in rendered(CASES[case], dialect):
        assert_parses_back(statement, DIALECTS[dialect])


def test_rewrite_keeps_key_columns_not_null_and_reads_the_table_itself() -> None:
    (statement,) = rendered(CASES["rewrite_table"], "spark_iceberg")
    sql = statement.sql
    assert sql is not None
    assert sql.startswith("CREATE OR REPLACE TABLE `lake`.`my-schema.v2`.`order ``items`` 2024`")
    assert sql.rstrip().endswith("FROM `lake`.`my-schema.v2`.`order ``items`` 2024`")
    # Key columns get a typed, non-NULL fallback Spark can prove (never used: checked first).
    assert "COALESCE(CAST(`id` AS BIGINT), CAST(0 AS BIGINT)) AS `id`" in sql
    assert "COALESCE(CAST(NULL AS STRING), '') AS `region`" in sql
    assert "COALESCE(`whole`, 0.) AS `whole`" in sql
    assert "COALESCE(`d`, DATE_FROM_UNIX_DATE(0)) AS `d`" in sql
    assert "CAST(NULL AS DECIMAL(12, 3)) AS `added`" in sql
    assert "BASE64(`payload`) AS `payload`" in sql


def test_check_reports_two_outputs_per_fallible_conversion_and_one_per_key_column() -> None:
    (statement,) = rendered(CASES["check_conversions"], "spark_iceberg")
    sql = statement.sql
    assert sql is not None
    tree = sqlglot.parse_one(sql, read="spark")
    names = [e.alias for e in tree.expressions]
    assert names == [
        *(f"bad_{kind}_{i}" for i in range(len(CONVERSIONS)) for kind in ("count", "value")),
        "null_count_0",
        "null_count_1",
    ]
