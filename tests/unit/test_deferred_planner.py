"""Deferred write mode, pure: its configuration, the intermediate table's name and layout, the
deferred WriteBatch plan, and ``preview`` of the append and the flush (no Spark)."""

from __future__ import annotations

import pytest

from spark_destination.core.config import WriteMode, parse_config
from spark_destination.core.errors import ConfigurationError, InvalidRequestError
from spark_destination.core.model import Column, DataType, FileParams, Table
from spark_destination.core.parsers import OFF
from spark_destination.core.requests import BatchFiles, WriteBatchRequest
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.preview import preview
from spark_destination.engine.request_json import parse_request
from spark_destination.planner.deferred import (
    LAYOUT_PROPERTY,
    pending_columns,
    pending_layout,
    pending_ref,
    plan_deferred_write,
    plan_expire_pending,
    plan_flush,
)
from spark_destination.planner.ir import (
    AppendPendingOp,
    ClearPendingOp,
    CreateTableOp,
    DropTableOp,
    ExpireSnapshotsOp,
    FlushPendingOp,
    PendingKeysOp,
    PendingStatsOp,
    RecordChangesOp,
    StageBatchOp,
    TableRef,
    VacuumOp,
)

ORDERS = Table(
    name="orders",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="note", type=DataType.STRING),
        Column(name="amount", type=DataType.DOUBLE),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    ),
)
REF = TableRef(catalog="lake", schema="sales", name="orders")
PENDING = TableRef(catalog="lake", schema="sales", name="sd__pending__orders")


def _request(
    table: Table = ORDERS, unmodified: str = "UNM", **files: tuple[str, ...]
) -> WriteBatchRequest:
    every = [p for paths in files.values() for p in paths]
    batch = BatchFiles(
        params=FileParams(null_string="NUL", unmodified_string=unmodified),
        keys=dict.fromkeys(every, b"k" * 32),
        **files,  # type: ignore[arg-type]
    )
    return WriteBatchRequest(schema="sales", table=table, files=batch)


def _plan(request: WriteBatchRequest, layout: str | None) -> tuple[object, ...]:
    plan = plan_deferred_write(
        request, ORDERS, catalog="lake", target=SPARK_ICEBERG, pending=PENDING,
        existing_layout=layout,
    )  # fmt: skip
    return plan.ops


# --- Configuration ------------------------------------------------------------------------


def test_the_mode_is_merge_unless_asked_and_the_defaults_are_seed_004s() -> None:
    config = parse_config({})
    assert config.write_mode is WriteMode.MERGE
    assert config.merge_interval_ms == 60_000
    assert config.merge_records_threshold == OFF == -1
    assert config.intermediate_table_prefix == "sd__pending__"
    deferred = parse_config(
        {"write_mode": "deferred", "merge_interval_ms": "-1", "merge_records_threshold": "500"}
    )
    assert deferred.write_mode is WriteMode.DEFERRED
    assert (deferred.merge_interval_ms, deferred.merge_records_threshold) == (-1, 500)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("merge_interval_ms", "0", "whole number >= 1, or -1 (off)"),
        ("merge_records_threshold", "-2", "whole number >= 1, or -1 (off)"),
        ("write_mode", "later", "must be one of: merge, deferred"),
        ("intermediate_table_prefix", "tmp_", "must start with 'sd__'"),
        ("intermediate_table_prefix", "sd__", "must start with 'sd__' and go on"),
        ("intermediate_table_prefix", "__sd_a/b", "path separator"),
    ],
)
def test_bad_values_are_refused_naming_the_key(key: str, value: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=key) as raised:
        parse_config({key: value})
    assert says in str(raised.value)


# --- The intermediate table ---------------------------------------------------------------


def test_the_intermediate_table_is_the_prefix_plus_the_name_in_the_same_schema() -> None:
    assert pending_ref(REF, "sd__pending__", target=SPARK_ICEBERG) == PENDING
    other = pending_ref(REF, "__sd_tmp_", target=SPARK_ICEBERG)
    assert (other.schema, other.name) == ("sales", "__sd_tmp_orders")


