"""Lowering of schema statements: namespaces, tables, columns, properties and the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from sqlglot import exp

from spark_destination.dialects.base import KeyStyle
from spark_destination.dialects.lowering.common import Renderer
from spark_destination.dialects.lowering.layout import (
    partitioned_by,
    set_write_order,
    write_order,
)
from spark_destination.dialects.quoting import identifier, table
from spark_destination.dialects.rendered import ReadCatalog, Statement
from spark_destination.planner.ir import (
    AddColumnsOp,
    AlterColumnTypeOp,
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    DropColumnsOp,
    DropNotNullOp,
    DropTableOp,
    ListNamespacesOp,
    RenameColumnOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
)

DdlOp = (
    CreateNamespaceOp
    | CreateTableOp
    | SetPrimaryKeyOp
    | AddColumnsOp
    | SetPropertiesOp
    | DescribeOp
    | ListNamespacesOp
    | DropTableOp
    | RenameColumnOp
    | DropColumnsOp
    | AlterColumnTypeOp
    | DropNotNullOp
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableContext:
    """Statements about one table and nothing else (drop, describe)."""

    table: exp.Table


@dataclass(frozen=True, slots=True, kw_only=True)
class NamespaceContext:
    namespace: exp.Table


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogContext:
    catalog: exp.Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTableContext:
    table: exp.Table
    columns: list[exp.ColumnDef]
    using: exp.Var
    properties: list[tuple[exp.Literal, exp.Literal]]
    # ``PARTITIONED BY`` transforms (empty: unpartitioned).
    partitioned_by: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnsContext:
    """A table and column definitions or names (add, drop, set the primary key)."""

    table: exp.Table
    columns: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyContext:
    table: exp.Table
    columns: list[exp.Identifier]
    constraint: exp.Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class PropertiesContext:
    table: exp.Table
    properties: list[tuple[exp.Literal, exp.Literal]]


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameColumnContext:
    table: exp.Table
    from_column: exp.Identifier
    to_column: exp.Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnContext:
    table: exp.Table
    column: exp.Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnTypeContext:
    table: exp.Table
    column: exp.Identifier
    type: exp.DataType


# Suffix of the primary-key constraint's name (Delta): one per table, found again by name.
PRIMARY_KEY_SUFFIX = "_pk"


def lower_ddl(r: Renderer, op: DdlOp) -> tuple[Statement, ...]:
    context: object
    match op:
        case CreateNamespaceOp():
            sql = r.template(
                "create_namespace", NamespaceContext(namespace=table(op.catalog, op.schema))
            )
            return (r.statement(op, sql, f"create schema {op.schema!r} if missing"),)
        case CreateTableOp():
            context = CreateTableContext(
                table=r.table(op.table),
                columns=[r.column_definition(c) for c in op.columns],
                using=r.using(),
                properties=r.properties(
                    op.properties, layout=op.layout, columns=(c.name for c in op.columns)
                ),
                partitioned_by=partitioned_by(r, op.layout),
            )
            sql = r.template("create_table", context)
            created = r.statement(op, sql, f"create table {op.table.name!r}")
            return (created, *write_order(r, op, op.table, op.layout))
        case SetPrimaryKeyOp():
            return _set_primary_key(r, op)
        case AddColumnsOp():
            context = ColumnsContext(
                table=r.table(op.table),
                columns=[r.column_definition(c, nullable=True) for c in op.columns],
            )
            sql = r.template("add_columns", context)
            summary = f"add {len(op.columns)} column(s) to {op.table.name!r}"
            added = r.statement(op, sql, summary)
            if not r.dialect.needs_name_mapping(c.name for c in op.columns):
                return (added,)
            # Turned on before the column comes (set again where it is on already).
            mapping = PropertiesContext(
                table=r.table(op.table),
                properties=r.properties(r.dialect.name_mapping, table_format=False),
            )
            sql = r.template("set_properties", mapping)
            summary = f"map the column names of {op.table.name!r}"
            return (r.statement(op, sql, summary), added)
        case SetPropertiesOp():
            # Only the destination's own properties: the format's were set at creation.
            properties = r.properties(op.properties, table_format=False)
            context = PropertiesContext(table=r.table(op.table), properties=properties)
            sql = r.template("set_properties", context)
            return (r.statement(op, sql, f"set properties of {op.table.name!r}"),)
        case DescribeOp():
            # No SQL: SHOW TBLPROPERTIES redacts values (a column named `url` or `password` in
            # the metadata), so the runtime reads the table from the catalog API instead.
            summary = f"read schema, key and Fivetran metadata of {op.table.name!r} (catalog API)"
            return (Statement(op=op, sql="", summary=summary, run=ReadCatalog()),)
        case ListNamespacesOp():
            sql = r.template("show_namespaces", CatalogContext(catalog=identifier(op.catalog)))
            summary = f"list namespaces of catalog {op.catalog!r}"
            return (r.statement(op, sql, summary),)
        case DropTableOp():
            sql = r.template("drop_table", TableContext(table=r.table(op.table)))
            return (r.statement(op, sql, f"drop table {op.table.name!r}"),)
        case RenameColumnOp():
            context = RenameColumnContext(
                table=r.table(op.table),
                from_column=identifier(op.from_column),
                to_column=identifier(op.to_column),
            )
            sql = r.template("rename_column", context)
            summary = f"rename column {op.from_column!r} of {op.table.name!r} to {op.to_column!r}"
            return (r.statement(op, sql, summary),)
        case DropColumnsOp():
            context = ColumnsContext(
                table=r.table(op.table), columns=[identifier(c) for c in op.columns]
            )
            sql = r.template("drop_columns", context)
            summary = f"drop {len(op.columns)} column(s) of {op.table.name!r}"
            return (r.statement(op, sql, summary),)
        case AlterColumnTypeOp():
            type_text = r.dialect.type_text(op.column)
            context = ColumnTypeContext(
                table=r.table(op.table),
                column=identifier(op.column.name),
                type=r.dialect.sql_type(op.column),
            )
            sql = r.template("alter_column_type", context)
            summary = f"widen column {op.column.name!r} of {op.table.name!r} to {type_text}"
            return (r.statement(op, sql, summary),)
        case DropNotNullOp():
            context = ColumnContext(table=r.table(op.table), column=identifier(op.column))
            sql = r.template("drop_not_null", context)
            summary = f"make column {op.column!r} of {op.table.name!r} nullable"
            return (r.statement(op, sql, summary),)
        case _:
            assert_never(op)


def _set_primary_key(r: Renderer, op: SetPrimaryKeyOp) -> tuple[Statement, ...]:
    columns = [identifier(c) for c in op.columns]
    table_name = r.table(op.table)
    summary = f"set the primary key of {op.table.name!r}"
    match r.dialect.key_style:
        case KeyStyle.IDENTIFIER_FIELDS:
            # Never empty: Iceberg cannot drop identifier fields in place, so the planner
            # rewrites the table instead (``Target.changes_key_in_place``).
            assert op.columns, "the planner never leaves identifier fields empty in place"
            summary = f"set identifier fields of {op.table.name!r}"
            keyed = ColumnsContext(table=table_name, columns=list(columns))
            sql = r.template("set_primary_key", keyed)
            ordered = set_write_order(r, op, op.table, op.write_order)
            return (r.statement(op, sql, summary), *ordered)
        case KeyStyle.PRIMARY_KEY_CONSTRAINT:
            # A table has at most one primary key: drop any other first (both idempotent).
            context = KeyContext(
                table=table_name,
                columns=columns,
                constraint=identifier(op.table.name + PRIMARY_KEY_SUFFIX),
            )
            dropped = r.template("drop_primary_key", context)
            drop = r.statement(op, dropped, f"drop the primary key of {op.table.name!r} if any")
            if not op.columns:
                return (drop,)
            # The key's columns must be NOT NULL: a table made by a query (a rewrite, a copy)
            # has nullable columns. Delta checks the rows; a column already NOT NULL is kept.
            not_null = tuple(
                r.statement(
                    op,
                    r.template("set_not_null", ColumnContext(table=table_name, column=column)),
                    f"make key column {name!r} of {op.table.name!r} NOT NULL",
                    known_gap=True,
                )
                for name, column in zip(op.columns, columns, strict=True)
            )
            add = r.statement(op, r.template("add_primary_key", context), summary)
            return (drop, *not_null, add)
        case KeyStyle.COLUMN_METADATA:
            return ()
        case _:
            assert_never(r.dialect.key_style)
