"""The databricks_delta dialect: built from the IR with Delta's rules, never transpiled from
the Spark output, and refused by the server, which cannot run it here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot

from spark_destination.core.errors import ConfigurationError, RenderError
from spark_destination.core.model import Column, DataType, Table
from spark_destination.core.requests import AlterTableRequest
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.render import render, render_plan
from spark_destination.dialects.rendered import Statement
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.alter import plan_alter_table
from spark_destination.planner.ir import (
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CheckUniqueKeyOp,
    DropNotNullOp,
    Op,
    RewriteTableOp,
    SetNotNullOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
)
from spark_destination.service.engine import Engine, SessionProvider
from spark_destination.service.preview import plan_for
from spark_destination.service.request_json import parse_request
from tests.sql import test_golden_alter_sql, test_golden_history_sql, test_golden_sql
from tests.sql.test_golden_migrate_sql import CASES as MIGRATE_CASES

CHECKS = (CheckLiteralOp, CheckHistoryStartOp, CheckConversionsOp, CheckUniqueKeyOp)
OP_CASES: dict[str, Op] = {
    **test_golden_sql.CASES,
    **test_golden_alter_sql.CASES,
    **test_golden_history_sql.CASES,
}


def _every_statement() -> list[Statement]:
    statements = [s for op in OP_CASES.values() for s in render(op, DATABRICKS_DELTA)]
    for request in MIGRATE_CASES.values():
        plan = plan_for(parse_request(request), DATABRICKS_DELTA)
        statements += render_plan(plan, DATABRICKS_DELTA)
    return statements


def test_no_databricks_statement_uses_try_cast_outside_the_check_queries() -> None:
    """TRY_CAST turns a bad value into a silent NULL: only read-only checks may use it."""
    writes = [s for s in _every_statement() if not isinstance(s.op, CHECKS)]
    assert writes
    for statement in writes:
        for sql in (statement.sql or "", *(text for _, text in statement.forms)):
            assert "TRY_CAST" not in sql.upper(), statement.summary


def test_transpiling_the_spark_output_would_have_made_casts_silent() -> None:
    """Why the dialect is built from the IR: sqlglot reads Spark's CAST as a safe cast.

    (The batch MERGE reads typed staged columns and casts nothing; a column's new value does.)
    """
    op = test_golden_alter_sql.CASES["check_unique_key"]
    spark = [s.sql for s in render(op, SPARK_ICEBERG) if s.sql and "CAST(" in s.sql]
    assert spark and "TRY_CAST" not in spark[0]
    transpiled = sqlglot.transpile(spark[0], read="spark", write="databricks")[0]
    assert "TRY_CAST" in transpiled
    built = [s.sql for s in render(op, DATABRICKS_DELTA) if s.sql and "CAST(" in s.sql]
    assert built and "TRY_CAST" not in built[0]


def test_delta_tables_get_deltas_properties_and_a_primary_key_constraint() -> None:
    (create,) = render(test_golden_sql.CASES["create_table"], DATABRICKS_DELTA)
    assert create.sql is not None
    assert "USING DELTA" in create.sql
    assert "'delta.columnMapping.mode'='name'" in create.sql
    assert "'delta.enableDeletionVectors'='true'" in create.sql
    assert "format-version" not in create.sql and "merge-on-read" not in create.sql
    key = render(test_golden_sql.CASES["set_identifier_fields"], DATABRICKS_DELTA)
    texts = [s.sql or "" for s in key]
    assert ["DROP PRIMARY KEY IF EXISTS" in t for t in texts] == [True, False]
    assert "PRIMARY KEY (`id`, `at``time`)" in texts[1]
    assert all("IDENTIFIER FIELDS" not in t for t in texts)
    assert isinstance(key[0].op, SetPrimaryKeyOp)


SMALL = Table(
    name="t",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="n", type=DataType.SHORT),
        Column(name="x", type=DataType.FLOAT),
    ),
)


def _alter(columns: tuple[Column, ...]) -> AlterTableRequest:
    return AlterTableRequest(schema="s", table=Table(name="t", columns=columns))


def test_smallint_stays_smallint_on_delta_and_widens_in_place() -> None:
    """Iceberg stores SHORT as INT (SHORT -> INT is metadata only); Delta keeps SMALLINT and
    widens it with type widening."""
    wider = _alter((SMALL.columns[0], Column(name="n", type=DataType.INT), SMALL.columns[2]))
    iceberg = plan_alter_table(wider, SMALL, catalog="lake", target=SPARK_ICEBERG)
    delta = plan_alter_table(wider, SMALL, catalog="lake", target=DATABRICKS_DELTA)
    assert not any(isinstance(op, AlterColumnTypeOp) for op in iceberg.ops)
    assert [op.column.name for op in delta.ops if isinstance(op, AlterColumnTypeOp)] == ["n"]
    (widen,) = render(
        next(op for op in delta.ops if isinstance(op, AlterColumnTypeOp)), DATABRICKS_DELTA
    )
    assert widen.sql is not None and widen.sql.endswith("ALTER COLUMN `n` TYPE INT")


def test_a_float_key_is_refused_by_iceberg_only() -> None:
    keyed = _alter(
        (
            SMALL.columns[0],
            SMALL.columns[1],
            Column(name="x", type=DataType.FLOAT, primary_key=True),
        )
    )
    from spark_destination.core.errors import UnsupportedOperationError

    with pytest.raises(UnsupportedOperationError, match="Iceberg"):
        plan_alter_table(keyed, SMALL, catalog="lake", target=SPARK_ICEBERG)
    plan = plan_alter_table(keyed, SMALL, catalog="lake", target=DATABRICKS_DELTA)
    assert any(isinstance(op, SetPrimaryKeyOp) for op in plan.ops)


def test_the_engine_refuses_a_dialect_it_cannot_run_naming_what_is_missing() -> None:
    provider = SessionProvider(
        build=lambda _c: pytest.fail("no session may start"),
        check=lambda _s, _c: None,
        register_catalog=lambda _s, _n, _w: None,
    )
    with pytest.raises(ConfigurationError, match="Delta Lake jars") as raised:
        Engine(provider, dialect=DATABRICKS_DELTA)
    assert "Databricks SQL warehouse" in str(raised.value)


def test_serve_with_databricks_delta_fails_before_starting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from spark_destination.cli.main import main

    assert main(["serve", "--dialect", "databricks_delta", "--port", "0"]) == 2
    error = capsys.readouterr().err
    assert "databricks_delta" in error and "Delta Lake jars" in error


def test_preview_renders_databricks_delta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spark_destination.cli.main import main

    request = {
        "request": "create_table",
        "schema": "s",
        "table": {"name": "t", "columns": {"id": "LONG"}, "primary_key": ["id"]},
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request), encoding="utf-8")
    assert main(["preview", "--dialect", "databricks_delta", str(path)]) == 0
    out = capsys.readouterr().out
    assert "CREATE SCHEMA IF NOT EXISTS `lake`.`s`" in out
    assert "USING DELTA" in out and "ADD CONSTRAINT `t_pk` PRIMARY KEY (`id`)" in out
    assert main(["preview", "--dialect", "oracle", str(path)]) == 2
    assert "unknown dialect 'oracle'" in capsys.readouterr().err


def test_a_column_joins_the_key_in_place_on_delta_and_by_rewrite_on_iceberg() -> None:
    joined = _alter(
        (
            SMALL.columns[0],
            Column(name="n", type=DataType.SHORT, primary_key=True),
            SMALL.columns[2],
        )
    )
    iceberg = [
        type(op) for op in plan_alter_table(joined, SMALL, catalog="lake", target=SPARK_ICEBERG).ops
    ]
    delta_plan = plan_alter_table(joined, SMALL, catalog="lake", target=DATABRICKS_DELTA)
    delta = [type(op) for op in delta_plan.ops]
    assert RewriteTableOp in iceberg and SetNotNullOp not in iceberg
    assert delta == [
        CheckConversionsOp,  # no NULL in the joining column, before any change
        CheckUniqueKeyOp,
        SetNotNullOp,
        SetPrimaryKeyOp,
        SetPropertiesOp,
    ]
    texts = [s.sql for s in render_plan(delta_plan, DATABRICKS_DELTA)]
    assert "ALTER TABLE `lake`.`s`.`t`\nALTER COLUMN `n` SET NOT NULL" in texts
    assert "ADD CONSTRAINT `t_pk` PRIMARY KEY (`id`, `n`)" in "\n".join(t or "" for t in texts)
    with pytest.raises(RenderError, match="NOT NULL in place"):
        render(next(op for op in delta_plan.ops if isinstance(op, SetNotNullOp)), SPARK_ICEBERG)


def test_dropping_the_whole_key_is_in_place_on_delta() -> None:
    keyless = _alter((Column(name="id", type=DataType.INT), SMALL.columns[1], SMALL.columns[2]))
    plan = plan_alter_table(keyless, SMALL, catalog="lake", target=DATABRICKS_DELTA)
    assert [type(op) for op in plan.ops] == [SetPrimaryKeyOp, DropNotNullOp, SetPropertiesOp]
    texts = [s.sql for s in render_plan(plan, DATABRICKS_DELTA)]
    assert texts[0] == "ALTER TABLE `lake`.`s`.`t`\nDROP PRIMARY KEY IF EXISTS"
    assert "ADD CONSTRAINT" not in "\n".join(t or "" for t in texts)
    iceberg = plan_alter_table(keyless, SMALL, catalog="lake", target=SPARK_ICEBERG)
    assert RewriteTableOp in [type(op) for op in iceberg.ops]
