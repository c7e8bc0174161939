"""Render once: the executor runs exactly the SQL the engine rendered (and preview shows),
picking the batch MERGE's unique-keys form only when staging found no repeated key, and a
key-filter form (folding or not), with the batch's keys bound to the markers, only for a small
batch."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from spark_destination.core.errors import ExecutionError
from spark_destination.core.model import Column, DataType, FileKind
from spark_destination.dialects import edge
from spark_destination.dialects.render import render, render_plan
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.preview import format_statements
from spark_destination.planner.ir import (
    MergeBatchOp,
    MergeHistoryOp,
    Plan,
    StageBatchOp,
    StagedFile,
    TableRef,
)
from spark_destination.runtime.batch.staging import FileSpan, StagedBatch
from spark_destination.runtime.execute import executor as executor_module
from spark_destination.runtime.execute.executor import VECTORIZATION_CONF, Executor
from spark_destination.runtime.execute.spark_errors import describe_spark_error
from spark_destination.runtime.execute.table_loader import FORMAT_VERSION_PROPERTY, CatalogTable
from tests.support.fake_spark import FakeSession

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
            filter_key=("id",),
        ),
    )
)


@pytest.fixture(autouse=True)
def table_properties(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The properties the catalog gives the batch's table (the fake session has no catalog);
    a test may fill them."""
    properties: dict[str, str] = {}

    def load_table(_session: object, _table: TableRef) -> CatalogTable:
        return CatalogTable(schema=StructType([]), properties=properties, identifier_fields=())

    monkeypatch.setattr(executor_module, "load_table", load_table)
    return properties


class _Stager:
    repeated = 0
    rows = 3

    def __init__(self, *_: object) -> None:
        pass

    def stage(self, op: StageBatchOp, **_: object) -> StagedBatch:
        span = FileSpan(file=FILE, first_seq=0, rows=self.rows)
        # Keys 7, 8, 9, ...; the second row repeats the first's key when a key repeats, and
        # staging gives each key once (``StagedBatch.keys``).
        keys = [7 + i for i in range(self.rows)]
        if self.repeated:
            del keys[1]
        return StagedBatch(
            view=op.view,
            rows=self.rows,
            spans=(span,),
            repeated_rows=self.repeated,
            keys=pa.table({"id": pa.array(keys, pa.int32())}),
        )

    def cleanup(self) -> None:
        pass


