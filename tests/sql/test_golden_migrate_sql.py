"""Every Migrate operation as golden SQL: the whole plan the preview shows, per operation.

Each case is a ``migrate`` preview request (request_json), so the snapshot covers the JSON
form, the planner and the renderer; every statement is parsed back by sqlglot.
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from spark_destination.core.errors import InvalidRequestError
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render_plan
from spark_destination.engine.preview import plan_for, preview
from spark_destination.engine.request_json import parse_request
from tests.sql.conftest import assert_parses_back, golden_params, refusal

pytestmark = pytest.mark.filterwarnings("ignore:\nConsider adding:UserWarning")

TS = "2005-05-28T20:57:00Z"
SOFT = {
    "name": "orders",
    "columns": {
        "id": "INT",
        "amount": {"type": "DECIMAL", "precision": 10, "scale": 2},
        "n": "SHORT",
        "desc": "STRING",
        "_fivetran_synced": "UTC_DATETIME",
        "_fivetran_deleted": "BOOLEAN",
    },
    "primary_key": ["id"],
}
HISTORY = {
    "name": "orders",
    "columns": {
        "id": "INT",
        "region": "STRING",
        "amount": "DOUBLE",
        "desc": "STRING",
        "_fivetran_synced": "UTC_DATETIME",
        "_fivetran_start": "UTC_DATETIME",
        "_fivetran_end": "UTC_DATETIME",
        "_fivetran_active": "BOOLEAN",
    },
    "primary_key": ["id", "region", "_fivetran_start"],
}
ODD = {
    "name": "order `items`",
    "columns": {"k`ey": "STRING", "va.lue": "INT", "_fivetran_synced": "UTC_DATETIME"},
    "primary_key": ["k`ey"],
}
# ODD with a table name Unity Catalog accepts (no space): the ODD case's Databricks golden is
# its refusal.
UNITY_ODD = {**ODD, "name": "order-`items`"}


def _case(table: dict[str, Any], operation: dict[str, Any], **others: Any) -> dict[str, Any]:
    return {
        "request": "migrate",
        "schema": "sales",
        "table_name": table["name"],
        "existing_table": table,
        "operation": operation,
        "existing_tables": others,
    }


def _sync(kind: str) -> dict[str, Any]:
    return {"table_sync_mode_migration": {"type": kind, "soft_deleted_column": "_fivetran_deleted"}}


CASES: dict[str, dict[str, Any]] = {
    "migrate_drop_table": _case(SOFT, {"drop_table": True}),
    "migrate_update_column_value": _case(
        SOFT, {"update_column_value": {"column": "amount", "value": "202.57"}}
    ),
    "migrate_update_column_value_null": _case(
        SOFT, {"update_column_value": {"column": "desc", "value": "NULL"}}
    ),
    "migrate_add_column_with_default_value": _case(
        SOFT,
        {
            "add_column_with_default_value": {
                "column": "operation_time",
                "column_type": "UTC_DATETIME",
                "default_value": TS,
            }
        },
    ),
    "migrate_add_column_with_default_value_existing": _case(
        SOFT,
        {
            "add_column_with_default_value": {
                "column": "n",
                "column_type": "SHORT",
                "default_value": "7",
            }
        },
    ),
    "migrate_copy_column": _case(
        SOFT, {"copy_column": {"from_column": "n", "to_column": "n_copy"}}
    ),
    "migrate_rename_column": _case(
        SOFT, {"rename_column": {"from_column": "n", "to_column": "n_renamed"}}
    ),
    "migrate_copy_table": _case(
        SOFT, {"copy_table": {"from_table": "orders", "to_table": "orders_copy"}}
    ),
    "migrate_rename_table": _case(
        SOFT, {"rename_table": {"from_table": "orders", "to_table": "orders_new"}}
    ),
    "migrate_rename_table_retry": _case(
        SOFT,
        {"rename_table": {"from_table": "orders", "to_table": "orders_new"}},
        orders_new={**SOFT, "name": "orders_new"},
    ),
    "migrate_copy_table_to_history_mode": _case(
        SOFT,
        {
            "copy_table_to_history_mode": {
                "from_table": "orders",
                "to_table": "orders_history",
                "soft_deleted_column": "_fivetran_deleted",
            }
        },
    ),
    "migrate_soft_delete_to_history": _case(SOFT, _sync("SOFT_DELETE_TO_HISTORY")),
    # The soft-delete column is not in the table: every row becomes an active version.
    "migrate_soft_delete_to_history_without_deleted_column": _case(
        {
            **SOFT,
            "columns": {k: v for k, v in SOFT["columns"].items() if k != "_fivetran_deleted"},
        },
        _sync("SOFT_DELETE_TO_HISTORY"),
    ),
    # A custom soft-delete column decides which rows are active and stays; _fivetran_deleted
    # goes (the SDK's guide drops it whenever it is present).
    "migrate_soft_delete_to_history_custom_column": _case(
        {**SOFT, "columns": {**SOFT["columns"], "is_gone": "BOOLEAN"}},
        {
            "table_sync_mode_migration": {
                "type": "SOFT_DELETE_TO_HISTORY",
                "soft_deleted_column": "is_gone",
            }
        },
    ),
    # Rewritten by an earlier attempt that failed before the metadata: _fivetran_start is in
    # the table but not yet in the key DescribeTable reports.
    "migrate_soft_delete_to_history_resume": _case(
        {**HISTORY, "primary_key": ["id", "region"]}, _sync("SOFT_DELETE_TO_HISTORY")
    ),
    "migrate_history_to_soft_delete": _case(HISTORY, _sync("HISTORY_TO_SOFT_DELETE")),
    "migrate_add_column_in_history_mode": _case(
        HISTORY,
        {
            "add_column_in_history_mode": {
                "column": "extra",
                "column_type": "INT",
                "default_value": "7",
                "operation_timestamp": TS,
            }
        },
    ),
    "migrate_drop_column_in_history_mode": _case(
        HISTORY, {"drop_column_in_history_mode": {"column": "desc", "operation_timestamp": TS}}
    ),
    "migrate_odd_names": _case(
        ODD, {"copy_column": {"from_column": "va.lue", "to_column": "new `col`"}}
    ),
    "migrate_odd_names_unity": _case(
        UNITY_ODD, {"copy_column": {"from_column": "va.lue", "to_column": "new `col`"}}
    ),
}


# The cases a dialect's catalog refuses, with the refusal (its name rules, checked before
# planning): their golden is the refusal; every other case must plan.
SESSION_CATALOG_RULE = "Spark's session catalog takes only ASCII letters, digits and '_' in names"
REFUSED = {
    ("migrate_odd_names", "databricks_delta"): (
        "table name 'order `items`' holds ' ', which the catalog refuses in names "
        "(databricks_delta)"
    ),
    ("migrate_odd_names", "spark_delta"): (
        f"table name 'order `items`' holds ' ', '`'; {SESSION_CATALOG_RULE} (spark_delta)"
    ),
    ("migrate_odd_names_unity", "spark_delta"): (
        f"table name 'order-`items`' holds '-', '`'; {SESSION_CATALOG_RULE} (spark_delta)"
    ),
}


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_golden_migrate_sql(case: str, dialect: str, sql_snapshot: SnapshotAssertion) -> None:
    try:
        text = preview(parse_request(CASES[case]), DIALECTS[dialect])
    except InvalidRequestError as error:  # a name the dialect refuses (the golden shows it)
        text = refusal(error)
    assert text == sql_snapshot


@pytest.mark.parametrize(("case", "dialect"), golden_params(CASES), ids=lambda v: v)
def test_migrate_sql_parses_back_strictly(case: str, dialect: str) -> None:
    chosen = DIALECTS[dialect]
    if (case, dialect) in REFUSED:
        with pytest.raises(InvalidRequestError) as refused:
            plan_for(parse_request(CASES[case]), chosen)
        assert str(refused.value) == REFUSED[case, dialect]
        return
    plan = plan_for(parse_request(CASES[case]), chosen)
    for statement in render_plan(plan, chosen):
        assert_parses_back(statement, chosen)
