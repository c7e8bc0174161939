"""The databricks_delta dialect: built from the IR with Delta's rules, never transpiled from
the Spark output, and refused by the server, which cannot run it here."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from spark_destination.core.errors import ConfigurationError, InvalidRequestError
from spark_destination.core.model import Column, DataType, DecimalParams, Table
from spark_destination.core.requests import AlterTableRequest, CreateTableRequest
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.render import render, render_plan
from spark_destination.dialects.rendered import Statement
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.engine.preview import plan_for
from spark_destination.engine.request_json import parse_request
from spark_destination.planner.alter import plan_alter_table
from spark_destination.planner.ir import (
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CheckUniqueKeyOp,
    DescribeOp,
    DropNotNullOp,
    ExpireSnapshotsOp,
    Op,
    RemoveOrphanFilesOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    RewriteTableOp,
    SetLayoutOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    StageBatchOp,
    TableHealthOp,
)
from spark_destination.planner.maintenance import plan_maintenance
from spark_destination.planner.schema import plan_create_table
from tests.sql import (
    test_golden_alter_sql,
    test_golden_bad_values_sql,
    test_golden_deferred_sql,
    test_golden_history_sql,
    test_golden_maintenance_sql,
    test_golden_sql,
)
from tests.sql.conftest import golden_text
from tests.sql.test_golden_migrate_sql import CASES as MIGRATE_CASES
from tests.sql.test_golden_migrate_sql import REFUSED

DELTA = DATABRICKS_DELTA.name
CHECKS = (CheckLiteralOp, CheckHistoryStartOp, CheckConversionsOp, CheckUniqueKeyOp)
OP_CASES: dict[str, Op] = {
    **test_golden_sql.CASES,
    **test_golden_alter_sql.CASES,
    **test_golden_history_sql.CASES,
}


def _tree(sql: str) -> exp.Expr:
    """A statement as Databricks' reader parses it: tests compare trees, not whitespace."""
    return sqlglot.parse_one(sql, read=DATABRICKS_DELTA.sqlglot_dialect)


def _trees(statements: tuple[Statement, ...]) -> list[exp.Expr]:
    return [_tree(s.sql) for s in statements if not s.directive]


# The Migrate golden cases Unity Catalog refuses, with the refusal; every other case must plan.
MIGRATE_REFUSED = {case: why for (case, dialect), why in REFUSED.items() if dialect == DELTA}


def _every_statement() -> list[Statement]:
    statements = [s for op in OP_CASES.values() for s in render(op, DATABRICKS_DELTA)]
    for case, request in MIGRATE_CASES.items():
        if case in MIGRATE_REFUSED:
            with pytest.raises(InvalidRequestError) as refused:
                plan_for(parse_request(request), DATABRICKS_DELTA)
            assert str(refused.value) == MIGRATE_REFUSED[case]
            continue
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


# The operations no Databricks golden shows as SQL, and why.
NO_DATABRICKS_SQL: dict[type[Op], str] = {
    # Runtime directives: the runtime stages the files and reads the catalog, no SQL runs.
    StageBatchOp: "stages the batch's files as a view",
    DescribeOp: "reads the table from the catalog API",
    # Never planned for Delta (snapshots/set_layout/databricks_delta.sql says why).
    SetLayoutOp: "Delta tables get no configured layout",
    # Iceberg's maintenance procedures; Delta's maintenance is OPTIMIZE and VACUUM.
    RewriteDataFilesOp: "Iceberg only",
    RewritePositionDeletesOp: "Iceberg only",
    ExpireSnapshotsOp: "Iceberg only",
    RemoveOrphanFilesOp: "Iceberg only",
}


def _ops_of(union: object) -> set[type]:
    """The operation classes of an IR union (``Op`` nests ``MaintenanceOp`` and ``PendingOp``)."""
    if members := typing.get_args(union):
        return {op for member in members for op in _ops_of(member)}
    assert isinstance(union, type)
    return {union}


def _golden_sql_ops() -> set[type]:
    """The operations whose Databricks golden holds SQL: every golden case whose names Unity
    accepts (a refused case's golden is the refusal), and every whole plan a golden shows."""
    op_cases = {
        **OP_CASES,
        **test_golden_deferred_sql.CASES,
        "table_health": TableHealthOp(table=test_golden_maintenance_sql.UNITY_ODD_TABLE),
    }
    ops = {type(op) for op in op_cases.values() if not golden_text(op, DELTA).startswith("-- ")}
    plans = [
        plan_for(parse_request(request), DATABRICKS_DELTA)
        for case, request in (
            *MIGRATE_CASES.items(),
            *test_golden_bad_values_sql.CASES.items(),
        )
        if case not in MIGRATE_REFUSED
    ]
    plans += [
        plan_alter_table(
            request, test_golden_alter_sql.DECIMAL_TABLE, catalog="lake", target=DATABRICKS_DELTA
        )
        for request in test_golden_alter_sql.PLANNED.values()
    ]
    plans.append(
        plan_maintenance(
            test_golden_maintenance_sql.UNITY_ODD_TABLE,
            test_golden_maintenance_sql.POLICY,
            now=test_golden_maintenance_sql.NOW,
            target=DATABRICKS_DELTA,
            key=test_golden_maintenance_sql.KEY,
        )
    )
    statements = [s for plan in plans for s in render_plan(plan, DATABRICKS_DELTA)]
    return ops | {type(s.op) for s in statements if not s.directive}


