"""The IR is dispatched once, by the renderer: each statement says how it runs
(``rendered.Run``), and the executor matches on that, never on op classes."""

from __future__ import annotations

import ast
import inspect
from datetime import UTC, datetime

import pytest

from spark_destination.core.errors import InvalidRequestError, RenderError, ValueConversionError
from spark_destination.core.model import Column, DataType
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import ReadCatalog, RunSql, Statement
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner import ir
from spark_destination.planner.ir import (
    CheckHistoryStartOp,
    CheckLiteralOp,
    ColumnChange,
    DescribeOp,
    Op,
    TableRef,
)
from spark_destination.runtime.execute import executor as executor_module
from spark_destination.runtime.execute.executor import Executor
from tests.support.fake_spark import FakeSession

TABLE = TableRef(catalog="lake", schema="s", name="t")


class _NoStaging:
    """These plans stage nothing: no transport to choose, nothing to clean up."""

    def __init__(self, *args: object) -> None:
        pass

    def cleanup(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _no_staging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor_module, "Stager", _NoStaging)


def test_the_executor_names_no_op_class() -> None:
    """A new op needs no change to the runtime unless it runs in a new way."""
    tree = ast.parse(inspect.getsource(executor_module))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    op_classes = {name for name, value in vars(ir).items() if name.endswith("Op")}
    assert names & op_classes == set()


def test_a_directive_runs_no_sql_and_every_other_statement_does() -> None:
    op = DescribeOp(table=TABLE)
    with pytest.raises(RenderError):
        Statement(op=op, sql="", summary="plain", run=RunSql())
    with pytest.raises(RenderError):
        Statement(op=op, sql="SELECT 1", summary="directive", run=ReadCatalog())
    (describe,) = render(op, SPARK_ICEBERG)
    assert describe.directive and describe.run == ReadCatalog()


def _op_statement(op: Op) -> Statement:
    (statement,) = render(op, SPARK_ICEBERG)
    return statement


def test_a_refused_literal_quotes_the_value_to_the_user_not_the_logs() -> None:
    column = Column(name="n", type=DataType.INT)
    statement = _op_statement(CheckLiteralOp(column=column, value="x1"))
    session = FakeSession(rows=[(True,)])
    with pytest.raises(ValueConversionError) as raised:
        Executor(session).run((statement,))  # type: ignore[arg-type]
    assert str(raised.value) == "value 'x1' does not convert to column 'n' (INT, Fivetran type INT)"
    assert raised.value.loggable == (
        "the requested value does not convert to column 'n' (INT, Fivetran type INT)"
    )
    Executor(FakeSession(rows=[(False,)])).run((statement,))  # type: ignore[arg-type]


def test_a_refusal_names_the_value_the_check_found() -> None:
    at = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    op = CheckHistoryStartOp(
        table=TABLE, start="_fivetran_start", active="_fivetran_active", operation_timestamp=at
    )
    found = datetime(2024, 2, 1, tzinfo=UTC)
    with pytest.raises(InvalidRequestError) as raised:
        Executor(FakeSession(rows=[(found,)])).run((_op_statement(op),))  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"table 't' has active versions starting at {found}, after the operation timestamp "
        f"{at.isoformat()}"
    )
    Executor(FakeSession(rows=[(None,)])).run((_op_statement(op),))  # type: ignore[arg-type]


def test_a_duplicated_new_key_is_refused_with_its_count() -> None:
    key = (ColumnChange(source=None, target=Column(name="id", type=DataType.INT)),)
    statement = _op_statement(ir.CheckUniqueKeyOp(table=TABLE, key=key))
    with pytest.raises(InvalidRequestError, match=r"rows: 3 key value\(s\) occur"):
        Executor(FakeSession(rows=[(3,)])).run((statement,))  # type: ignore[arg-type]
