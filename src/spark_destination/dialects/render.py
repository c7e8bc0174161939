"""The render entry point: one IR op -> one Spark SQL statement, checked by sqlglot.

Jinja lays out the statement skeleton from fragments that are already quoted (identifiers via
``quoting``) or built as sqlglot expressions (casts, predicates). The text is then parsed back by
sqlglot in strict mode and pretty-printed from the AST, so the SQL that runs is exactly the SQL a
preview or a golden snapshot shows, and a template bug is caught here rather than in Spark.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final, assert_never

import jinja2
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError

from spark_destination.dialects import spark_iceberg
from spark_destination.dialects.quoting import (
    SQLGLOT_DIALECT,
    ident,
    qualified,
    string_literal,
    timestamp_literal,
)
from spark_destination.errors import RenderError
from spark_destination.model import Column
from spark_destination.planner.ir import (
    OP_COLUMN,
    SEQ_COLUMN,
    AddColumnsOp,
    CheckValuesOp,
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    MergeBatchOp,
    Op,
    Plan,
    RowOp,
    SetIdentifierFieldsOp,
    SetPropertiesOp,
    StageBatchOp,
    TableRef,
    TruncateOp,
)

# Fixed aliases keep rendered SQL (and so previews and snapshots) stable.
TARGET_ALIAS: Final = "t"
SOURCE_ALIAS: Final = "s"
BATCH_ALIAS: Final = "b"


class _ExpectedCommandFilter(logging.Filter):
    """sqlglot warns when it parses Iceberg DDL as an opaque command; ``finalize`` decides."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_ExpectedCommandFilter())

