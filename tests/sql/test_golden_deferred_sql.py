"""Deferred write mode's statements as golden SQL, parsed back by sqlglot: the intermediate
table's DDL, the append, the counters query, the merge flush and its clean-up."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.core.model import Column, DataType, Table
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.rendered import Form
from spark_destination.planner.deferred import create_pending
from spark_destination.planner.ir import (
    AppendPendingOp,
    ClearPendingOp,
    FlushPendingOp,
    Op,
    PendingKeysOp,
    PendingStatsOp,
    TableRef,
)
from tests.sql.conftest import assert_parses_back, golden_params, golden_text, rendered
from tests.sql.test_golden_sql import ALL_TYPES, ORDERS, TABLE

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

PENDING = TableRef(catalog="lake", schema="sales", name="sd__pending__orders")
# Odd column names; a table name every dialect's catalog takes.
ALL_TYPES_TABLE = TableRef(catalog="lake", schema="sales", name="all_types")
ALL_TYPES_PENDING = TableRef(catalog="lake", schema="sales", name="sd__pending__all_types")
KEY = ("id", "region")
KEY_ONLY = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="sku", type=DataType.STRING, primary_key=True),
)

CASES: dict[str, Op] = {
    "deferred_intermediate_table": create_pending(Table(name="orders", columns=ORDERS), PENDING),
    # The request names every column but `note`: NULL there, and unmodified on every row.
    "deferred_append": AppendPendingOp(
        table=TABLE,
        pending=PENDING,
        view="sd_batch",
        columns=ORDERS,
        key=KEY,
        staged=tuple(c.name for c in ORDERS if c.name != "note"),
        masked=("amount", "_fivetran_synced", "_fivetran_deleted"),
    ),
    # Every type, odd column names, no unmodified sentinel: no staged mask, every mask false.
    "deferred_append_all_types_no_sentinel": AppendPendingOp(
        table=ALL_TYPES_TABLE,
        pending=ALL_TYPES_PENDING,
        view="sd_batch",
        columns=ALL_TYPES,
        key=("id",),
        staged=tuple(c.name for c in ALL_TYPES),
        masked=(),
    ),
    "deferred_counts": PendingStatsOp(table=TABLE, pending=PENDING),
    "deferred_flush": FlushPendingOp(table=TABLE, pending=PENDING, columns=ORDERS, key=KEY),
    # The form the runtime runs when the pending keys fit the markers: the scan is filtered.
    # Four markers here, for a readable golden (the planner asks the target: thousands).
    "deferred_flush_key_filter": FlushPendingOp(
        table=TABLE, pending=PENDING, columns=ORDERS, key=KEY, filter_key=KEY, filter_slots=4
    ),
    "deferred_keys": PendingKeysOp(table=TABLE, pending=PENDING, key=KEY, limit=5),
    "deferred_flush_all_types": FlushPendingOp(
        table=ALL_TYPES_TABLE, pending=ALL_TYPES_PENDING, columns=ALL_TYPES, key=("id",)
    ),
    # A table of key columns only: nothing to update, so no matched-update clause.
    "deferred_flush_key_only": FlushPendingOp(
        table=TABLE, pending=PENDING, columns=KEY_ONLY, key=("id", "sku")
    ),
    "deferred_clear": ClearPendingOp(table=TABLE, pending=PENDING),
}


# Cases that show one of the flush's alternative forms (the runtime picks it after reading keys).
FORMS = {"deferred_flush_key_filter": Form.KEY_FILTER}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_golden_deferred_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert golden_text(CASES[case], dialect, FORMS.get(case)) == sql_snapshot


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_deferred_sql_parses_back_strictly(case: str, dialect: str) -> None:
    for statement in rendered(CASES[case], dialect):
        assert_parses_back(statement, DIALECTS[dialect])


def test_the_counters_and_no_row_value_are_bound_as_markers() -> None:
    (append,) = rendered(CASES["deferred_append"], "spark_iceberg")
    (flush,) = rendered(CASES["deferred_flush"], "spark_iceberg")
    (clear,) = rendered(CASES["deferred_clear"], "spark_iceberg")
    assert ":sd_seq_base + `__sd_seq`" in append.sql and ":sd_batch_number" in append.sql
    assert "`__sd_seq` <= :sd_flush_high" in flush.sql
    assert "`__sd_seq` <= :sd_flush_high" in clear.sql


def test_the_flush_key_filter_form_filters_the_table_by_the_pending_keys() -> None:
    (statement,) = rendered(CASES["deferred_flush_key_filter"], "spark_iceberg")
    (keys,) = rendered(CASES["deferred_keys"], "spark_iceberg")
    filtered = statement.form(Form.KEY_FILTER)
    assert filtered is not None and statement.key_filter is not None
    assert [name for name, _ in statement.key_filter.columns] == ["id", "region"]
    for name, markers in statement.key_filter.columns:
        assert len(markers) == 4
        bound = ", ".join(f":{marker}" for marker in markers)
        assert f"`t`.`{name}` IN ({bound})" in filtered
    # The plain form reads the whole table; the keys query reads one more key than fits.
    assert ":sd_key" not in (statement.sql or "")
    assert keys.sql.endswith("LIMIT 5")
    assert "`__sd_seq` <= :sd_flush_high" in keys.sql
    (unfiltered,) = rendered(CASES["deferred_flush"], "spark_iceberg")
    assert unfiltered.form(Form.KEY_FILTER) is None and unfiltered.key_filter is None


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_flush_with_more_slots_than_a_batch_merge_has_a_wide_key_filter_form(
    dialect: str,
) -> None:
    # The batch MERGE's number of markers first (binding thousands costs seconds), then the
    # wide form for the rest, up to ``filter_slots``.
    narrow = DIALECTS[dialect].key_filter_slots
    op = FlushPendingOp(
        table=TABLE,
        pending=PENDING,
        columns=ORDERS,
        key=KEY,
        filter_key=KEY,
        filter_slots=narrow + 50,
    )
    (statement,) = rendered(op, dialect)
    assert statement.key_filter is not None and statement.wide_key_filter is not None
    assert [len(m) for _, m in statement.key_filter.columns] == [narrow, narrow]
    assert [len(m) for _, m in statement.wide_key_filter.columns] == [narrow + 50] * 2
    wide = statement.form(Form.WIDE_KEY_FILTER)
    assert wide is not None and f":sd_key_1_{narrow + 49}" in wide
    assert f":sd_key_1_{narrow}" not in (statement.form(Form.KEY_FILTER) or "")
    assert_parses_back(statement, DIALECTS[dialect])
    # No wider than the batch MERGE's: no wide form.
    (plain,) = rendered(
        FlushPendingOp(
            table=TABLE,
            pending=PENDING,
            columns=ORDERS,
            key=KEY,
            filter_key=KEY,
            filter_slots=narrow,
        ),
        dialect,
    )
    assert plain.form(Form.WIDE_KEY_FILTER) is None and plain.wide_key_filter is None
