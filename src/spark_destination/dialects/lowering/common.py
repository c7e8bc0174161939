"""What every lowering module shares: the ``Renderer`` bound to one dialect, and the small
expression builders (columns, literals, sentinel tests) the statements are made of.

Jinja lays out the statement skeleton from a typed context whose slots are already text:
identifiers quoted by ``quoting``, expressions built with sqlglot and printed for the dialect.
The text is then parsed back by sqlglot in strict mode with the dialect's own reader and
pretty-printed from the AST, so the SQL that runs is exactly the SQL a preview or a golden
snapshot shows, and a template bug is caught here rather than in the engine.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from datetime import datetime
from typing import Final

import jinja2
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError

from spark_destination.core.errors import RenderError
from spark_destination.core.model import Column
from spark_destination.dialects import values
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.quoting import ident, qualified, string_literal, utc_timestamp_text
from spark_destination.dialects.rendered import CheckOutput, Form, KeyFilter, Statement
from spark_destination.planner.ir import OP_COLUMN, Op, RowOp, TableRef

# Fixed aliases keep rendered SQL (and so previews and snapshots) stable.
TARGET_ALIAS: Final = "t"
SOURCE_ALIAS: Final = "s"
BATCH_ALIAS: Final = "b"
# Folder of the statement skeletons every dialect shares.
COMMON_TEMPLATES: Final = "common"


class _ExpectedCommandFilter(logging.Filter):
    """sqlglot warns when it parses table-format DDL as an opaque command; ``finalize``
    decides whether that is allowed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_ExpectedCommandFilter())


@functools.cache
def _environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("spark_destination", f"templates/{folder}"),
                jinja2.PackageLoader("spark_destination", f"templates/{COMMON_TEMPLATES}"),
            ]
        ),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - the output is SQL, not HTML; every slot is pre-quoted
        keep_trailing_newline=False,
    )


def finalize(dialect: Dialect, sql: str, *, command: bool = False, known_gap: bool = False) -> str:
    """Parse ``sql`` back with the dialect's sqlglot reader (strict) and pretty-print it.

    Table-format DDL outside sqlglot's grammar (Iceberg's ``SET IDENTIFIER FIELDS``) parses as
    an opaque command; only statements rendered with ``command=True`` may do that. A statement
    sqlglot parses but flags when printing although it prints it right (``known_gap``: sqlglot
    30.30 reports ``ALTER COLUMN … SET NOT NULL`` as unsupported) is printed without that check.
    """
    try:
        parsed = sqlglot.parse(sql, read=dialect.sqlglot_dialect, error_level=ErrorLevel.RAISE)
    except ParseError as exc:
        raise RenderError(f"rendered SQL does not parse: {exc}\n{sql}") from exc
    if len(parsed) != 1 or parsed[0] is None:
        raise RenderError(f"rendered SQL must be exactly one statement:\n{sql}")
    tree = parsed[0]
    if isinstance(tree, exp.Command):
        if not command:
            raise RenderError(f"rendered SQL is outside sqlglot's {dialect.name} grammar:\n{sql}")
        return sql.strip()
    return tree.sql(
        dialect=dialect.sqlglot_dialect,
        pretty=True,
        unsupported_level=ErrorLevel.IGNORE if known_gap else ErrorLevel.RAISE,
        comments=False,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Renderer:
    """Lowering helpers bound to one dialect."""

    dialect: Dialect

    def template(self, name: str, context: object) -> str:
        """Render ``templates/<dialect or common>/<name>.sql.j2`` with a context dataclass."""
        assert dataclasses.is_dataclass(context) and not isinstance(context, type)
        slots = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
        environment = _environment(self.dialect.templates)
        return environment.get_template(f"{name}.sql.j2").render(**slots)

    def statement(
        self,
        op: Op,
        sql: str,
        summary: str,
        *,
        command: bool = False,
        known_gap: bool = False,
        forms: tuple[tuple[Form, str], ...] = (),
        layout: tuple[CheckOutput, ...] = (),
        key_filter: KeyFilter | None = None,
    ) -> Statement:
        return Statement(
            op=op,
            sql=finalize(self.dialect, sql, command=command, known_gap=known_gap),
            summary=summary,
            forms=tuple((form, finalize(self.dialect, text)) for form, text in forms),
            layout=layout,
            key_filter=key_filter,
        )

    def sql(self, expression: exp.Expr) -> str:
        return self.dialect.sql(expression)

    def table(self, table: TableRef) -> str:
        return qualified(table.catalog, table.schema, table.name)

    def properties(
        self, own: tuple[tuple[str, str], ...], *, table_format: bool = True
    ) -> list[tuple[str, str]]:
        """The table format's properties (unless ``table_format`` is false), then the
        destination's own, as quoted literals."""
        every = (*(self.dialect.table_properties if table_format else ()), *own)
        return [(string_literal(k), string_literal(v)) for k, v in every]

    def column_definition(self, column: Column, *, nullable: bool = False) -> str:
        definition = f"{ident(column.name)} {self.dialect.type_text(column)}"
        return definition + (" NOT NULL" if column.primary_key and not nullable else "")

    def decode(self, raw: exp.Expr, column: Column) -> exp.Expr:
        return values.decode(self.dialect, raw, column)

    def typed_literal(self, column: Column, value: str | None) -> exp.Expr:
        """``value`` stored in ``column``'s type (a cast that fails on a bad value); None is
        NULL."""
        if value is None:
            return exp.cast(exp.Null(), self.dialect.sql_type(column))
        return self.decode(exp.Literal.string(value), column)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def text(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def number(value: int) -> exp.Expr:
    return exp.Literal.number(value)


def alias(expression: exp.Expr, name: str) -> exp.Expr:
    return exp.alias_(expression, exp.to_identifier(name, quoted=True))


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