def test_every_operation_has_a_databricks_golden_that_is_sql() -> None:
    """Every operation Delta plans is under review as Databricks SQL in some golden file (not
    only as a refusal of its names); a new operation without one fails here."""
    assert _golden_sql_ops() == _ops_of(Op) - NO_DATABRICKS_SQL.keys()


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
    (create,) = render(test_golden_sql.CASES["create_table_unity_names"], DATABRICKS_DELTA)
    tree = _tree(create.sql)
    properties = {
        p.name: p.args["value"].name for p in tree.find_all(exp.Property) if p.args.get("value")
    }
    assert tree.find(exp.FileFormatProperty).this.name.lower() == "delta"  # type: ignore[union-attr]
    assert properties["delta.columnMapping.mode"] == "name"
    assert properties["delta.enableDeletionVectors"] == "true"
    assert "format-version" not in properties and "write.merge.mode" not in properties
    key = render(test_golden_sql.CASES["set_identifier_fields_unity_names"], DATABRICKS_DELTA)
    expected = [
        "ALTER TABLE `lake`.`my-schema`.`order-``items``-2024` DROP PRIMARY KEY IF EXISTS",
        "ALTER TABLE `lake`.`my-schema`.`order-``items``-2024` ALTER COLUMN `id` SET NOT NULL",
        "ALTER TABLE `lake`.`my-schema`.`order-``items``-2024` "
        "ALTER COLUMN `at``time` SET NOT NULL",
        "ALTER TABLE `lake`.`my-schema`.`order-``items``-2024` "
        "ADD CONSTRAINT `order-``items``-2024_pk` PRIMARY KEY (`id`, `at``time`)",
    ]
    assert _trees(key) == [_tree(sql) for sql in expected]
    assert all(isinstance(s.op, SetPrimaryKeyOp) for s in key)


def test_a_key_is_declared_only_on_not_null_columns() -> None:
    """Databricks' PRIMARY KEY needs NOT NULL columns; a table a query made (a rewrite, a
    copy) has nullable ones, so every key column is made NOT NULL before the constraint."""
    request = CreateTableRequest(schema="s", table=SMALL)
    plan = plan_create_table(request, None, catalog="lake", target=DATABRICKS_DELTA)
    trees = _trees(render_plan(plan, DATABRICKS_DELTA))
    set_not_null = [i for i, t in enumerate(trees) if t.find(exp.AlterColumn)]
    add_key = [i for i, t in enumerate(trees) if t.find(exp.PrimaryKey)]
    assert set_not_null and add_key and max(set_not_null) < min(add_key)
    (column,) = (trees[i].find(exp.AlterColumn) for i in set_not_null)
    assert column is not None and column.this.name == "id"


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
    assert _tree(widen.sql) == _tree("ALTER TABLE `lake`.`s`.`t` ALTER COLUMN `n` TYPE INT")


def _decimal(precision: int, scale: int, *, pk: bool = False) -> Column:
    params = DecimalParams(precision=precision, scale=scale)
    return Column(name="d", type=DataType.DECIMAL, decimal=params, primary_key=pk)


@pytest.mark.parametrize(
    ("new", "delta_in_place", "iceberg_in_place"),
    [
        ((20, 4), True, True),  # more integer digits, same scale
        ((22, 6), True, False),  # scale +2 with precision +4: Delta only
        ((20, 6), True, False),  # scale +2, precision +2 (integer digits kept)
        ((20, 2), False, False),  # scale shrinks: DECIMAL(18,4) -> DECIMAL(20,2) rewrites
        ((19, 6), False, False),  # integer digits shrink (14 -> 13)
        ((18, 4), False, False),  # no change is no widening
    ],
)
def test_decimals_widen_in_place_only_as_the_format_documents(
    new: tuple[int, int], delta_in_place: bool, iceberg_in_place: bool
) -> None:
    """Delta: DECIMAL(p, s) -> DECIMAL(p + k1, s + k2) iff k1 >= k2 >= 0; Iceberg: the
    precision grows and the scale stays. Anything else rewrites the table."""
    old = _decimal(18, 4)
    assert DATABRICKS_DELTA.widens_in_place(old, _decimal(*new)) is delta_in_place
    assert SPARK_ICEBERG.widens_in_place(old, _decimal(*new)) is iceberg_in_place
    table = Table(name="t", columns=(SMALL.columns[0], old))
    plan = plan_alter_table(
        _alter((SMALL.columns[0], _decimal(*new))), table, catalog="lake", target=DATABRICKS_DELTA
    )
    kinds = {type(op) for op in plan.ops}
    if new == (18, 4):
        assert not kinds & {AlterColumnTypeOp, RewriteTableOp}
    else:
        assert (AlterColumnTypeOp in kinds) is delta_in_place
        assert (RewriteTableOp in kinds) is not delta_in_place