def test_a_name_over_255_bytes_is_a_clear_error() -> None:
    long = TableRef(catalog="lake", schema="s", name="é" * 122)  # 244 bytes: a valid table
    with pytest.raises(InvalidRequestError) as raised:
        pending_ref(long, "sd__pending__", target=SPARK_ICEBERG)
    message = str(raised.value)
    assert "257 bytes (UTF-8), longer than the 255 bytes" in message
    assert "intermediate_table_prefix" in message


def test_the_target_dialects_name_rules_apply_to_the_intermediate_table() -> None:
    with pytest.raises(InvalidRequestError, match="upper-case"):
        pending_ref(REF, "__sd_Pending_", target=DATABRICKS_DELTA)


def test_its_rows_hold_key_values_masks_op_counter_and_batch() -> None:
    columns = pending_columns(ORDERS.columns, ("id",))
    assert [c.name for c in columns] == [
        "id",
        "note",
        "amount",
        "_fivetran_synced",
        "__sd_unmodified_note",
        "__sd_unmodified_amount",
        "__sd_unmodified__fivetran_synced",
        "__sd_op",
        "__sd_seq",
        "__sd_batch",
    ]
    assert [c.name for c in columns if c.primary_key] == ["id"]
    assert {c.type for c in columns[4:7]} == {DataType.BOOLEAN}


# --- A deferred WriteBatch ----------------------------------------------------------------


def test_the_first_batch_creates_the_intermediate_table_then_appends() -> None:
    stage, create, append = _plan(_request(replace=("a.csv",), delete=("d.csv",)), None)
    assert isinstance(stage, StageBatchOp) and [f.path for f in stage.files] == ["a.csv", "d.csv"]
    assert isinstance(create, CreateTableOp) and create.table == PENDING
    assert dict(create.properties)[LAYOUT_PROPERTY] == pending_layout(ORDERS)
    assert isinstance(append, AppendPendingOp)
    assert (append.table, append.pending, append.view) == (REF, PENDING, stage.view)


def test_later_batches_only_append_and_never_read_the_table() -> None:
    ops = _plan(_request(update=("u.csv",)), pending_layout(ORDERS))
    assert [type(op) for op in ops] == [StageBatchOp, AppendPendingOp]


def test_bad_value_policy_null_stages_leniently_and_records_before_the_append() -> None:
    """As merge mode records before its MERGE: a retried request finds its records (keyed by
    file and row) and the append is the request's last commit."""
    plan = plan_deferred_write(
        _request(replace=("a.csv",)), ORDERS, catalog="lake", target=SPARK_ICEBERG,
        pending=PENDING, existing_layout=pending_layout(ORDERS), changes_table="sd__changes",
    )  # fmt: skip
    stage, record, append = plan.ops
    assert isinstance(stage, StageBatchOp) and stage.lenient == ("note", "amount")
    assert isinstance(record, RecordChangesOp) and record.changes.name == "sd__changes"
    assert record.table == REF and isinstance(append, AppendPendingOp)
    strict = _plan(_request(replace=("a.csv",)), pending_layout(ORDERS))
    assert isinstance(strict[0], StageBatchOp) and strict[0].lenient == ()


def test_an_intermediate_table_made_for_other_columns_is_replaced() -> None:
    older = Table(name="orders", columns=ORDERS.columns[:2])
    ops = _plan(_request(replace=("a.csv",)), pending_layout(older))
    assert [type(op) for op in ops] == [StageBatchOp, DropTableOp, CreateTableOp, AppendPendingOp]


def test_columns_the_request_does_not_name_are_unmodified_on_every_row() -> None:
    partial = Table(name="orders", columns=(ORDERS.columns[0], ORDERS.columns[2]))
    *_, append = _plan(_request(partial, replace=("a.csv",)), pending_layout(ORDERS))
    assert isinstance(append, AppendPendingOp)
    assert append.columns == ORDERS.columns
    assert append.staged == ("id", "amount") and append.masked == ("amount",)


def test_without_an_unmodified_sentinel_no_staged_column_is_masked() -> None:
    request = _request(unmodified="", replace=("a.csv",))
    *_, append = _plan(request, pending_layout(ORDERS))
    assert isinstance(append, AppendPendingOp) and append.masked == ()


