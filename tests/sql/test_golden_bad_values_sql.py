"""What ``preview`` prints for a batch write under each bad_value_policy, as golden files per
dialect: under ``fail`` the staging directive and the MERGE; under ``null`` the directive says
which values become NULL (and, where the dialect declares a length, which are cut to it), and
the changes table's creation and the records' MERGE come before the table's MERGE."""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.dialects.registry import DIALECTS
from spark_destination.engine.preview import preview
from spark_destination.engine.request_json import parse_request
from tests.sql.conftest import golden_params

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
COLUMNS = [
    {"name": "id", "type": "INT", "primary_key": True},
    {"name": "amount", "type": "DECIMAL", "precision": 10, "scale": 2},
    {"name": "code", "type": "STRING", "string_byte_length": 12},
    {"name": "_fivetran_synced", "type": "UTC_DATETIME"},
    {"name": "_fivetran_deleted", "type": "BOOLEAN"},
]
HISTORY = [
    {"name": "id", "type": "INT", "primary_key": True},
    {"name": "amount", "type": "DECIMAL", "precision": 10, "scale": 2},
    {"name": "_fivetran_start", "type": "UTC_DATETIME", "primary_key": True},
    {"name": "_fivetran_end", "type": "UTC_DATETIME"},
    {"name": "_fivetran_active", "type": "BOOLEAN"},
    {"name": "_fivetran_synced", "type": "UTC_DATETIME"},
]


def _write(policy: str, request: str = "write_batch", columns: Any = COLUMNS) -> dict[str, Any]:
    return {
        "request": request,
        "configuration": {"bad_value_policy": policy},
        "schema": "sales",
        "table": {"name": "orders", "columns": columns},
        "replace_files": ["/data/upsert.csv.zstd.aes"],
        "file_params": {"null_string": NULL, "unmodified_string": UNMOD},
    }


CASES = {
    "preview_write_batch_bad_values_fail": _write("fail"),
    "preview_write_batch_bad_values_null": _write("null"),
}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_preview_of_a_batch_write_under_each_policy(
    case: str, dialect: str, sql_snapshot: SnapshotAssertion
) -> None:
    assert preview(parse_request(CASES[case]), DIALECTS[dialect]) == sql_snapshot


def test_a_history_write_records_the_version_key() -> None:
    null = preview(parse_request(_write("null", "write_history_batch", HISTORY)))
    assert "TO_JSON(STRUCT(`__sd_key_0` AS `id`, `__sd_key_1` AS `_fivetran_start`))" in null
    assert "MERGE INTO `lake`.`sales`.`sd__changes`" in null


def test_only_the_null_policy_records_changes() -> None:
    fail = preview(parse_request(_write("fail")))
    null = preview(parse_request(_write("null")))
    assert "sd__changes" not in fail and "does not fit is NULL" not in fail
    assert null.count("sd__changes") >= 2 and "does not fit is NULL" in null
    # The records come before the table's MERGE.
    assert null.index("MERGE INTO `lake`.`sales`.`sd__changes`") < null.index(
        "MERGE INTO `lake`.`sales`.`orders`"
    )


def test_the_changes_table_can_be_named_in_the_reserved_space_only() -> None:
    named = _write("null")
    named["configuration"]["changes_table"] = "sd__rejects"
    assert "`lake`.`sales`.`sd__rejects`" in preview(parse_request(named))
    # An earlier name a saved configuration may hold is still taken.
    named["configuration"]["changes_table"] = "__sd_rejects"
    assert "`lake`.`sales`.`__sd_rejects`" in preview(parse_request(named))
    named["configuration"]["changes_table"] = "rejects"
    with pytest.raises(Exception, match="changes_table 'rejects' must start with 'sd__'"):
        parse_request(named)
    # Own names must fit every catalog: S3 Tables-style catalogs refuse upper case.
    named["configuration"]["changes_table"] = "sd__Rejects"
    with pytest.raises(Exception, match="lower-case letters, digits"):
        parse_request(named)