@pytest.mark.parametrize(
    ("schema", "table", "refused"),
    [
        ("my-schema.v2", "t", "schema name 'my-schema.v2' holds '.'"),
        ("s", "order items", "table name 'order items' holds ' '"),
        ("Sales", "t", "schema name 'Sales' has upper-case letters"),
        ("s", "Orders", "would become 'orders'"),
    ],
)
def test_unity_catalog_refuses_names_it_cannot_store(schema: str, table: str, refused: str) -> None:
    """Every request that names a schema or table asks the dialect (``Target.name_problem``)
    before anything is planned; Spark + Iceberg takes these names. (``/`` and control
    characters, DEL included, no dialect takes: ``core.names``.)"""
    request = CreateTableRequest(schema=schema, table=Table(name=table, columns=SMALL.columns))
    with pytest.raises(InvalidRequestError, match=refused) as raised:
        plan_create_table(request, None, catalog="lake", target=DATABRICKS_DELTA)
    assert "databricks_delta" in str(raised.value)
    assert plan_create_table(request, None, catalog="lake", target=SPARK_ICEBERG).ops
    assert DATABRICKS_DELTA.names.refused >= {"/", "\x00", "\x1f", "\x7f"}
    # Column names may hold what table names may not.
    odd_columns = Table(name="t", columns=(Column(name="Odd Col.1", type=DataType.INT),))
    plain = CreateTableRequest(schema="s", table=odd_columns)
    assert plan_create_table(plain, None, catalog="lake", target=DATABRICKS_DELTA).ops


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
    trees = sqlglot.parse(out, read=DATABRICKS_DELTA.sqlglot_dialect)
    assert _tree("CREATE SCHEMA IF NOT EXISTS `lake`.`s`") in trees
    assert _tree("ALTER TABLE `lake`.`s`.`t` ADD CONSTRAINT `t_pk` PRIMARY KEY (`id`)") in trees
    create = next(t for t in trees if isinstance(t, exp.Create) and t.kind == "TABLE")
    assert create.find(exp.FileFormatProperty).this.name.lower() == "delta"  # type: ignore[union-attr]
    assert main(["preview", "--dialect", "oracle", str(path)]) == 2
    assert "unknown dialect 'oracle'" in capsys.readouterr().err


def test_preview_renders_what_runs_for_the_configured_table_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --dialect, a request configured with table_format delta is shown as it runs
    here: Delta in Spark's session catalog, the key in the column metadata (no PRIMARY KEY
    DDL, which open-source Delta refuses)."""
    from spark_destination.cli.main import main

    request = {
        "request": "create_table",
        "schema": "s",
        "configuration": {"table_format": "delta"},
        "table": {"name": "t", "columns": {"id": "LONG"}, "primary_key": ["id"]},
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request), encoding="utf-8")
    assert main(["preview", str(path)]) == 0
    out = capsys.readouterr().out
    assert "CREATE TABLE `spark_catalog`.`s`.`t`" in out and "USING DELTA" in out
    assert "PRIMARY KEY" not in out and "`lake`" not in out
    # The Databricks form of the same request names the configured (Unity) catalog.
    assert main(["preview", "--dialect", "databricks_delta", str(path)]) == 0
    assert "ADD CONSTRAINT `t_pk` PRIMARY KEY" in capsys.readouterr().out


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
    assert RewriteTableOp in iceberg
    assert delta == [
        CheckConversionsOp,  # no NULL in the joining column, before any change
        CheckUniqueKeyOp,
        SetPrimaryKeyOp,  # makes the key's columns NOT NULL, then declares the key
        SetPropertiesOp,
    ]
    trees = _trees(render_plan(delta_plan, DATABRICKS_DELTA))
    expected = [
        "ALTER TABLE `lake`.`s`.`t` ALTER COLUMN `n` SET NOT NULL",
        "ALTER TABLE `lake`.`s`.`t` ADD CONSTRAINT `t_pk` PRIMARY KEY (`id`, `n`)",
    ]
    assert all(_tree(sql) in trees for sql in expected)


def test_dropping_the_whole_key_is_in_place_on_delta() -> None:
    keyless = _alter((Column(name="id", type=DataType.INT), SMALL.columns[1], SMALL.columns[2]))
    plan = plan_alter_table(keyless, SMALL, catalog="lake", target=DATABRICKS_DELTA)
    assert [type(op) for op in plan.ops] == [SetPrimaryKeyOp, DropNotNullOp, SetPropertiesOp]
    trees = _trees(render_plan(plan, DATABRICKS_DELTA))
    assert trees[0] == _tree("ALTER TABLE `lake`.`s`.`t` DROP PRIMARY KEY IF EXISTS")
    assert not any(t.find(exp.PrimaryKey) for t in trees)
    iceberg = plan_alter_table(keyless, SMALL, catalog="lake", target=SPARK_ICEBERG)
    assert RewriteTableOp in [type(op) for op in iceberg.ops]
