"""Table maintenance as golden SQL: the whole ``maintain`` plan of one table (what ``maintain
--preview`` prints) and the health query the automatic mode runs, per dialect: Iceberg's
procedures and metadata tables, Delta's OPTIMIZE, VACUUM and DESCRIBE DETAIL.

Each dialect's case uses the oddest names its catalog takes: Iceberg's table has a period and
spaces in its names; Unity Catalog refuses those (``test_unity_catalog_names_are_refused``),
so Delta's has hyphens and backticks."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.cli.maintain import preview_maintenance, preview_maintenance_json
from spark_destination.core.config import parse_config
from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import Column, DataType
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render, render_plan
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.preview import format_statements
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    OptimizeOp,
    RemoveOrphanFilesOp,
    TableHealthOp,
    TableLayout,
    TableRef,
    VacuumOp,
)
from spark_destination.planner.layout import table_layout
from spark_destination.planner.maintenance import (
    FileAges,
    MaintenancePolicy,
    SnapshotState,
    orphan_cutoff,
    orphan_listing_cutoff,
    plan_maintenance,
)
from spark_destination.planner.target import NameKind
from tests.sql.conftest import assert_parses_back

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

ODD_TABLE = TableRef(catalog="lake", schema="my-schema.v2", name="order `items` 2024")
UNITY_ODD_TABLE = TableRef(catalog="lake", schema="my-schema", name="order-`items`-2024")
# Spark's session catalog (Delta here) takes ASCII letters, digits and '_' only.
PLAIN_TABLE = TableRef(catalog="lake", schema="my_schema_v2", name="order_items_2024")


def _table(dialect: str) -> TableRef:
    """The oddest of the tables whose names the dialect's catalog takes."""
    chosen = DIALECTS[dialect]
    for table in (ODD_TABLE, UNITY_ODD_TABLE, PLAIN_TABLE):
        parts = ((NameKind.SCHEMA, table.schema), (NameKind.TABLE, table.name))
        if all(chosen.name_problem(kind, name) is None for kind, name in parts):
            return table
    raise AssertionError(f"{dialect} takes neither table's names")


TABLES = {dialect: _table(dialect) for dialect in DIALECTS}
KEY = ("id", "at`time")
NOW = datetime(2024, 5, 17, 8, 30, 12, 345678, tzinfo=UTC)
POLICY = MaintenancePolicy(retention=timedelta(hours=168))
# The columns of the table the layout cases lay out (its key is KEY).
COLUMNS = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="at`time", type=DataType.STRING, primary_key=True),
    Column(name="v", type=DataType.STRING),
)
# The layout the default configuration gives that table.
LAYOUT = table_layout(parse_config({}).layout_of("s", "t"), COLUMNS, KEY)


def _maintain(dialect: str) -> str:
    chosen = DIALECTS[dialect]
    plan = plan_maintenance(TABLES[dialect], POLICY, now=NOW, target=chosen, key=KEY)
    return format_statements(render_plan(plan, chosen))


def _maintain_on_s3(dialect: str) -> str:
    """On object storage the orphan step lists through the table's FileIO (no Hadoop file
    system serves s3:// in the destination)."""
    chosen = DIALECTS[dialect]
    policy = replace(POLICY, prefix_listing=True)
    plan = plan_maintenance(TABLES[dialect], policy, now=NOW, target=chosen, key=KEY)
    return format_statements(render_plan(plan, chosen))


def _health(dialect: str) -> str:
    (statement,) = render(TableHealthOp(table=TABLES[dialect]), DIALECTS[dialect])
    return statement.sql + "\n"


def _maintain_layout(dialect: str, current: TableLayout) -> str:
    """The maintenance plan of a table with the default layout's columns whose layout is
    ``current``; Delta plans its own maintenance (no layouts)."""
    chosen = DIALECTS[dialect]
    plan = plan_maintenance(
        TABLES[dialect], POLICY, now=NOW, target=chosen, key=KEY, layout=LAYOUT, current=current
    )
    return format_statements(render_plan(plan, chosen))


def _maintain_new_layout(dialect: str) -> str:
    """A plain table configured to be sorted: the layout first, then a sorting compaction of
    every file."""
    plain = table_layout(parse_config({"table_layout": "plain"}).layout_of("s", "t"), COLUMNS, KEY)
    return _maintain_layout(dialect, plain)


