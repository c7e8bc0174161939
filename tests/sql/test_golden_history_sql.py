"""Every history-mode (WriteHistoryBatch) statement as golden SQL, parsed back by sqlglot."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.core.model import Column, DataType, DecimalParams
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.rendered import Form
from spark_destination.planner.ir import (
    MergeHistoryOp,
    Op,
    TableRef,
    TruncateOp,
)
from tests.sql.conftest import assert_parses_back, golden_params, golden_text, rendered

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TABLE = TableRef(catalog="lake", schema="sales", name="orders_history")
ODD_TABLE = TableRef(catalog="lake", schema="my-schema.v2", name="order `items` history")
# Odd names Unity Catalog accepts: the ODD_TABLE case's Databricks golden is its refusal.
UNITY_TABLE = TableRef(catalog="lake", schema="my-schema", name="order-`items`-history")

HISTORY = (
    Column(name="id", type=DataType.INT, primary_key=True),
    Column(name="region", type=DataType.STRING, primary_key=True),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)),
    Column(name="note`s", type=DataType.STRING),
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
)


def _merge(
    table: TableRef, null: str | None, unmod: str | None, filter_key: tuple[str, ...] = ()
) -> MergeHistoryOp:
    return MergeHistoryOp(
        table=table,
        view="sd_batch",
        columns=HISTORY,
        key=("id", "region"),
        start="_fivetran_start",
        end="_fivetran_end",
        active="_fivetran_active",
        null_string=null,
        unmodified_string=unmod,
        filter_key=filter_key,
    )


CASES: dict[str, Op] = {
    "merge_history": _merge(TABLE, NULL, UNMOD),
    "merge_history_odd_names_no_sentinels": _merge(ODD_TABLE, None, None),
    "merge_history_unity_names_no_sentinels": _merge(UNITY_TABLE, None, None),
    # One filtered key column keeps the golden readable (the batch golden shows two).
    "merge_history_key_filter": _merge(TABLE, NULL, UNMOD, filter_key=("id",)),
    "merge_history_full_versions": _merge(TABLE, NULL, UNMOD),
    "merge_history_full_versions_key_filter": _merge(TABLE, NULL, UNMOD, filter_key=("id",)),
    "merge_history_filled_versions": _merge(TABLE, NULL, UNMOD),
    "merge_history_filled_versions_key_filter": _merge(TABLE, NULL, UNMOD, filter_key=("id",)),
    "truncate_soft_history": TruncateOp(
        table=TABLE,
        synced_column="_fivetran_synced",
        before=datetime(2024, 5, 17, 8, 30, 12, 345000, tzinfo=UTC),
        soft_deleted_column=None,
        history_close=("_fivetran_end", "_fivetran_active"),
    ),
}

# Cases that show one of the MERGE's alternative forms (the runtime picks it after staging).
FORMS = {
    "merge_history_key_filter": Form.KEY_FILTER,
    "merge_history_full_versions": Form.FULL_VERSIONS,
    "merge_history_full_versions_key_filter": Form.FULL_VERSIONS_KEY_FILTER,
    "merge_history_filled_versions": Form.FILLED_VERSIONS,
    "merge_history_filled_versions_key_filter": Form.FILLED_VERSIONS_KEY_FILTER,
}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_golden_history_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    assert golden_text(CASES[case], dialect, FORMS.get(case)) == sql_snapshot


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_history_sql_parses_back_strictly(case: str, dialect: str) -> None:
    for statement in rendered(CASES[case], dialect):
        assert_parses_back(statement, DIALECTS[dialect])


def test_history_merge_closes_one_millisecond_before_the_earliest_start() -> None:
    (statement,) = rendered(CASES["merge_history"], "spark_iceberg")
    sql = statement.sql
    assert sql is not None
    assert "THEN `__sd_earliest` - INTERVAL '1' MILLISECOND" in sql
    # The earliest/delete matches never use _fivetran_start as part of the key: the stored
    # versions are those of the batch's keys, windowed per key.
    assert "(`id`, `region`) IN (" in sql
    assert "PARTITION BY `id`, `region`\n" in sql
    assert "PARTITION BY `id`, `region`, `_fivetran_start`" not in sql


def test_the_history_key_filter_form_filters_both_reads_of_the_table() -> None:
    (statement,) = rendered(CASES["merge_history_key_filter"], "spark_iceberg")
    filtered = statement.form(Form.KEY_FILTER)
    assert filtered is not None and statement.key_filter is not None
    [(column, markers)] = statement.key_filter.columns
    assert column == "id"
    # The stored versions of the batch's keys, and the MERGE's target.
    assert "AND `id` IN (\n        :sd_key_0_0," in filtered
    assert "AND `t`.`id` IN (\n  :sd_key_0_0," in filtered
    assert filtered.count(f":{markers[-1]}") == 2
    unfiltered = rendered(CASES["merge_history"], "spark_iceberg")[0]
    assert unfiltered.form(Form.KEY_FILTER) is None and ":sd_key" not in (unfiltered.sql or "")


def test_the_full_versions_form_reads_the_table_only_as_the_merge_target() -> None:
    (statement,) = rendered(CASES["merge_history_full_versions_key_filter"], "spark_iceberg")
    full = statement.form(Form.FULL_VERSIONS)
    filtered = statement.form(Form.FULL_VERSIONS_KEY_FILTER)
    assert full is not None and filtered is not None and statement.key_filter is not None
    table = "`lake`.`sales`.`orders_history`"
    assert full.count(table) == filtered.count(table) == 1
    # Stored versions match by key only (through the one close row per key), not by start.
    assert "ON (\n  `t`.`id` = `s`.`id` AND `t`.`region` = `s`.`region`\n)" in full
    assert "AND `s`.`__sd_action` = 'close'" in full
    [(_, markers)] = statement.key_filter.columns
    assert filtered.count(f":{markers[-1]}") == 1 and ":sd_key" not in full


def test_the_filled_versions_form_reads_the_newest_surviving_stored_version() -> None:
    (statement,) = rendered(CASES["merge_history_filled_versions_key_filter"], "spark_iceberg")
    filled = statement.form(Form.FILLED_VERSIONS)
    filtered = statement.form(Form.FILLED_VERSIONS_KEY_FILTER)
    assert filled is not None and filtered is not None and statement.key_filter is not None
    table = "`lake`.`sales`.`orders_history`"
    # Read twice: the stored versions that survive (by an aggregate, no window), the target.
    assert filled.count(table) == filtered.count(table) == 2
    assert " OVER " not in filled
    assert "`t`.`_fivetran_start` < `k`.`__sd_earliest`" in filled
    assert "MAX_BY(" in filled
    assert "`t`.`_fivetran_start`\n      ) AS `__sd_stored_values`" in filled
    # An unmodified value comes from that version; the start is never filled.
    assert (
        "CASE\n        WHEN `r`.`__sd_unmodified_amount`\n"
        "        THEN `b`.`__sd_stored_values`.`amount`\n        ELSE `r`.`amount`\n"
    ) in filled
    assert "__sd_unmodified__fivetran_start" not in filled
    [(_, markers)] = statement.key_filter.columns
    assert filtered.count(f":{markers[-1]}") == 2 and ":sd_key" not in filled


def test_without_the_unmodified_sentinel_there_is_no_filled_form() -> None:
    (statement,) = rendered(CASES["merge_history_odd_names_no_sentinels"], "spark_iceberg")
    assert statement.form(Form.FILLED_VERSIONS) is None
    assert statement.form(Form.FULL_VERSIONS) is not None
