"""What every lowering module shares: the ``Renderer`` bound to one dialect, and the small
expression builders (columns, literals, sentinel tests) the statements are made of.

Jinja lays out the statement skeleton from a typed context whose slots are sqlglot trees
(identifiers and tables from ``quoting``, expressions built here and in ``values``); the
``edge`` puts the trees into the parsed skeleton and prints the statement once, so the SQL that
runs is exactly the SQL a preview or a golden snapshot shows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import Final

from sqlglot import exp

from spark_destination.core.errors import RenderError
from spark_destination.core.model import Column
from spark_destination.dialects import edge, skeletons, values
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.edge import Skeleton
from spark_destination.dialects.quoting import identifier, literal, utc_timestamp_text
from spark_destination.dialects.quoting import table as table_name
from spark_destination.dialects.rendered import (
    CheckOutput,
    Form,
    KeyFilter,
    Run,
    RunSql,
    Statement,
)
from spark_destination.planner.ir import (
    OP_COLUMN,
    SEQ_COLUMN,
    Op,
    RowOp,
    TableLayout,
    TableRef,
    unmodified_column,
)

# Fixed aliases keep rendered SQL (and so previews and snapshots) stable.
TARGET_ALIAS: Final = "t"
SOURCE_ALIAS: Final = "s"
BATCH_ALIAS: Final = "b"
# What most statements do at run time: run their SQL.
RUN_SQL: Final = RunSql()


@dataclasses.dataclass(frozen=True, slots=True)
class Renderer:
    """Lowering helpers bound to one dialect."""

    dialect: Dialect

    def template(self, name: str, context: object) -> Skeleton:
        """Render the dialect's skeleton ``name`` with a context dataclass of trees."""
        assert dataclasses.is_dataclass(context) and not isinstance(context, type)
        if name not in self.dialect.skeletons.available:
            raise RenderError(f"dialect {self.dialect.name} has no template {name!r}")
        slots = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
        return edge.render_skeleton(skeletons.environment(self.dialect.skeletons), name, slots)

    def to_sql(self, skeleton: Skeleton, *, known_gap: bool = False) -> str:
        """The dialect's one ``to_sql`` edge (commands: ``Skeletons.commands``)."""
        read = self.dialect.sqlglot_dialect
        if skeleton.template in self.dialect.skeletons.commands:
            return edge.command_sql(read, skeleton)
        return edge.to_sql(read, skeleton, known_gap=known_gap)

    def statement(
        self,
        op: Op,
        skeleton: Skeleton,
        summary: str,
        *,
        known_gap: bool = False,
        forms: tuple[tuple[Form, Skeleton], ...] = (),
        layout: tuple[CheckOutput, ...] = (),
        key_filter: KeyFilter | None = None,
        wide_key_filter: KeyFilter | None = None,
        run: Run = RUN_SQL,
    ) -> Statement:
        """A statement of SQL; ``run``: what the runtime does with it (by default, runs it)."""
        return Statement(
            op=op,
            sql=self.to_sql(skeleton, known_gap=known_gap),
            summary=summary,
            run=run,
            forms=tuple((form, self.to_sql(s)) for form, s in forms),
            layout=layout,
            key_filter=key_filter,
            wide_key_filter=wide_key_filter,
            command=skeleton.template in self.dialect.skeletons.commands,
            known_gap=known_gap,
        )

    def table(self, table: TableRef) -> exp.Table:
        return table_name(table.catalog, table.schema, table.name)

    def properties(
        self,
        own: tuple[tuple[str, str], ...],
        *,
        table_format: bool = True,
        layout: TableLayout | None = None,
        replacing: bool = False,
        columns: Iterable[str] = (),
    ) -> list[tuple[exp.Literal, exp.Literal]]:
        """The table format's properties (unless ``table_format`` is false) with those of
        ``layout`` in their place, the name mapping if one of ``columns`` needs it, then the
        destination's own, as string literals. A table ``replacing`` itself keeps its format
        version."""
        formats = dict(self.dialect.table_properties if table_format else ())
        if self.dialect.needs_name_mapping(columns):
            formats.update(self.dialect.name_mapping)
        style = self.dialect.layout
        if layout is not None and style is not None:
            formats.update(style.properties(layout))
        if replacing and style is not None:
            formats.pop(style.version_property, None)
        every = (*formats.items(), *own)
        return [(literal(k), literal(v)) for k, v in every]

    def using(self) -> exp.Var:
        """The table format as ``USING`` names it."""
        return exp.Var(this=self.dialect.using)

    def column_definition(self, column: Column, *, nullable: bool = False) -> exp.ColumnDef:
        constraints = []
        if column.primary_key and not nullable:
            constraints.append(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
        return exp.ColumnDef(
            this=identifier(column.name),
            kind=self.dialect.sql_type(column),
            constraints=constraints or None,
        )

    def decode(self, raw: exp.Expr, column: Column) -> exp.Expr:
        return values.decode(self.dialect, raw, column)

    def typed_literal(self, column: Column, value: str | None) -> exp.Expr:
        """``value`` stored in ``column``'s type (a cast that fails on a bad value); None is
        NULL."""
        if value is None:
            return exp.cast(exp.Null(), self.dialect.sql_type(column))
        return self.decode(exp.Literal.string(value), column)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=identifier(name), table=identifier(table) if table is not None else None)


