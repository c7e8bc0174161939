"""The executor runs the history MERGE with Iceberg's write distribution mode ``none``,
only for that statement, unless the operator or the table chose a mode."""

from __future__ import annotations

from typing import Any

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
from spark_destination.runtime.execute.table_loader import CatalogTable


class _Result:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def collect(self) -> list[tuple[Any, ...]]:
        return self._rows


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class _Session:
    def __init__(self, conf: dict[str, str], properties: dict[str, str]) -> None:
        self.conf = _Conf(conf)
        self._properties = properties
        self.merges: list[str | None] = []  # the distribution mode each MERGE ran with

    def sql(self, text: str, args: object = None) -> _Result:
        assert text.startswith("MERGE INTO") and args is None
        self.merges.append(self.conf.get(DISTRIBUTION_MODE_CONF))
        return _Result([])


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


@pytest.mark.parametrize(
    ("conf", "properties", "expected"),
    [
        ({}, {}, "none"),
        ({DISTRIBUTION_MODE_CONF: "range"}, {}, "range"),
        ({}, {MERGE_DISTRIBUTION_MODE_PROPERTY: "hash"}, None),
    ],
    ids=["default-none", "operator-conf-wins", "table-property-wins"],
)
def test_history_merge_distribution_mode(
    conf: dict[str, str],
    properties: dict[str, str],
    expected: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = _Session(conf, properties)

    def load_table(_session: object, table: TableRef) -> CatalogTable:
        assert table == OP.table
        return CatalogTable(schema=StructType([]), properties=properties, identifier_fields=())

    # The table's properties come from the catalog API (not SHOW TBLPROPERTIES, which redacts).
    monkeypatch.setattr(executor_module, "load_table", load_table)
    executor = Executor(session, transport=Transport.ARROW)  # type: ignore[arg-type]
    executor.run(render_plan(Plan(ops=(OP,)), SPARK_ICEBERG))
    assert session.merges == [expected]
    assert session.conf.values == conf  # nothing left behind in the session
