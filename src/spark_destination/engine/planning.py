"""Which planner plans a request (pure): the one dispatch the engine and ``preview`` share."""

from __future__ import annotations

from typing import assert_never

from spark_destination.core.config import BadValuePolicy, DestinationConfig
from spark_destination.core.model import Table
from spark_destination.core.requests import (
    AlterTableRequest,
    CreateTableRequest,
    TableChange,
    TruncateRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.ir import Plan
from spark_destination.planner.layout import LayoutOf, with_layouts
from spark_destination.planner.schema import plan_alter_table, plan_create_table
from spark_destination.planner.target import Target
from spark_destination.planner.truncate import plan_truncate
from spark_destination.planner.write import plan_write_batch


def plan_change(
    request: TableChange,
    current: Table | None,
    *,
    catalog: str,
    target: Target,
    layout_of: LayoutOf | None = None,
    changes_table: str | None = None,
) -> Plan:
    """The plan of a request that changes one table, given that table as it is now; a table
    it creates or rewrites gets the layout ``layout_of`` gives it (None: the format's
    defaults). ``changes_table``: where batch writes record the values bad_value_policy=null
    changed (None: such a value fails the request; ``changes_table_of``)."""
    match request:
        case CreateTableRequest():
            plan = plan_create_table(request, current, catalog=catalog, target=target)
            return with_layouts(plan, layout_of, target)
        case AlterTableRequest():
            plan = plan_alter_table(request, current, catalog=catalog, target=target)
            return with_layouts(plan, layout_of, target)
        case TruncateRequest():
            return plan_truncate(request, current, catalog=catalog, target=target)
        case WriteBatchRequest():
            return plan_write_batch(
                request, current, catalog=catalog, target=target, changes_table=changes_table
            )
        case WriteHistoryBatchRequest():
            return plan_write_history_batch(
                request, current, catalog=catalog, target=target, changes_table=changes_table
            )
        case _:
            assert_never(request)


def changes_table_of(config: DestinationConfig) -> str | None:
    """The changes table batch writes record in: ``config.changes_table`` under
    bad_value_policy=null; None under fail."""
    match config.bad_value_policy:
        case BadValuePolicy.NULL:
            return config.changes_table
        case BadValuePolicy.FAIL:
            return None
        case _:
            assert_never(config.bad_value_policy)
