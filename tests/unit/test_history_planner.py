"""Pure planning of WriteHistoryBatch: file order, key without _fivetran_start, checks, errors."""

from __future__ import annotations

import pytest

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import Column, DataType, FileKind, FileParams, Table
from spark_destination.core.requests import BatchFiles, WriteHistoryBatchRequest
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.preview import preview
from spark_destination.engine.request_json import parse_request
from spark_destination.planner.history import history_key, plan_write_history_batch
from spark_destination.planner.ir import MergeHistoryOp, RowOp, StageBatchOp

COLUMNS = (
    Column(name="id", type=DataType.INT, primary_key=True),
    Column(name="name", type=DataType.STRING),
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
)
TABLE = Table(name="hist", columns=COLUMNS)
PARAMS = FileParams(null_string="NULL!", unmodified_string="UNMOD!")


def request(
    earliest_start_files: tuple[str, ...] = (), **files: tuple[str, ...]
) -> WriteHistoryBatchRequest:
    """``replace_files=``, ``update_files=``, … as in the protocol."""
    paths = [p for group in (earliest_start_files, *files.values()) for p in group]
    kinds = {k.removesuffix("_files"): v for k, v in files.items()}
    batch = BatchFiles(params=PARAMS, keys=dict.fromkeys(paths, b"k" * 32), **kinds)
    return WriteHistoryBatchRequest(
        schema="s", table=TABLE, files=batch, earliest_start_files=earliest_start_files
    )


def test_files_are_staged_earliest_update_replace_delete() -> None:
    plan = plan_write_history_batch(
        request(
            delete_files=("d.csv",),
            replace_files=("r.csv",),
            update_files=("u.csv",),
            earliest_start_files=("e1.csv", "e2.csv"),
        ),
        TABLE,
        catalog="lake",
        target=SPARK_ICEBERG,
    )
    stage, merge = plan.ops
    assert isinstance(stage, StageBatchOp)
    assert [(f.kind, f.path) for f in stage.files] == [
        (FileKind.EARLIEST_START, "e1.csv"),
        (FileKind.EARLIEST_START, "e2.csv"),
        (FileKind.UPDATE, "u.csv"),
        (FileKind.REPLACE, "r.csv"),
        (FileKind.DELETE, "d.csv"),
    ]
    assert isinstance(merge, MergeHistoryOp)
    assert stage.key == merge.key == ("id",) and stage.repeats_among == (RowOp.UPDATE, RowOp.UPSERT)
    assert dict(stage.required)["_fivetran_start"] == (
        RowOp.EARLIEST_START,
        RowOp.UPDATE,
        RowOp.UPSERT,
    )
    assert RowOp.DELETE not in dict(stage.required)["_fivetran_start"]
    assert merge.null_string == "NULL!" and merge.unmodified_string == "UNMOD!"


def test_no_files_is_a_noop_and_a_missing_table_is_an_error() -> None:
    assert plan_write_history_batch(
        request(), TABLE, catalog="lake", target=SPARK_ICEBERG
    ).noop_reason
    with pytest.raises(InvalidRequestError, match="does not exist"):
        plan_write_history_batch(
            request(update_files=("u.csv",)), None, catalog="lake", target=SPARK_ICEBERG
        )


def test_a_table_without_history_columns_is_rejected() -> None:
    live = Table(name="hist", columns=COLUMNS[:2] + COLUMNS[5:])
    with pytest.raises(InvalidRequestError, match="not a history-mode table"):
        plan_write_history_batch(
            request(update_files=("u.csv",)), live, catalog="lake", target=SPARK_ICEBERG
        )


def test_unknown_columns_and_missing_keys_are_rejected() -> None:
    ghost = Table(name="hist", columns=(*COLUMNS, Column(name="ghost", type=DataType.INT)))
    bad = WriteHistoryBatchRequest(
        schema="s",
        table=ghost,
        files=BatchFiles(update=("u.csv",), params=PARAMS, keys={"u.csv": b"k"}),
    )
    with pytest.raises(InvalidRequestError, match="ghost"):
        plan_write_history_batch(bad, TABLE, catalog="lake", target=SPARK_ICEBERG)
    with pytest.raises(InvalidRequestError, match="no decryption key"):
        plan_write_history_batch(
            WriteHistoryBatchRequest(schema="s", table=TABLE, files=BatchFiles(update=("u.csv",))),
            TABLE,
            catalog="lake",
            target=SPARK_ICEBERG,
        )


def test_history_key_excludes_start_and_falls_back_to_fivetran_id() -> None:
    assert history_key(TABLE) == ("id",)
    keyless = Table(
        name="h",
        columns=(Column(name="_fivetran_id", type=DataType.STRING), *COLUMNS[2:]),
    )
    assert history_key(keyless) == ("_fivetran_id",)


def test_preview_shows_the_history_merge() -> None:
    text = preview(
        parse_request(
            {
                "request": "write_history_batch",
                "schema": "s",
                "table": {
                    "name": "hist",
                    "columns": {c.name: c.type.name for c in COLUMNS},
                    "primary_key": ["id", "_fivetran_start"],
                },
                "earliest_start_files": ["e.csv"],
                "update_files": ["u.csv"],
                "file_params": {"null_string": "n", "unmodified_string": "u"},
            }
        )
    )
    assert "stage view 'sd_batch' from [earliest_start:e.csv, update:u.csv]" in text
    assert "merge history batch into 'hist'" in text
    assert "MERGE INTO `lake`.`s`.`hist`" in text


def test_truncate_of_a_history_table_keeps_its_history() -> None:
    from datetime import UTC, datetime

    from spark_destination.core.requests import SoftTruncate, TableName, TruncateRequest
    from spark_destination.planner.ir import TruncateOp
    from spark_destination.planner.truncate import plan_truncate

    before = datetime(2024, 1, 1, tzinfo=UTC)
    target = TableName(schema="s", table="hist")
    soft = plan_truncate(
        TruncateRequest(
            target=target,
            synced_column="_fivetran_synced",
            utc_delete_before=before,
            soft=SoftTruncate(deleted_column="_fivetran_deleted"),
        ),
        TABLE,
        catalog="lake",
        target=SPARK_ICEBERG,
    )
    (op,) = soft.ops  # no column is added to a history table
    assert isinstance(op, TruncateOp)
    assert op.history_close == ("_fivetran_end", "_fivetran_active")
    hard = plan_truncate(
        TruncateRequest(target=target, synced_column="_fivetran_synced", utc_delete_before=before),
        TABLE,
        catalog="lake",
        target=SPARK_ICEBERG,
    )
    (op,) = hard.ops
    assert isinstance(op, TruncateOp) and op.history_close is None
