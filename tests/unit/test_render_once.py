"""Render once: the executor runs exactly the SQL the engine rendered (and preview shows),
picking the batch MERGE's unique-keys form only when staging found no repeated key."""

from __future__ import annotations

from typing import Any

import pytest

from spark_destination.dialects.render import render_plan
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.model import Column, DataType, FileKind
from spark_destination.planner.ir import (
    MergeBatchOp,
    Plan,
    StageBatchOp,
    StagedFile,
    TableRef,
)
from spark_destination.preview import format_statements
from spark_destination.rendered import Form
from spark_destination.runtime import executor as executor_module
from spark_destination.runtime.executor import Executor
from spark_destination.runtime.staging import FileSpan, StagedBatch

COLUMNS = (
    Column(name="id", type=DataType.INT, primary_key=True),
    Column(name="v", type=DataType.STRING),
)
FILE = StagedFile(kind=FileKind.REPLACE, path="/in/a.csv")
PLAN = Plan(
    ops=(
        StageBatchOp(
            view="sd_batch",
            files=(FILE,),
            columns=COLUMNS,
            key=("id",),
            null_string="N",
            unmodified_string="U",
        ),
        MergeBatchOp(
            table=TableRef(catalog="lake", schema="s", name="t"),
            view="sd_batch",
            columns=COLUMNS,
            key=("id",),
            null_string="N",
            unmodified_string="U",
            has_upserts=True,
        ),
    )
)


class _Result:
    def collect(self) -> list[tuple[Any, ...]]:
        return []


class _Session:
    def __init__(self) -> None:
        self.ran: list[str] = []

    def sql(self, text: str) -> _Result:
        self.ran.append(text)
        return _Result()


class _Stager:
    repeated = 0

    def __init__(self, *_: object) -> None:
        pass

    def stage(self, op: StageBatchOp, **_: object) -> StagedBatch:
        span = FileSpan(file=FILE, first_seq=0, rows=3)
        return StagedBatch(view=op.view, rows=3, spans=(span,), repeated_rows=self.repeated)

    def cleanup(self) -> None:
        pass


@pytest.mark.parametrize(("repeated", "form"), [(0, Form.UNIQUE_KEYS), (2, None)])
def test_the_executor_runs_the_rendered_form_staging_calls_for(
    repeated: int, form: Form | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = render_plan(PLAN, SPARK_ICEBERG)
    merge = statements[-1]
    expected = merge.sql if form is None else merge.form(form)
    assert expected is not None and merge.form(Form.UNIQUE_KEYS) != merge.sql

    stager = type("Stager", (_Stager,), {"repeated": repeated})
    monkeypatch.setattr(executor_module, "Stager", stager)
    session = _Session()
    Executor(session).run(statements)  # type: ignore[arg-type]
    # Staging is the value check; the MERGE runs as rendered, in the form staging called for.
    assert session.ran == [expected]
    # Both forms are what preview prints.
    shown = format_statements(statements)
    assert merge.sql in shown and merge.form(Form.UNIQUE_KEYS) in shown  # type: ignore[operator]
