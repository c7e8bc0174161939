"""Planning of CreateTable, DescribeTable and (non-destructive) AlterTable."""

from __future__ import annotations

from spark_destination.dialects import spark_iceberg
from spark_destination.errors import InvalidRequestError
from spark_destination.model import Column, Table
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    Plan,
    SetIdentifierFieldsOp,
    SetPropertiesOp,
)
from spark_destination.planner.tables import table_ref, validate_columns
from spark_destination.requests import (
    AlterTableRequest,
    CreateTableRequest,
    DescribeTableRequest,
)


def plan_describe(request: DescribeTableRequest, *, catalog: str) -> Plan:
    ref = table_ref(catalog, request.target.schema, request.target.table)
    return Plan(ops=(DescribeOp(table=ref),))


def plan_create_table(request: CreateTableRequest, current: Table | None, *, catalog: str) -> Plan:
    """Create the schema if missing and the table; an existing table is an error."""
    ref = table_ref(catalog, request.schema, request.table.name)
    validate_columns(request.table)
    if current is not None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{request.table.name!r} already exists; CreateTable does "
            "not change existing tables (use AlterTable)"
        )
    properties = (
        *spark_iceberg.TABLE_PROPERTIES,
        (metadata.PROPERTY, metadata.encode(request.table.columns)),
    )
    ops: list[CreateNamespaceOp | CreateTableOp | SetIdentifierFieldsOp] = [
        CreateNamespaceOp(catalog=catalog, schema=request.schema),
        CreateTableOp(table=ref, columns=request.table.columns, properties=properties),
    ]
    if request.table.key:
        ops.append(SetIdentifierFieldsOp(table=ref, columns=request.table.key))
    return Plan(ops=tuple(ops))


def plan_alter_table(request: AlterTableRequest, current: Table | None, *, catalog: str) -> Plan:
    """Add the columns the destination lacks and record the requested metadata.

    Columns the request lacks are never dropped here (``drop_columns`` is honoured by the schema
    evolution planner); type and key changes are refused with a clear message until then.
    """
    ref = table_ref(catalog, request.schema, request.table.name)
    validate_columns(request.table)
    if current is None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{request.table.name!r} does not exist; AlterTable cannot "
            "change it"
        )
    changed = [
        c.name
        for c in request.table.columns
        if (existing := current.column(c.name)) is not None and _differs(existing, c)
    ]
    if changed:
        raise InvalidRequestError(
            f"AlterTable of {request.table.name!r} changes the type or key of column(s) "
            f"{', '.join(repr(n) for n in changed)}; only adding columns is supported so far"
        )
    added = tuple(c for c in request.table.columns if current.column(c.name) is None)
    if not added:
        return Plan(ops=(), noop_reason="the table already has every requested column")
    final_columns = (*current.columns, *(_nullable(c) for c in added))
    return Plan(
        ops=(
            AddColumnsOp(table=ref, columns=added),
            SetPropertiesOp(
                table=ref, properties=((metadata.PROPERTY, metadata.encode(final_columns)),)
            ),
        )
    )


def _differs(existing: Column, requested: Column) -> bool:
    if existing.type is not requested.type or existing.primary_key != requested.primary_key:
        return True
    return (
        requested.decimal is not None
        and existing.decimal is not None
        and existing.decimal != requested.decimal
    )


def _nullable(column: Column) -> Column:
    """Iceberg cannot add a required column, so an added column never joins the key here."""
    if not column.primary_key:
        return column
    raise InvalidRequestError(
        f"AlterTable adds primary-key column {column.name!r}; changing the key of a table is "
        "not supported so far"
    )