def _maintain_read_planning(dialect: str) -> str:
    """A sorted table created before its layout set how reads are planned: maintenance sets
    that property and compacts as usual, without rewriting every file."""
    return _maintain_layout(dialect, replace(LAYOUT, read_open_file_bytes=None))


def _maintain_bloom_filter_size(dialect: str) -> str:
    """A sorted table whose bloom filters were twice today's size: maintenance sets the new
    size and compacts as usual; the files it does not rewrite keep their bigger filters."""
    older = replace(LAYOUT, bloom_filter_bytes=2 * LAYOUT.bloom_filter_bytes)
    return _maintain_layout(dialect, older)


CASES = {
    "maintain": _maintain,
    "maintain_on_s3": _maintain_on_s3,
    "maintain_new_layout": _maintain_new_layout,
    "maintain_read_planning": _maintain_read_planning,
    "maintain_bloom_filter_size": _maintain_bloom_filter_size,
    "table_health": _health,
}


@pytest.mark.parametrize(
    ("case", "dialect"), [(c, d) for c in CASES for d in DIALECTS], ids=lambda v: v
)
def test_golden_maintenance_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert CASES[case](dialect) == sql_snapshot


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_maintenance_statements_parse_back(dialect: str) -> None:
    chosen = DIALECTS[dialect]
    plan = plan_maintenance(TABLES[dialect], POLICY, now=NOW, target=chosen, key=KEY)
    for statement in render_plan(plan, chosen):
        assert_parses_back(statement, chosen)


def test_the_preview_is_the_plan_the_engine_runs() -> None:
    table = TABLES["spark_iceberg"]
    previewed = preview_maintenance({}, table.schema, [table.name], POLICY, NOW, key=KEY)
    assert previewed == _maintain("spark_iceberg")
    assert (
        preview_maintenance_json(
            {
                "request": "maintain",
                "schema": table.schema,
                "table": table.name,
                "retention_hours": 168,
                "now": "2024-05-17T08:30:12.345678Z",
            }
        )  # fmt: skip
        == _maintain("spark_iceberg")
    )
    delta = TABLES["databricks_delta"]
    request = {
        "request": "maintain",
        "schema": delta.schema,
        "table": delta.name,
        "retention_hours": 168,
        "now": "2024-05-17T08:30:12.345678Z",
        "key": list(KEY),
    }
    assert preview_maintenance_json(request, DATABRICKS_DELTA) == _maintain("databricks_delta")


def test_each_dialect_plans_only_its_own_maintenance() -> None:
    iceberg = plan_maintenance(ODD_TABLE, POLICY, now=NOW, target=SPARK_ICEBERG, key=KEY)
    delta = plan_maintenance(ODD_TABLE, POLICY, now=NOW, target=DATABRICKS_DELTA, key=KEY)
    assert not any(isinstance(op, OptimizeOp | VacuumOp) for op in iceberg.ops)
    assert [type(op) for op in delta.ops] == [OptimizeOp, VacuumOp]
    optimize, vacuum = delta.ops
    assert isinstance(optimize, OptimizeOp) and optimize.cluster_by == KEY
    assert isinstance(vacuum, VacuumOp) and vacuum.retain_hours == 168


def test_delta_refuses_a_retention_its_vacuum_would_refuse() -> None:
    """VACUUM fails under 168 hours while Delta's retention check is on: refused up front."""
    short = MaintenancePolicy(retention=timedelta(hours=24))
    with pytest.raises(InvalidRequestError, match="24 hours is below the 168 hours"):
        plan_maintenance(ODD_TABLE, short, now=NOW, target=DATABRICKS_DELTA)
    assert plan_maintenance(ODD_TABLE, short, now=NOW, target=SPARK_ICEBERG).ops
    # A fraction of an hour rounds up: never less than asked.
    longer = MaintenancePolicy(retention=timedelta(hours=168, minutes=1))
    vacuum = plan_maintenance(ODD_TABLE, longer, now=NOW, target=DATABRICKS_DELTA).ops[1]
    assert isinstance(vacuum, VacuumOp) and vacuum.retain_hours == 169


def test_unity_catalog_names_are_refused() -> None:
    with pytest.raises(InvalidRequestError, match="schema name 'my-schema.v2' holds"):
        preview_maintenance({}, ODD_TABLE.schema, [ODD_TABLE.name], POLICY, NOW, DATABRICKS_DELTA)


