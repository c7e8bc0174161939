"""Table maintenance as golden SQL: the whole ``maintain`` plan of one table (what ``maintain
--preview`` prints) and the health query the automatic mode runs. Iceberg only: other dialects
refuse with a clear error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.cli.maintain import preview_maintenance, preview_maintenance_json
from spark_destination.core.errors import RenderError
from spark_destination.dialects.registry import DEFAULT, DIALECTS
from spark_destination.dialects.render import render, render_plan
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    RemoveOrphanFilesOp,
    TableHealthOp,
    TableRef,
)
from spark_destination.planner.maintenance import MaintenancePolicy, plan_maintenance
from spark_destination.service.preview import format_statements

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

ODD_TABLE = TableRef(catalog="lake", schema="my-schema.v2", name="order `items` 2024")
NOW = datetime(2024, 5, 17, 8, 30, 12, 345678, tzinfo=UTC)
POLICY = MaintenancePolicy(retention=timedelta(hours=168))


def _maintain() -> str:
    return format_statements(render_plan(plan_maintenance(ODD_TABLE, POLICY, now=NOW), DEFAULT))


def _health() -> str:
    (statement,) = render(TableHealthOp(table=ODD_TABLE), DEFAULT)
    assert statement.sql is not None
    return statement.sql + "\n"


CASES = {"maintain": _maintain, "table_health": _health}


@pytest.mark.parametrize(
    ("case", "dialect"), [(c, "spark_iceberg") for c in CASES], ids=lambda v: v
)
def test_golden_maintenance_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert CASES[case]() == sql_snapshot


def test_the_preview_is_the_plan_the_engine_runs() -> None:
    assert preview_maintenance({}, ODD_TABLE.schema, [ODD_TABLE.name], POLICY, NOW) == _maintain()
    assert (
        preview_maintenance_json(
            {"request": "maintain", "schema": ODD_TABLE.schema, "table": ODD_TABLE.name,
             "retention_hours": 168, "now": "2024-05-17T08:30:12.345678Z"}
        )  # fmt: skip
        == _maintain()
    )


@pytest.mark.parametrize("name", [n for n in DIALECTS if n != DEFAULT.name])
def test_other_dialects_refuse_maintenance(name: str) -> None:
    with pytest.raises(RenderError, match=f"not available for dialect {name}"):
        render(TableHealthOp(table=ODD_TABLE), DIALECTS[name])


def test_retention_and_orphan_age() -> None:
    plan = plan_maintenance(ODD_TABLE, MaintenancePolicy(retention=timedelta(0)), now=NOW)
    expire, orphans = plan.ops[2], plan.ops[3]
    assert isinstance(expire, ExpireSnapshotsOp) and isinstance(orphans, RemoveOrphanFilesOp)
    assert expire.older_than == NOW
    # Orphan removal never considers files younger than a day (in-flight writes).
    assert orphans.older_than == NOW - timedelta(days=1)
    no_orphans = MaintenancePolicy(retention=timedelta(hours=1), remove_orphans=False)
    assert len(plan_maintenance(ODD_TABLE, no_orphans, now=NOW).ops) == 3