def text(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def number(value: int) -> exp.Expr:
    return exp.Literal.number(value)


def alias(expression: exp.Expr, name: str) -> exp.Expr:
    """``expression AS name``; takes ``expression`` as it is (no copy: every caller builds it
    for this use)."""
    return exp.Alias(this=expression, alias=identifier(name))


def is_null(expression: exp.Expr) -> exp.Expr:
    return exp.Is(this=expression.copy(), expression=exp.Null())


def op_is(*ops: RowOp, table: str | None = None) -> exp.Expr:
    """The staged row's operation tag is one of ``ops``."""
    return exp.In(this=col(OP_COLUMN, table), expressions=[text(o.value) for o in ops])


def keys_equal(names: list[str], left: str, right: str) -> exp.Expr:
    return exp.and_(*(exp.EQ(this=col(n, left), expression=col(n, right)) for n in names))


def assign(name: str, value: exp.Expr, table: str | None = TARGET_ALIAS) -> exp.Expr:
    """``table.name = value`` (a MERGE or UPDATE assignment)."""
    return exp.EQ(this=col(name, table), expression=value)


def latest(name: str, *conditions: exp.Expr) -> exp.Expr:
    """``MAX_BY(name, seq)`` over the rows meeting every condition (all rows when none): the
    value of the last such row in processing order. MAX_BY keeps a NULL value, so a later NULL
    (the null sentinel) wins over an earlier value."""
    last = exp.func("MAX_BY", col(name), col(SEQ_COLUMN))
    if not conditions:
        return last
    return exp.Filter(this=last, expression=exp.Where(this=exp.and_(*conditions)))


def unless_unmodified(name: str, kept: exp.Expr) -> exp.Expr:
    """The source's value of ``name``, or ``kept`` where the source's unmodified mask of it is
    set."""
    mask = col(unmodified_column(name), SOURCE_ALIAS)
    return exp.Case(ifs=[exp.If(this=mask, true=kept)], default=col(name, SOURCE_ALIAS))


def timestamp(value: datetime) -> exp.Expr:
    """A UTC timestamp literal with microsecond precision: ``CAST('…' AS TIMESTAMP)``."""
    return timestamp_text(utc_timestamp_text(value))


def timestamp_text(value: str) -> exp.Expr:
    # Built, never parsed from Spark text: sqlglot's Spark reader makes CAST a safe cast,
    # which other dialects print as TRY_CAST.
    return exp.cast(exp.Literal.string(value), exp.DataType.build("TIMESTAMP"))


def markers_for(filter_key: tuple[str, ...], slots: int) -> KeyFilter | None:
    """The key-filter form's parameter markers: ``sd_key_<column>_<slot>`` per filterable key
    column (plain identifiers, whatever the column is called); None without such a form."""
    if not filter_key or slots <= 0:
        return None
    return KeyFilter(
        columns=tuple(
            (name, tuple(f"sd_key_{i}_{slot}" for slot in range(slots)))
            for i, name in enumerate(filter_key)
        )
    )


def keys_in_markers(key_filter: KeyFilter, table: str | None) -> list[exp.Expr]:
    """Per filtered key column: ``table.column IN (:marker, ...)``."""
    return [
        exp.In(
            this=col(name, table),
            expressions=[exp.Placeholder(this=marker) for marker in markers],
        )
        for name, markers in key_filter.columns
    ]