def test_retention_and_orphan_age() -> None:
    plan = plan_maintenance(
        ODD_TABLE, MaintenancePolicy(retention=timedelta(0)), now=NOW, target=SPARK_ICEBERG
    )
    expire, orphans = plan.ops[2], plan.ops[3]
    assert isinstance(expire, ExpireSnapshotsOp) and isinstance(orphans, RemoveOrphanFilesOp)
    assert expire.older_than == NOW
    # Orphan removal never considers files younger than a day (in-flight writes).
    assert orphans.older_than == NOW - timedelta(days=1, minutes=1)
    no_orphans = MaintenancePolicy(retention=timedelta(hours=1), remove_orphans=False)
    assert len(plan_maintenance(ODD_TABLE, no_orphans, now=NOW, target=SPARK_ICEBERG).ops) == 3


def _expires(snapshots: SnapshotState | None) -> bool:
    plan = plan_maintenance(ODD_TABLE, POLICY, now=NOW, target=SPARK_ICEBERG, snapshots=snapshots)
    return any(isinstance(op, ExpireSnapshotsOp) for op in plan.ops)


def test_expiry_is_left_out_when_no_snapshot_is_older_than_the_retention() -> None:
    """``expire_snapshots`` commits and runs Spark jobs over the manifests even when it
    expires nothing: a table whose snapshots are all within the retention, with no ref of its
    own retention, skips it."""
    cutoff = NOW - POLICY.retention
    young = SnapshotState(oldest=cutoff, refs_with_own_retention=False)
    assert not _expires(young)
    assert not _expires(SnapshotState(oldest=None, refs_with_own_retention=False))
    # A snapshot older than the cut-off, or a branch or tag that may expire younger ones.
    assert _expires(
        SnapshotState(oldest=cutoff - timedelta(microseconds=1), refs_with_own_retention=False)
    )
    assert _expires(SnapshotState(oldest=cutoff, refs_with_own_retention=True))
    # Without the table's state (a preview reads no table), every step is planned.
    assert _expires(None)
    # The other steps stay.
    plan = plan_maintenance(ODD_TABLE, POLICY, now=NOW, target=SPARK_ICEBERG, snapshots=young)
    assert len(plan.ops) == 3 and isinstance(plan.ops[2], RemoveOrphanFilesOp)


def _removes_orphans(files: FileAges | None) -> bool:
    plan = plan_maintenance(ODD_TABLE, POLICY, now=NOW, target=SPARK_ICEBERG, files=files)
    return any(isinstance(op, RemoveOrphanFilesOp) for op in plan.ops)


def test_orphan_removal_is_left_out_when_no_file_is_older_than_its_cut_off() -> None:
    """``remove_orphan_files`` reads every manifest even when no file under the location is
    old enough to delete: a listing that found none older than its cut-off leaves it out."""
    cutoff = orphan_cutoff(POLICY, NOW)
    assert cutoff == NOW - POLICY.retention
    assert not _removes_orphans(FileAges(none_before=cutoff))
    # A listing against an earlier time says nothing of the files between it and the cut-off.
    assert _removes_orphans(FileAges(none_before=cutoff - timedelta(microseconds=1)))
    # Without a listing (a preview, or a table not listed), the step is planned.
    assert _removes_orphans(None)
    # The retention never brings the cut-off within a day of now.
    short = MaintenancePolicy(retention=timedelta(hours=1))
    assert orphan_cutoff(short, NOW) < NOW - timedelta(days=1)


def test_the_location_is_listed_only_for_a_table_younger_than_the_orphan_cut_off() -> None:
    cutoff = orphan_cutoff(POLICY, NOW)
    young = SnapshotState(oldest=cutoff, refs_with_own_retention=False)
    empty = SnapshotState(oldest=None, refs_with_own_retention=False)
    old = SnapshotState(oldest=cutoff - timedelta(seconds=1), refs_with_own_retention=False)
    assert orphan_listing_cutoff(POLICY, NOW, SPARK_ICEBERG, young) == cutoff
    assert orphan_listing_cutoff(POLICY, NOW, SPARK_ICEBERG, empty) == cutoff
    # An older table has files that old: the listing would only be repeated by the step.
    assert orphan_listing_cutoff(POLICY, NOW, SPARK_ICEBERG, old) is None
    # No step to leave out: orphan removal off, or Delta (VACUUM removes what Delta never
    # referenced in the same command).
    no_orphans = replace(POLICY, remove_orphans=False)
    assert orphan_listing_cutoff(no_orphans, NOW, SPARK_ICEBERG, young) is None
    assert orphan_listing_cutoff(POLICY, NOW, DATABRICKS_DELTA, young) is None
