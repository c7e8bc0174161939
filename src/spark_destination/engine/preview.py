"""Dry-run: the SQL a request would run, without Spark (planner + renderer only)."""

from __future__ import annotations

from spark_destination.core.config import WriteMode
from spark_destination.core.errors import InvalidRequestError, RenderError
from spark_destination.core.requests import (
    DescribeTableRequest,
    FlushRequest,
    MigrateRequest,
    WriteBatchRequest,
)
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.edge import parse_back
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.rendered import RenderedPlan, Statement
from spark_destination.engine.planning import changes_table_of, plan_change
from spark_destination.engine.request_json import PreviewInput
from spark_destination.engine.table_format import catalog_for
from spark_destination.planner.deferred import (
    pending_layout,
    pending_ref,
    plan_deferred_write,
    plan_flush,
)
from spark_destination.planner.ir import Plan
from spark_destination.planner.migrate import migrate_tables, plan_migrate
from spark_destination.planner.schema import plan_describe
from spark_destination.planner.tables import table_ref


def plan_for(preview: PreviewInput, dialect: Dialect = DEFAULT) -> Plan:
    catalog = catalog_for(dialect, preview.config)
    # Names as the request's catalog takes them, as the engine checks them.
    dialect = dialect.for_catalog(preview.config.catalog_type)
    request = preview.request
    match request:
        case DescribeTableRequest():
            return plan_describe(request, catalog=catalog, target=dialect)
        case MigrateRequest():
            own = {request.table: preview.existing}
            tables = {
                name: preview.existing_tables.get(name, own.get(name))
                for name in migrate_tables(request)
            }
            return plan_migrate(request, tables, catalog=catalog, target=dialect)
        case FlushRequest():
            if preview.existing is None:
                raise InvalidRequestError("a flush request needs the table ('table')")
            ref = table_ref(catalog, request.schema, request.table, target=dialect)
            prefix = preview.config.intermediate_table_prefix
            pending = pending_ref(ref, prefix, target=dialect)
            return plan_flush(ref, preview.existing, pending, target=dialect)
        case WriteBatchRequest() if preview.config.write_mode is WriteMode.DEFERRED:
            ref = table_ref(catalog, request.schema, request.table.name, target=dialect)
            prefix = preview.config.intermediate_table_prefix
            existing = preview.existing
            exists = preview.intermediate_table_exists and existing is not None
            return plan_deferred_write(
                request,
                existing,
                catalog=catalog,
                target=dialect,
                pending=pending_ref(ref, prefix, target=dialect),
                existing_layout=pending_layout(existing) if exists and existing else None,
                changes_table=changes_table_of(preview.config),
            )
        case _:
            return plan_change(
                request,
                preview.existing,
                catalog=catalog,
                target=dialect,
                changes_table=changes_table_of(preview.config),
            )


def format_statements(statements: tuple[Statement, ...], noop_reason: str | None = None) -> str:
    if noop_reason is not None:
        return f"-- nothing to do: {noop_reason}\n"
    parts = []
    for number, statement in enumerate(statements, start=1):
        header = f"-- {number}. {statement.summary}"
        parts.append(header if statement.directive else f"{header}\n{statement.sql};")
        # Every form that can run: the runtime picks one after staging.
        for form, sql in statement.forms:
            parts.append(f"-- {number}. {statement.summary}, or instead when {form.value}:\n{sql};")
    return "\n\n".join(parts) + "\n"


def checked(statements: RenderedPlan, dialect: Dialect) -> RenderedPlan:
    """``statements``, once every form of each parses back strictly with the dialect's reader
    and prints the same again (the check the engine skips: it renders without parsing)."""
    for statement in statements:
        if statement.directive:
            continue  # no SQL to check
        for sql in (statement.sql, *(text for _, text in statement.forms)):
            again = parse_back(
                dialect.sqlglot_dialect,
                dialect.name,
                sql,
                command=statement.command,
                known_gap=statement.known_gap,
            )
            if again != sql:
                raise RenderError(f"rendered SQL does not print back the same:\n{sql}")
    return statements


def preview(preview_input: PreviewInput, dialect: Dialect = DEFAULT) -> str:
    plan = plan_for(preview_input, dialect)
    return format_statements(checked(render_plan(plan, dialect), dialect), plan.noop_reason)