@pytest.mark.parametrize(
    ("repeated", "rows", "form"),
    [
        (0, 3, Form.KEY_FILTER),
        (0, 201, Form.UNIQUE_KEYS),
        (2, 3, Form.FOLDED_KEY_FILTER),
        # 202 rows, 201 distinct keys: one more than the markers.
        (2, 202, None),
    ],
)
def test_the_executor_runs_the_rendered_form_staging_calls_for(
    repeated: int, rows: int, form: Form | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = render_plan(PLAN, SPARK_ICEBERG)
    merge = statements[-1]
    expected = merge.sql if form is None else merge.form(form)
    assert expected is not None
    forms = (Form.UNIQUE_KEYS, Form.KEY_FILTER, Form.FOLDED_KEY_FILTER)
    assert len({merge.sql, *(merge.form(f) for f in forms)}) == 4

    stager = type("Stager", (_Stager,), {"repeated": repeated, "rows": rows})
    monkeypatch.setattr(executor_module, "Stager", stager)
    # Values bind through Spark's JVM API (runtime.execute.bound_sql); here the fake records them.
    monkeypatch.setattr(executor_module, "bound_sql", lambda s, text, args: s.sql(text, args))
    session = FakeSession()
    Executor(session).run(statements)  # type: ignore[arg-type]
    # Staging is the value check; the MERGE runs as rendered, in the form staging called for.
    [(ran, args)] = session.ran
    assert ran == expected
    if form in (Form.KEY_FILTER, Form.FOLDED_KEY_FILTER):
        # The batch's distinct keys bind to the markers (the first fills the unused ones);
        # the SQL text holds no key.
        assert merge.key_filter is not None
        [(column, markers)] = merge.key_filter.columns
        assert column == "id" and len(markers) == SPARK_ICEBERG.key_filter_slots
        keys = [7, 8, 9] if form is Form.KEY_FILTER else [7, 9]
        assert args == dict(zip(markers, keys + [7] * (len(markers) - len(keys)), strict=True))
        assert all(f":{m}" in ran for m in markers)
    else:
        assert args is None
    # Every form is what preview prints.
    shown = format_statements(statements)
    assert all(text in shown for text in (merge.sql, *(sql for _, sql in merge.forms)))


@pytest.mark.parametrize(
    ("version", "operator", "expected"),
    [("2", None, None), ("3", None, "false"), ("3", "true", "true")],
    ids=["v2-vectorized", "v3-row-by-row", "operator-conf-wins"],
)
def test_a_merge_scans_a_v3_table_without_the_vectorized_reader(
    version: str,
    operator: str | None,
    expected: str | None,
    monkeypatch: pytest.MonkeyPatch,
    table_properties: dict[str, str],
) -> None:
    """Iceberg's vectorized reader grew direct memory with every MERGE on a v3 table until the
    JVM died; the MERGE's session reads such a table row by row, and leaves nothing behind."""
    table_properties[FORMAT_VERSION_PROPERTY] = version
    monkeypatch.setattr(executor_module, "Stager", _Stager)
    monkeypatch.setattr(executor_module, "bound_sql", lambda s, text, args: s.sql(text, args))
    conf = {} if operator is None else {VECTORIZATION_CONF: operator}
    session = FakeSession(conf)
    Executor(session).run(render_plan(PLAN, SPARK_ICEBERG))  # type: ignore[arg-type]
    [ran] = session.conf_when_ran
    assert ran.get(VECTORIZATION_CONF) == expected
    assert session.conf.values == conf


def test_a_failed_statement_with_bound_keys_names_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small batch's keys are bound values; a Spark message that prints the plan shows them
    as unquoted literals, so the error names none. Without bound values numbers stay."""
    from pyspark.errors import PySparkException

    stager = type("Stager", (_Stager,), {"repeated": 0, "rows": 3})
    monkeypatch.setattr(executor_module, "Stager", stager)
    monkeypatch.setattr(executor_module.transient, "retrying", lambda run, what, **_: run())

    def fail(session: object, text: str, args: dict[str, object]) -> object:
        shown = ", ".join(str(v) for v in args.values())
        raise PySparkException(message=f"[SOME_ERROR] Cannot plan: id IN ({shown}) 2024-01-31")

    monkeypatch.setattr(executor_module, "bound_sql", fail)
    with pytest.raises(ExecutionError) as caught:
        Executor(FakeSession()).run(render_plan(PLAN, SPARK_ICEBERG))  # type: ignore[arg-type]
    message = str(caught.value)
    assert "[SOME_ERROR] Cannot plan: id IN (" in message
    assert not any(digit in message for digit in "0123456789")

    unbound = PySparkException(message="[PARSE_SYNTAX_ERROR] error at line 3 pos 11")
    assert describe_spark_error(unbound) == "[PARSE_SYNTAX_ERROR] error at line 3 pos 11"


HISTORY_COLUMNS = (
    *COLUMNS,
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
)
HISTORY_MERGE = MergeHistoryOp(
    table=TableRef(catalog="lake", schema="s", name="h"),
    view="sd_batch",
    columns=HISTORY_COLUMNS,
    key=("id",),
    start="_fivetran_start",
    end="_fivetran_end",
    active="_fivetran_active",
    null_string="N",
    unmodified_string="U",
    filter_key=("id",),
)


@pytest.mark.parametrize(
    ("repeated", "unmodified", "rows", "form"),
    [
        (0, False, 3, Form.FULL_VERSIONS_KEY_FILTER),
        (0, False, 201, Form.FULL_VERSIONS),
        (0, True, 3, Form.FILLED_VERSIONS_KEY_FILTER),
        (0, True, 201, Form.FILLED_VERSIONS),
        (2, False, 3, Form.KEY_FILTER),  # a key with two new versions
        (2, True, 201, None),
    ],
)
def test_the_history_merge_reads_stored_versions_first_only_when_staging_calls_for_it(
    repeated: int, unmodified: bool, rows: int, form: Form | None
) -> None:
    (merge,) = render_plan(Plan(ops=(HISTORY_MERGE,)), SPARK_ICEBERG)
    expected = merge.sql if form is None else merge.form(form)
    assert expected is not None
    assert len({merge.sql, *(sql for _, sql in merge.forms)}) == 6
    batch = StagedBatch(
        view="sd_batch",
        rows=rows,
        spans=(),
        repeated_rows=repeated,
        unmodified_values=unmodified,
        keys=pa.table({"id": pa.array(range(rows), pa.int32())}),
    )
    sql, args = Executor._history_form(merge, batch)
    assert sql == expected
    filtered = (Form.FULL_VERSIONS_KEY_FILTER, Form.FILLED_VERSIONS_KEY_FILTER, Form.KEY_FILTER)
    assert (args is not None) == (form in filtered)


def test_a_merge_of_a_known_shape_renders_without_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A statement's skeleton is parsed once per shape and shared by every table of that
    shape; rendering fills it with trees and prints it, so a second table of the same shape
    (other names, other sentinels) renders without calling sqlglot's parser at all."""
    import sqlglot

    # Shapes other tests of the same process rendered (the whole run) are parsed already.
    edge._parsed.cache_clear()
    merge = PLAN.ops[1]
    assert isinstance(merge, MergeBatchOp)
    (first,) = render(merge, SPARK_ICEBERG)
    parses: list[str] = []
    real_parse = sqlglot.parse

    def counting_parse(sql: str, *args: Any, **kwargs: Any) -> Any:
        parses.append(sql)
        return real_parse(sql, *args, **kwargs)

    monkeypatch.setattr(sqlglot, "parse", counting_parse)
    monkeypatch.setattr(sqlglot, "parse_one", counting_parse)
    renamed = (Column(name="other key", type=DataType.INT, primary_key=True), COLUMNS[1])
    other = dataclasses.replace(
        merge,
        table=TableRef(catalog="lake", schema="s2", name="u"),
        view="sd_batch_2",
        columns=renamed,
        key=("other key",),
        filter_key=("other key",),
        unmodified_string="other",
    )
    (second,) = render(other, SPARK_ICEBERG)
    assert parses == []
    assert "`s2`.`u`" in second.sql and "`other key`" in second.sql
    assert second.sql != first.sql
    # A shape not seen before (another column count) is parsed: the count is real.
    wider = dataclasses.replace(other, columns=(*renamed, Column(name="w", type=DataType.LONG)))
    render(wider, SPARK_ICEBERG)
    assert parses


def test_preview_parses_back_what_it_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine renders without parsing; ``preview`` checks every form it prints parses
    back strictly and prints the same (here a parse-back that differs stops it)."""
    from spark_destination.core.errors import RenderError
    from spark_destination.engine import preview as preview_module

    statements = render_plan(PLAN, SPARK_ICEBERG)
    assert preview_module.checked(statements, SPARK_ICEBERG) == statements
    seen: list[str] = []

    def differing(read: str, name: str, sql: str, **_: object) -> str:
        seen.append(sql)
        return sql + " "

    monkeypatch.setattr(preview_module, "parse_back", differing)
    with pytest.raises(RenderError, match="does not print back the same"):
        preview_module.checked(statements, SPARK_ICEBERG)
    assert seen
