"""The executor runs the history MERGE with Iceberg's write distribution mode ``none`` (when its
shuffles have few partitions) and without Spark's whole-stage code generation (until a small
batch of it switches it: tests/unit/test_statement_runs.py), only for that statement, each
unless the operator (or, for the distribution, the table) chose otherwise."""

from __future__ import annotations

import pytest
from pyspark.sql.types import StructType

from spark_destination.core.model import Column, DataType
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.ir import MergeHistoryOp, Plan, TableRef
from spark_destination.runtime.batch.staging import Transport
from spark_destination.runtime.execute import executor as executor_module
from spark_destination.runtime.execute.executor import (
    DISTRIBUTION_MODE_CONF,
    MERGE_DISTRIBUTION_MODE_PROPERTY,
    Executor,
)
from spark_destination.runtime.execute.statement_runs import WHOLE_STAGE_CODEGEN_CONF
from spark_destination.runtime.execute.table_loader import CatalogTable
from spark_destination.runtime.spark.session import SHUFFLE_PARTITIONS_CONF
from tests.support.fake_spark import FakeSession

OP = MergeHistoryOp(
    table=TableRef(catalog="lake", schema="s", name="h"),
    view="sd_batch",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="v", type=DataType.STRING),
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
    ),
    key=("id",),
    start="_fivetran_start",
    end="_fivetran_end",
    active="_fivetran_active",
    null_string=None,
    unmodified_string=None,
)


# A request's shuffle partitions on two task slots (session.request_shuffle_partitions), and on
# a cluster of eight.
FEW = {SHUFFLE_PARTITIONS_CONF: "4"}
MANY = {SHUFFLE_PARTITIONS_CONF: "16"}


@pytest.mark.parametrize(
    ("conf", "properties", "expected"),
    [
        (FEW, {}, "none"),
        ({**FEW, DISTRIBUTION_MODE_CONF: "range"}, {}, "range"),
        (FEW, {MERGE_DISTRIBUTION_MODE_PROPERTY: "hash"}, None),
        # One data and one delete file per task each commit: on many slots, Iceberg's default.
        (MANY, {}, None),
        ({**MANY, DISTRIBUTION_MODE_CONF: "none"}, {}, "none"),
    ],
    ids=[
        "few-tasks-none",
        "operator-conf-wins",
        "table-property-wins",
        "many-tasks-iceberg-default",
        "many-tasks-operator-conf-wins",
    ],
)
def test_history_merge_distribution_mode(
    conf: dict[str, str],
    properties: dict[str, str],
    expected: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = _run(conf, properties, monkeypatch)
    assert [ran.get(DISTRIBUTION_MODE_CONF) for ran in session.conf_when_ran] == [expected]
    assert session.conf.values == conf  # nothing left behind in the session


@pytest.mark.parametrize(
    ("conf", "expected"),
    [(FEW, "false"), ({**FEW, WHOLE_STAGE_CODEGEN_CONF: "true"}, "true")],
    ids=["default-off", "operator-conf-wins"],
)
def test_history_merge_whole_stage_codegen(
    conf: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _run(conf, {}, monkeypatch)
    assert [ran.get(WHOLE_STAGE_CODEGEN_CONF) for ran in session.conf_when_ran] == [expected]
    assert session.conf.values == conf


def _run(
    conf: dict[str, str], properties: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> FakeSession:
    """The history MERGE's plan run on a fake session with ``conf`` on a table with
    ``properties``; the session (its statements and the settings in force for each)."""
    session = FakeSession(conf)

    def load_table(_session: object, table: TableRef) -> CatalogTable:
        assert table == OP.table
        return CatalogTable(schema=StructType([]), properties=properties, identifier_fields=())

    # The table's properties come from the catalog API (not SHOW TBLPROPERTIES, which redacts).
    monkeypatch.setattr(executor_module, "load_table", load_table)
    executor = Executor(session, transport=Transport.ARROW)  # type: ignore[arg-type]
    executor.run(render_plan(Plan(ops=(OP,)), SPARK_ICEBERG))
    assert all(sql.startswith("MERGE INTO") for sql, _args in session.ran)
    return session