def test_merge_modes_checks_still_apply() -> None:
    assert _plan(_request(), None) == ()  # no files: nothing to do
    with pytest.raises(InvalidRequestError, match="does not exist"):
        plan_deferred_write(
            _request(replace=("a.csv",)), None, catalog="lake", target=SPARK_ICEBERG,
            pending=PENDING, existing_layout=None,
        )  # fmt: skip


def test_a_flush_reads_the_counters_and_keys_merges_then_deletes() -> None:
    plan = plan_flush(REF, ORDERS, PENDING, target=SPARK_ICEBERG)
    kinds = [type(op) for op in plan.ops]
    assert kinds == [PendingStatsOp, PendingKeysOp, FlushPendingOp, ClearPendingOp]
    keys, flush = plan.ops[1], plan.ops[2]
    slots = SPARK_ICEBERG.flush_filter_slots
    assert isinstance(keys, PendingKeysOp) and keys.key == ("id",) and keys.limit == slots + 1
    assert isinstance(flush, FlushPendingOp) and flush.key == flush.filter_key == ("id",)
    # Far more keys than a batch MERGE binds: unfiltered, the flush's join moves every row.
    assert flush.filter_slots == slots > SPARK_ICEBERG.key_filter_slots


def test_a_flush_on_a_key_that_cannot_filter_reads_no_keys() -> None:
    # A DOUBLE key does not bind as a filter (FILTERABLE_KEY_TYPES): no keys query.
    table = Table(
        name="readings",
        columns=(
            Column(name="at", type=DataType.DOUBLE, primary_key=True),
            Column(name="value", type=DataType.STRING),
        ),
    )
    plan = plan_flush(REF, table, PENDING, target=SPARK_ICEBERG)
    assert [type(op) for op in plan.ops] == [PendingStatsOp, FlushPendingOp, ClearPendingOp]
    flush = plan.ops[1]
    assert isinstance(flush, FlushPendingOp) and flush.filter_key == ()


def test_old_snapshots_of_the_intermediate_table_are_expired_by_the_formats_own_means() -> None:
    from datetime import UTC, datetime

    now = datetime(2025, 1, 1, tzinfo=UTC)
    (iceberg,) = plan_expire_pending(PENDING, now=now, target=SPARK_ICEBERG).ops
    assert isinstance(iceberg, ExpireSnapshotsOp) and iceberg.retain_last == 1
    (delta,) = plan_expire_pending(PENDING, now=now, target=DATABRICKS_DELTA).ops
    assert isinstance(delta, VacuumOp) and delta.retain_hours == 168


# --- preview ------------------------------------------------------------------------------


TABLE_JSON = {
    "name": "orders",
    "columns": {"id": "INT", "note": "STRING"},
    "primary_key": ["id"],
}


def test_preview_shows_the_deferred_append_and_never_the_tables_merge() -> None:
    request = {
        "request": "write_batch",
        "configuration": {"write_mode": "deferred"},
        "schema": "sales",
        "table": TABLE_JSON,
        "replace_files": ["/data/a.csv"],
        "file_params": {"null_string": "NUL", "unmodified_string": "UNM"},
    }
    shown = preview(parse_request(request))
    assert "INSERT INTO `lake`.`sales`.`sd__pending__orders`" in shown
    assert "MERGE" not in shown and "CREATE TABLE" not in shown
    created = preview(parse_request({**request, "intermediate_table_exists": False}))
    assert "CREATE TABLE `lake`.`sales`.`sd__pending__orders`" in created


def test_preview_of_a_flush() -> None:
    shown = preview(parse_request({"request": "flush", "schema": "sales", "table": TABLE_JSON}))
    assert "FROM `lake`.`sales`.`sd__pending__orders`" in shown
    assert "MERGE INTO `lake`.`sales`.`orders` AS `t`" in shown
    assert "DELETE FROM `lake`.`sales`.`sd__pending__orders`" in shown
    with pytest.raises(InvalidRequestError, match="needs the table"):
        preview(parse_request({"request": "flush", "schema": "sales", "table_name": "orders"}))
