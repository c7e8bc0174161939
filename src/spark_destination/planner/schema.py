"""Planning of CreateTable and DescribeTable (AlterTable: ``planner.alter``, re-exported)."""

from __future__ import annotations

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import Table
from spark_destination.core.requests import (
    CreateTableRequest,
    DescribeTableRequest,
)
from spark_destination.planner import metadata
from spark_destination.planner.alter import plan_alter_table
from spark_destination.planner.ir import (
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    Plan,
    SetPrimaryKeyOp,
)
from spark_destination.planner.tables import table_ref, validate_columns
from spark_destination.planner.target import Target

__all__ = ["plan_alter_table", "plan_create_table", "plan_describe"]


def plan_describe(request: DescribeTableRequest, *, catalog: str, target: Target) -> Plan:
    ref = table_ref(catalog, request.target.schema, request.target.table, target=target)
    return Plan(ops=(DescribeOp(table=ref),))


def plan_create_table(
    request: CreateTableRequest, current: Table | None, *, catalog: str, target: Target
) -> Plan:
    """Create the schema if missing and the table; an existing table is an error."""
    ref = table_ref(catalog, request.schema, request.table.name, target=target)
    validate_columns(request.table)
    if current is not None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{request.table.name!r} already exists; CreateTable does "
            "not change existing tables (use AlterTable)"
        )
    properties = ((metadata.PROPERTY, metadata.encode(request.table.columns)),)
    ops: list[CreateNamespaceOp | CreateTableOp | SetPrimaryKeyOp] = [
        CreateNamespaceOp(catalog=catalog, schema=request.schema),
        CreateTableOp(table=ref, columns=request.table.columns, properties=properties),
    ]
    if request.table.key:
        ops.append(SetPrimaryKeyOp(table=ref, columns=request.table.key))
    return Plan(ops=tuple(ops))
