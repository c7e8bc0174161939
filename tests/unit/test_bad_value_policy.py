"""bad_value_policy without Spark: the configuration keys, what the planner marks lenient and
records, the Warning text, and the servicer's answer."""

from __future__ import annotations

import pytest

from spark_destination.core.config import BadValuePolicy, parse_config
from spark_destination.core.errors import ConfigurationError, InvalidRequestError
from spark_destination.core.model import Column, DataType, Encryption, FileParams, Table
from spark_destination.core.requests import (
    BatchFiles,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Result, changes_warning
from spark_destination.engine.planning import changes_table_of, plan_change
from spark_destination.planner.ir import RecordChangesOp, StageBatchOp, TableRef
from spark_destination.runtime.batch.value_changes import Change, ChangeCount
from spark_destination.server.form import configuration_form, every_field

TABLE = Table(
    name="orders",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="amount", type=DataType.DECIMAL),
        Column(name="code", type=DataType.STRING, string_byte_length=8),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
    ),
)
HISTORY = Table(
    name="h",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="n", type=DataType.INT),
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    ),
)


def _files() -> BatchFiles:
    return BatchFiles(replace=("/in/a.csv",), params=FileParams(encryption=Encryption.NONE))


def _ops(plan: object) -> tuple[StageBatchOp, tuple[RecordChangesOp, ...]]:
    ops = plan.ops  # type: ignore[attr-defined]
    stage = next(op for op in ops if isinstance(op, StageBatchOp))
    return stage, tuple(op for op in ops if isinstance(op, RecordChangesOp))


def test_the_policy_defaults_to_fail_and_the_changes_table_to_the_reserved_space() -> None:
    config = parse_config({})
    assert config.bad_value_policy is BadValuePolicy.FAIL and changes_table_of(config) is None
    lenient = parse_config({"bad_value_policy": "null"})
    assert changes_table_of(lenient) == "sd__changes"
    named = parse_config({"bad_value_policy": "NULL", "changes_table": "__sd_rejects"})
    assert changes_table_of(named) == "__sd_rejects"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("changes", "must start with 'sd__'"),
        ("orders", "must start with 'sd__'"),
        ("__sd_a/b", "path separator"),
        ("__sd_" + "x" * 300, "longer than 255 bytes"),
    ],
)
def test_a_changes_table_outside_the_reserved_space_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=f"changes_table .*{problem}"):
        parse_config({"changes_table": text})


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="bad_value_policy 'skip' must be one of"):
        parse_config({"bad_value_policy": "skip"})


def test_the_form_offers_the_policy_as_a_dropdown() -> None:
    fields = {f.name: f for f in every_field(configuration_form())}
    policy = fields["bad_value_policy"]
    assert list(policy.dropdown_field.dropdown_field) == ["fail", "null"]
    assert policy.default_value == "fail"
    assert "changes_table" in fields


def test_fail_plans_no_lenient_column_and_no_record() -> None:
    request = WriteBatchRequest(schema="s", table=TABLE, files=_files())
    stage, records = _ops(plan_change(request, TABLE, catalog="lake", target=SPARK_ICEBERG))
    assert stage.lenient == () and stage.changes_view is None and records == ()


def test_null_leaves_keys_and_fivetran_columns_strict_and_records_before_the_merge() -> None:
    request = WriteBatchRequest(schema="s", table=TABLE, files=_files())
    plan = plan_change(
        request, TABLE, catalog="lake", target=SPARK_ICEBERG, changes_table="sd__changes"
    )
    stage, (record,) = _ops(plan)
    assert stage.lenient == ("amount", "code")
    assert stage.changes_key == ("id",) and stage.changes_view == "sd_changes"
    # Iceberg strings have no length limit.
    assert stage.max_lengths == ()
    assert record.changes == TableRef(catalog="lake", schema="s", name="sd__changes")
    assert record.key == ("id",) and record.synced
    kinds = [type(op).__name__ for op in plan.ops]
    assert kinds == ["StageBatchOp", "RecordChangesOp", "MergeBatchOp"]


def test_databricks_limits_the_length_of_a_string_column_declared_with_one() -> None:
    request = WriteBatchRequest(schema="s", table=TABLE, files=_files())
    for changes_table in (None, "sd__changes"):
        plan = plan_change(
            request, TABLE, catalog="lake", target=DATABRICKS_DELTA, changes_table=changes_table
        )
        stage, _ = _ops(plan)
        assert stage.max_lengths == (("code", 8),)
    assert DATABRICKS_DELTA.type_text(TABLE.columns[2]) == "VARCHAR(8)"
    assert SPARK_ICEBERG.type_text(TABLE.columns[2]) == "STRING"


def test_a_changes_table_name_the_catalog_refuses_is_refused_before_anything_runs() -> None:
    request = WriteBatchRequest(schema="s", table=TABLE, files=_files())
    with pytest.raises(InvalidRequestError, match="upper-case"):
        plan_change(
            request, TABLE, catalog="lake", target=DATABRICKS_DELTA, changes_table="__sd_Changes"
        )


def test_history_records_the_version_key_and_keeps_history_columns_strict() -> None:
    request = WriteHistoryBatchRequest(schema="s", table=HISTORY, files=_files())
    plan = plan_change(
        request, HISTORY, catalog="lake", target=SPARK_ICEBERG, changes_table="sd__changes"
    )
    stage, (record,) = _ops(plan)
    assert stage.lenient == ("n",)
    assert stage.changes_key == ("id", "_fivetran_start") == record.key


def test_the_warning_names_table_columns_counts_and_reasons_only() -> None:
    ref = TableRef(catalog="lake", schema="sales", name="orders")
    text = changes_warning(
        ref,
        "sd__changes",
        (
            ChangeCount(
                column="amount", change=Change.NULLED, reason="DECIMAL(10, 2) overflow", count=3
            ),
            ChangeCount(
                column="amount", change=Change.NULLED, reason="not a valid DECIMAL(10, 2)", count=1
            ),
            ChangeCount(
                column="code", change=Change.TRUNCATED, reason="longer than 8 characters", count=2
            ),
        ),
    )
    assert text == (
        "bad_value_policy=null: 6 value(s) of table 'sales'.'orders' did not fit their columns "
        "and were changed, each recorded in 'sales'.'sd__changes': column 'amount': 3 NULLED "
        "(DECIMAL(10, 2) overflow), 1 NULLED (not a valid DECIMAL(10, 2)); column 'code': "
        "2 TRUNCATED (longer than 8 characters)"
    )


class _Engine:
    def __init__(self, result: Result) -> None:
        self.result = result

    def apply(self, *_args: object) -> Result:
        return self.result

    def explain_failure(self, exc: Exception) -> Exception:
        return exc


@pytest.mark.parametrize("warning", [None, "bad_value_policy=null: 1 value(s) ..."])
def test_the_servicer_answers_a_warning_when_values_were_changed(warning: str | None) -> None:
    from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
    from spark_destination.server.servicer import DestinationServicer

    servicer = DestinationServicer(_Engine(Result(summary="1 step(s)", warning=warning)))  # type: ignore[arg-type]
    request = pb.WriteBatchRequest(schema_name="s", table=common.Table(name="t"))
    response = servicer.WriteBatch(request, None)  # type: ignore[arg-type]
    if warning is None:
        assert response.WhichOneof("response") == "success"
    else:
        assert response.WhichOneof("response") == "warning"
        assert response.warning.message == warning