_ENV: Final = jinja2.Environment(
    loader=jinja2.PackageLoader("spark_destination", "templates"),
    undefined=jinja2.StrictUndefined,
    autoescape=False,  # noqa: S701 - the output is SQL, not HTML; every slot is pre-quoted
    keep_trailing_newline=False,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    """One rendered step: ``sql`` is None for runtime directives (staging, describe)."""

    op: Op
    sql: str | None
    summary: str


def render_plan(plan: Plan) -> tuple[Statement, ...]:
    return tuple(render(op) for op in plan.ops)


def render(op: Op) -> Statement:
    match op:
        case CreateNamespaceOp():
            sql = _template("create_namespace", namespace=qualified(op.catalog, op.schema))
            return _statement(op, sql, f"create schema {op.schema!r} if missing")
        case CreateTableOp():
            sql = _template(
                "create_table",
                table=_table(op.table),
                columns=[_column_definition(c) for c in op.columns],
                properties=_properties(op.properties),
            )
            return _statement(op, sql, f"create table {op.table.name!r}")
        case SetIdentifierFieldsOp():
            sql = _template(
                "set_identifier_fields",
                table=_table(op.table),
                columns=[ident(c) for c in op.columns],
            )
            return _statement(op, sql, f"set identifier fields of {op.table.name!r}", command=True)
        case AddColumnsOp():
            sql = _template(
                "add_columns",
                table=_table(op.table),
                columns=[_column_definition(c, nullable=True) for c in op.columns],
            )
            return _statement(op, sql, f"add {len(op.columns)} column(s) to {op.table.name!r}")
        case SetPropertiesOp():
            sql = _template(
                "set_properties", table=_table(op.table), properties=_properties(op.properties)
            )
            return _statement(op, sql, f"set properties of {op.table.name!r}")
        case StageBatchOp():
            files = ", ".join(f"{f.kind.value}:{f.path}" for f in op.files)
            return Statement(op=op, sql=None, summary=f"stage view {op.view!r} from [{files}]")
        case CheckValuesOp():
            return _statement(op, _check_values(op), f"check values staged in {op.view!r}")
        case MergeBatchOp():
            return _statement(op, _merge_batch(op), f"merge batch into {op.table.name!r}")
        case TruncateOp():
            return _statement(op, _truncate(op), f"truncate {op.table.name!r}")
        case DescribeOp():
            sql = _template("show_properties", table=_table(op.table))
            return _statement(op, sql, f"read properties of {op.table.name!r}", command=True)
        case _:
            assert_never(op)


def finalize(sql: str, *, command: bool = False) -> str:
    """Parse ``sql`` back with sqlglot (strict) and pretty-print it from the AST.

    Iceberg's own DDL (``SET IDENTIFIER FIELDS``) is outside sqlglot's grammar and parses as an
    opaque command; only statements rendered with ``command=True`` may do that.
    """
    try:
        parsed = sqlglot.parse(sql, read=SQLGLOT_DIALECT, error_level=ErrorLevel.RAISE)
    except ParseError as exc:
        raise RenderError(f"rendered SQL does not parse: {exc}\n{sql}") from exc
    if len(parsed) != 1 or parsed[0] is None:
        raise RenderError(f"rendered SQL must be exactly one statement:\n{sql}")
    tree = parsed[0]
    if isinstance(tree, exp.Command):
        if not command:
            raise RenderError(f"rendered SQL is outside sqlglot's Spark grammar:\n{sql}")
        return sql.strip()
    return tree.sql(
        dialect=SQLGLOT_DIALECT, pretty=True, unsupported_level=ErrorLevel.RAISE, comments=False
    )


def _statement(op: Op, sql: str, summary: str, *, command: bool = False) -> Statement:
    return Statement(op=op, sql=finalize(sql, command=command), summary=summary)


def _template(name: str, **context: object) -> str:
    return _ENV.get_template(f"{name}.sql.j2").render(**context)


def _sql(expression: exp.Expr) -> str:
    return expression.sql(dialect=SQLGLOT_DIALECT, unsupported_level=ErrorLevel.RAISE)


def _table(table: TableRef) -> str:
    return qualified(table.catalog, table.schema, table.name)


def _properties(properties: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    return [(string_literal(k), string_literal(v)) for k, v in properties]


def _column_definition(column: Column, *, nullable: bool = False) -> str:
    not_null = " NOT NULL" if column.primary_key and not nullable else ""
    return f"{ident(column.name)} {_sql(spark_iceberg.sql_type(column))}{not_null}"


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def _text(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def _is(raw: exp.Expr, sentinel: str | None) -> exp.Expr:
    if sentinel is None:
        return exp.false()
    return exp.EQ(this=raw.copy(), expression=_text(sentinel))


def _check_values(op: CheckValuesOp) -> str:
    checks = []
    for index, column in enumerate(op.columns):
        raw = _col(column.name)
        if column.name in op.key:
            bad_value = spark_iceberg.invalid(raw, column)
            predicate = exp.or_(_is(raw, op.null_string), _is(raw, op.unmodified_string))
            if bad_value is not None:
                predicate = exp.or_(predicate, bad_value)
        else:
            bad_value = spark_iceberg.invalid(raw, column)
            if bad_value is None:
                continue
            sentinels = [s for s in (op.null_string, op.unmodified_string) if s is not None]
            predicate = exp.and_(
                *(exp.NEQ(this=raw.copy(), expression=_text(s)) for s in sentinels), bad_value
            )
        checks.append({"predicate": _sql(predicate), "alias": ident(f"check_{index}")})
    if not checks:
        # Every column accepts any text: a constant query keeps the runtime contract simple.
        checks.append({"predicate": "FALSE", "alias": ident("check_none")})
    return _template("check_values", checks=checks, seq=ident(SEQ_COLUMN), view=ident(op.view))


def check_columns(op: CheckValuesOp) -> tuple[Column | None, ...]:
    """The column each output of the CheckValuesOp query refers to, in output order."""
    columns: list[Column | None] = []
    for column in op.columns:
        if column.name in op.key or spark_iceberg.invalid(_col(column.name), column) is not None:
            columns.append(column)
    return tuple(columns) if columns else (None,)


def _alias(expression: exp.Expr, name: str) -> exp.Expr:
    return exp.alias_(expression, exp.to_identifier(name, quoted=True))


def _value(
    raw: exp.Expr,
    column: Column,
    *,
    null_string: str | None,
    unmodified_string: str | None,
    unmodified: exp.Expr,
) -> exp.Expr:
    """``unmodified`` for the unmodified sentinel, NULL for the null sentinel, else the value."""
    ifs = []
    if unmodified_string is not None:
        ifs.append(exp.If(this=_is(raw, unmodified_string), true=unmodified))
    if null_string is not None:
        ifs.append(exp.If(this=_is(raw, null_string), true=exp.Null()))
    decoded = spark_iceberg.decode(raw, column)
    return exp.Case(ifs=ifs, default=decoded) if ifs else decoded


def _merge_batch(op: MergeBatchOp) -> str:
    key_columns = [c for c in op.columns if c.name in op.key]
    value_columns = [c for c in op.columns if c.name not in op.key]
    seq = _col(SEQ_COLUMN)

    decoded = [_sql(_alias(spark_iceberg.decode(_col(c.name), c), c.name)) for c in key_columns] + [
        ident(c.name) for c in value_columns
    ]

    folded = [ident(c.name) for c in key_columns]
    for column in value_columns:
        raw = _col(column.name)
        last = exp.func("MAX_BY", raw.copy(), seq.copy())
        if op.unmodified_string is not None:
            # Per column, the latest value that is not "unmodified"; none at all -> unmodified.
            last = exp.Coalesce(
                this=exp.Filter(
                    this=last,
                    expression=exp.Where(
                        this=exp.NEQ(this=raw.copy(), expression=_text(op.unmodified_string))
                    ),
                ),
                expressions=[_text(op.unmodified_string)],
            )
        folded.append(_sql(_alias(last, column.name)))

    row_op = _col(OP_COLUMN)
    fold_op = exp.Case(
        ifs=[
            exp.If(
                this=exp.Max(this=exp.EQ(this=row_op.copy(), expression=_text(RowOp.DELETE.value))),
                true=_text(RowOp.DELETE.value),
            ),
            exp.If(
                this=exp.Max(this=exp.EQ(this=row_op.copy(), expression=_text(RowOp.UPSERT.value))),
                true=_text(RowOp.UPSERT.value),
            ),
        ],
        default=_text(RowOp.UPDATE.value),
    )

    assignments = []
    for column in value_columns:
        source = _col(column.name, SOURCE_ALIAS)
        target = _col(column.name, TARGET_ALIAS)
        value = _value(
            source,
            column,
            null_string=op.null_string,
            unmodified_string=op.unmodified_string,
            unmodified=target.copy(),
        )
        assignments.append(_sql(exp.EQ(this=target, expression=value)))

    insert_columns: list[str] = []
    insert_values: list[str] = []
    if op.has_upserts:
        for column in op.columns:
            source = _col(column.name, SOURCE_ALIAS)
            insert_columns.append(ident(column.name))
            if column.name in op.key:
                insert_values.append(_sql(source))
                continue
            value = _value(
                source,
                column,
                null_string=op.null_string,
                unmodified_string=op.unmodified_string,
                unmodified=exp.Null(),
            )
            insert_values.append(_sql(value))

    on = exp.and_(
        *(
            exp.EQ(this=_col(c.name, TARGET_ALIAS), expression=_col(c.name, SOURCE_ALIAS))
            for c in key_columns
        )
    )
    return _template(
        "merge_batch",
        table=_table(op.table),
        target=ident(TARGET_ALIAS),
        source=ident(SOURCE_ALIAS),
        batch=ident(BATCH_ALIAS),
        view=ident(op.view),
        decoded=decoded,
        folded=folded,
        fold_op=_sql(fold_op),
        op=ident(OP_COLUMN),
        seq=ident(SEQ_COLUMN),
        key=[ident(c.name) for c in key_columns],
        on=_sql(on),
        source_op=_sql(_col(OP_COLUMN, SOURCE_ALIAS)),
        delete=string_literal(RowOp.DELETE.value),
        upsert=string_literal(RowOp.UPSERT.value),
        assignments=assignments,
        insert_columns=insert_columns,
        insert_values=insert_values,
    )


def _truncate(op: TruncateOp) -> str:
    table = _table(op.table)
    synced = ident(op.synced_column)
    before = timestamp_literal(op.before)
    if op.soft_deleted_column is None:
        return _template("truncate_delete", table=table, synced=synced, before=before)
    return _template(
        "truncate_soft",
        table=table,
        synced=synced,
        before=before,
        deleted=ident(op.soft_deleted_column),
    )
