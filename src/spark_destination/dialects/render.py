"""The render entry point: one IR op -> one Spark SQL statement, checked by sqlglot.

Jinja lays out the statement skeleton from fragments that are already quoted (identifiers via
``quoting``) or built as sqlglot expressions (casts, predicates). The text is then parsed back by
sqlglot in strict mode and pretty-printed from the AST, so the SQL that runs is exactly the SQL a
preview or a golden snapshot shows, and a template bug is caught here rather than in Spark.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
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
from spark_destination.model import Column, DataType
from spark_destination.planner.ir import (
    DUP_COLUMN,
    OP_COLUMN,
    SEQ_COLUMN,
    AddColumnsOp,
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CheckUniqueKeyOp,
    CheckValuesOp,
    ColumnChange,
    CopyRowsOp,
    CopyRowsToHistoryOp,
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    DropColumnsOp,
    DropNotNullOp,
    DropTableOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    ListNamespacesOp,
    MergeBatchOp,
    MergeHistoryOp,
    Op,
    Plan,
    RenameColumnOp,
    RewriteTableOp,
    RewriteToHistoryOp,
    RowOp,
    SetColumnValueOp,
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
            when = " (runs only if the next statement fails: names the bad value)"
            summary = f"check values staged in {op.view!r}{when if op.deferred else ''}"
            return _statement(op, _check_values(op), summary)
        case MergeBatchOp():
            return _statement(op, _merge_batch(op), f"merge batch into {op.table.name!r}")
        case MergeHistoryOp():
            return _statement(op, _merge_history(op), f"merge history batch into {op.table.name!r}")
        case TruncateOp():
            return _statement(op, _truncate(op), f"truncate {op.table.name!r}")
        case DescribeOp():
            # No SQL: SHOW TBLPROPERTIES redacts values (a column named `url` or `password` in
            # the metadata), so the runtime reads the table from the catalog API instead.
            summary = f"read schema, key and Fivetran metadata of {op.table.name!r} (catalog API)"
            return Statement(op=op, sql=None, summary=summary)
        case ListNamespacesOp():
            sql = _template("show_namespaces", catalog=ident(op.catalog))
            return _statement(op, sql, f"list namespaces of catalog {op.catalog!r}", command=True)
        case (
            DropTableOp()
            | CheckLiteralOp()
            | CheckHistoryStartOp()
            | RenameColumnOp()
            | DropColumnsOp()
            | SetColumnValueOp()
            | CopyRowsOp()
            | CopyRowsToHistoryOp()
            | HistoryColumnChangeOp()
            | KeepLatestVersionsOp()
            | RewriteToHistoryOp()
        ):
            return _migrate_sql(op)
        case (
            AlterColumnTypeOp()
            | DropNotNullOp()
            | CheckConversionsOp()
            | CheckUniqueKeyOp()
            | RewriteTableOp()
        ):
            return _alter_sql(op)
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
        required = _required_ops(op, column.name)
        if column.name in op.key:
            bad_value = spark_iceberg.invalid(raw, column)
            predicate = exp.or_(_is(raw, op.null_string), _is(raw, op.unmodified_string))
            if bad_value is not None:
                predicate = exp.or_(predicate, bad_value)
        else:
            bad_value = spark_iceberg.invalid(raw, column)
            if bad_value is None and not required:
                continue
            sentinels = [s for s in (op.null_string, op.unmodified_string) if s is not None]
            predicate = (
                exp.false()
                if bad_value is None
                else exp.and_(
                    *(exp.NEQ(this=raw.copy(), expression=_text(s)) for s in sentinels), bad_value
                )
            )
            if required:
                missing = exp.and_(
                    exp.In(
                        this=_col(OP_COLUMN),
                        expressions=[_text(row_op.value) for row_op in required],
                    ),
                    exp.or_(_is(raw, op.null_string), _is(raw, op.unmodified_string)),
                )
                predicate = missing if bad_value is None else exp.or_(missing, predicate)
        checks.append({"predicate": _sql(predicate), "alias": ident(f"check_{index}")})
    if not checks:
        # Every column accepts any text: a constant query keeps the runtime contract simple.
        checks.append({"predicate": "FALSE", "alias": ident("check_none")})
    return _template("check_values", checks=checks, seq=ident(SEQ_COLUMN), view=ident(op.view))


def _required_ops(op: CheckValuesOp, name: str) -> tuple[RowOp, ...]:
    return next((ops for column, ops in op.required if column == name), ())


def required_ops(op: CheckValuesOp, name: str) -> tuple[RowOp, ...]:
    """The row operations on which column ``name`` must hold a real value (not a sentinel)."""
    return _required_ops(op, name)


def check_columns(op: CheckValuesOp) -> tuple[Column | None, ...]:
    """The column each output of the CheckValuesOp query refers to, in output order."""
    columns: list[Column | None] = []
    for column in op.columns:
        if (
            column.name in op.key
            or _required_ops(op, column.name)
            or spark_iceberg.invalid(_col(column.name), column) is not None
        ):
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
    """``unmodified`` for the unmodified sentinel, NULL for the null sentinel, else the value.

    A value that cannot be stored fails the statement: the cast raises (ANSI mode), and text
    a cast would accept but the column must refuse raises through ``RAISE_ERROR``.
    """
    ifs = []
    if unmodified_string is not None:
        ifs.append(exp.If(this=_is(raw, unmodified_string), true=unmodified))
    if null_string is not None:
        ifs.append(exp.If(this=_is(raw, null_string), true=exp.Null()))
    refused = spark_iceberg.unrepresentable(raw, column)
    if refused is not None:
        ifs.append(exp.If(this=refused, true=_raise(f"a value does not fit column {column.name}")))
    decoded = spark_iceberg.decode(raw, column)
    return exp.Case(ifs=ifs, default=decoded) if ifs else decoded


def _raise(message: str) -> exp.Expr:
    return exp.func("RAISE_ERROR", _text(message))


def _key_value(column: Column, op: MergeBatchOp) -> exp.Expr:
    """A key column's value; a sentinel in a key column fails the statement."""
    raw = _col(column.name)
    sentinels = [s for s in (op.null_string, op.unmodified_string) if s is not None]
    if not sentinels:
        return spark_iceberg.decode(raw, column)
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.or_(*(_is(raw, s) for s in sentinels)),
                true=_raise(f"key column {column.name} is NULL"),
            )
        ],
        default=spark_iceberg.decode(raw, column),
    )


def _merge_batch(op: MergeBatchOp) -> str:
    key_columns = [c for c in op.columns if c.name in op.key]
    value_columns = [c for c in op.columns if c.name not in op.key]
    seq = _col(SEQ_COLUMN)

    decoded = [_sql(_alias(_key_value(c, op), c.name)) for c in key_columns] + [
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
        fold=op.fold_repeated_keys,
        dup=ident(DUP_COLUMN),
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
    if op.history_close is not None:
        end, active = op.history_close
        return _template(
            "truncate_history",
            table=table,
            synced=synced,
            before=before,
            end=ident(end),
            active=ident(active),
        )
    if op.soft_deleted_column is None:
        return _template("truncate_delete", table=table, synced=synced, before=before)
    return _template(
        "truncate_soft",
        table=table,
        synced=synced,
        before=before,
        deleted=ident(op.soft_deleted_column),
    )


# Names used inside the history MERGE source; the ``__sd_`` prefix cannot collide with
# Fivetran columns.
_H_ROWS: Final = "__sd_rows"
_H_ALL: Final = "__sd_all"
_H_WINDOWED: Final = "__sd_windowed"
_H_BASED: Final = "__sd_based"
_H_FILLED: Final = "__sd_filled"
_H_EARLIEST: Final = "__sd_earliest"
_H_DELETED_AT: Final = "__sd_deleted_at"
_H_SURVIVES: Final = "__sd_survives"
_H_ORDER: Final = "__sd_order"
_H_POS: Final = "__sd_pos"
_H_BASE: Final = "__sd_base"
_H_NEXT_ORDER: Final = "__sd_next_order"
_H_NEXT_START: Final = "__sd_next_start"
_H_LAST: Final = "__sd_last"
_H_STORED: Final = "__sd_stored_"
_H_ACTION: Final = "__sd_action"
# ``__sd_order`` of a row in the windowed source: stored versions first, then the batch's
# update/upsert rows (new versions), then its earliest-start and delete rows.
_H_STORED_ORDER: Final = 0
_H_VERSION_ORDER: Final = 1
_H_OTHER_ORDER: Final = 2
_ACTION_INSERT: Final = "insert"
_ACTION_CLOSE: Final = "close"
_ACTION_DELETE: Final = "delete"
# A superseded version ends one millisecond before its successor starts (Fivetran's rule).
_CLOSE_GAP: Final = exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this="MILLISECOND"))


def _op_is(*ops: RowOp) -> exp.Expression:
    return exp.In(this=_col(OP_COLUMN), expressions=[_text(o.value) for o in ops])


def _keys_equal(columns: list[Column], left: str, right: str) -> exp.Condition:
    return exp.and_(
        *(exp.EQ(this=_col(c.name, left), expression=_col(c.name, right)) for c in columns)
    )


def _merge_history(op: MergeHistoryOp) -> str:
    """The SCD type 2 MERGE described on ``MergeHistoryOp``.

    The staged rows and the stored versions of their keys are put in one relation and windowed
    per key in (``__sd_order``, start, seq) order: every per-key value (earliest start, delete
    time, newest surviving version, the fill of unmodified columns, the last of repeated
    versions) comes out of that one sort, so the table is read once for the source (and once
    by the MERGE itself) and no per-key aggregate has to be joined back.
    """
    by_name = {c.name: c for c in op.columns}
    key_columns = [c for c in op.columns if c.name in op.key]
    start = by_name[op.start]
    # Columns whose value a version carries (and an update may leave unmodified).
    value_columns = [c for c in op.columns if c.name not in op.key and c.name != op.start]
    order = _col(_H_ORDER)
    key_partition = [_col(c.name) for c in key_columns]

    # 1. The staged rows with keys and start typed, every other column as a one-element array
    #    of its typed value, NULL when unmodified (so a genuine NULL is not "unmodified").
    rows_select = [_sql(_alias(spark_iceberg.decode(_col(c.name), c), c.name)) for c in key_columns]
    rows_select.append(
        _sql(
            _alias(
                _value(
                    _col(start.name),
                    start,
                    null_string=op.null_string,
                    unmodified_string=op.unmodified_string,
                    unmodified=exp.Null(),
                ),
                start.name,
            )
        )
    )
    for column in value_columns:
        raw = _col(column.name)
        typed = _value(
            raw, column, null_string=op.null_string, unmodified_string=None, unmodified=exp.Null()
        )
        wrapped: exp.Expression = exp.Array(expressions=[typed])
        if op.unmodified_string is not None:
            wrapped = exp.Case(
                ifs=[exp.If(this=_is(raw, op.unmodified_string), true=exp.Null())],
                default=wrapped,
            )
        rows_select.append(_sql(_alias(wrapped, column.name)))

    # 2. Batch rows and the stored versions of the batch's keys (values wrapped the same way).
    row_columns = [ident(c.name) for c in (*key_columns, start, *value_columns)]
    row_order = exp.Case(
        ifs=[
            exp.If(
                this=_op_is(RowOp.UPDATE, RowOp.UPSERT),
                true=exp.Literal.number(_H_VERSION_ORDER),
            )
        ],
        default=exp.Literal.number(_H_OTHER_ORDER),
    )
    stored_columns = [ident(c.name) for c in (*key_columns, start)] + [
        _sql(_alias(exp.Array(expressions=[_col(c.name)]), c.name)) for c in value_columns
    ]

    # 3. Per key (whole-partition frames): the earliest start of the batch and the (latest)
    #    delete timestamp; per row its position and the next row's order and start.
    window_order = exp.Order(
        expressions=[exp.Ordered(this=order.copy()), exp.Ordered(this=_col(start.name))]
        + [exp.Ordered(this=_col(SEQ_COLUMN))]
    )

    def _over(this: exp.Expr, frame: str | None) -> exp.Window:
        spec = None
        if frame is not None:
            spec = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end=frame)
            if frame == "UNBOUNDED":
                spec.set("end_side", "FOLLOWING")
        return exp.Window(
            this=this,
            partition_by=[c.copy() for c in key_partition],
            order=window_order.copy(),
            spec=spec,
            over="OVER",
        )

    def _whole(this: exp.Expression) -> exp.Window:
        return _over(this, "UNBOUNDED")

    def _min_start(*ops: RowOp) -> exp.Expression:
        return _whole(
            exp.Min(this=exp.Case(ifs=[exp.If(this=_op_is(*ops), true=_col(start.name))]))
        )

    earliest_expr = exp.func(
        "LEAST", _min_start(RowOp.EARLIEST_START), _min_start(RowOp.UPDATE, RowOp.UPSERT)
    )
    deleted_expr = _whole(
        exp.Max(
            this=exp.Case(
                ifs=[
                    exp.If(
                        this=_op_is(RowOp.DELETE),
                        true=exp.func("ELEMENT_AT", _col(op.end), exp.Literal.number(1)),
                    )
                ]
            )
        )
    )
    position_expr = _over(exp.func("ROW_NUMBER"), None)
    next_order_expr = _over(
        exp.func("LEAD", order.copy(), exp.Literal.number(1), exp.Literal.number(-1)), None
    )
    next_start_expr = _over(exp.func("LEAD", _col(start.name)), None)

    # 4. A stored version survives if it starts before the key's earliest start; the newest
    #    surviving one (the last in window order) is the fill base.
    earliest = _col(_H_EARLIEST)
    survives_expr = exp.or_(
        exp.Is(this=earliest.copy(), expression=exp.Null()),
        exp.LT(this=_col(start.name), expression=earliest.copy()),
    )
    is_stored = exp.EQ(this=order.copy(), expression=exp.Literal.number(_H_STORED_ORDER))
    base_expr = _whole(
        exp.Max(
            this=exp.Case(
                ifs=[
                    exp.If(
                        this=exp.and_(is_stored.copy(), exp.paren(survives_expr.copy())),
                        true=_col(_H_POS),
                    )
                ]
            )
        )
    )

    # 5. Unmodified columns of a new version carry, in window order, the last value of the
    #    base or of an earlier new version; a new version is kept if the next row is not a new
    #    version with the same start (the later staged row wins).
    is_version = exp.EQ(this=order.copy(), expression=exp.Literal.number(_H_VERSION_ORDER))
    is_base = exp.EQ(this=_col(_H_POS), expression=_col(_H_BASE))
    filled_select = [ident(c.name) for c in (*key_columns, start)]
    for column in value_columns:
        carried = _over(
            exp.IgnoreNulls(
                this=exp.Last(
                    this=exp.Case(
                        ifs=[
                            exp.If(
                                this=exp.or_(is_version.copy(), is_base.copy()),
                                true=_col(column.name),
                            )
                        ]
                    )
                )
            ),
            "CURRENT ROW",
        )
        filled_select.append(
            _sql(_alias(exp.func("ELEMENT_AT", carried, exp.Literal.number(1)), column.name))
        )
    for name in (op.end, op.active):
        filled_select.append(
            _sql(
                _alias(exp.func("ELEMENT_AT", _col(name), exp.Literal.number(1)), _H_STORED + name)
            )
        )
    last_expr = exp.and_(
        is_version.copy(),
        exp.not_(
            exp.and_(
                exp.EQ(this=_col(_H_NEXT_ORDER), expression=exp.Literal.number(_H_VERSION_ORDER)),
                exp.EQ(this=_col(_H_NEXT_START), expression=_col(start.name)),
            )
        ),
    )

    # 6. The MERGE source: new versions to insert and stored versions to delete or close.
    deleted_at = _col(_H_DELETED_AT)
    deleting = exp.not_(exp.Is(this=deleted_at.copy(), expression=exp.Null()))
    has_earliest = exp.not_(exp.Is(this=earliest.copy(), expression=exp.Null()))
    stored_end = _col(_H_STORED + op.end)
    stored_active = _col(_H_STORED + op.active)
    source_select = [ident(c.name) for c in (*key_columns, start)]
    for column in value_columns:
        name = column.name
        if name == op.end:
            inserted: exp.Expression = exp.Case(
                ifs=[
                    exp.If(this=exp.and_(deleting.copy(), _col(op.active)), true=deleted_at.copy())
                ],
                default=_col(name),
            )
            changed: exp.Expression = exp.Case(
                ifs=[
                    exp.If(
                        this=has_earliest.copy(),
                        true=exp.Sub(this=earliest.copy(), expression=_CLOSE_GAP.copy()),
                    )
                ],
                default=deleted_at.copy(),
            )
        elif name == op.active:
            inserted = exp.Case(
                ifs=[exp.If(this=deleting.copy(), true=exp.false())], default=_col(name)
            )
            changed = exp.false()
        else:
            inserted, changed = _col(name), exp.Null()
        value = exp.Case(ifs=[exp.If(this=is_version.copy(), true=inserted)], default=changed)
        source_select.append(_sql(_alias(value, name)))
    survives = _col(_H_SURVIVES)
    action_expr = exp.Case(
        ifs=[
            exp.If(this=is_version.copy(), true=_text(_ACTION_INSERT)),
            exp.If(this=survives.copy(), true=_text(_ACTION_CLOSE)),
        ],
        default=_text(_ACTION_DELETE),
    )
    change_where = exp.or_(
        exp.not_(survives.copy()),
        exp.and_(
            has_earliest.copy(),
            exp.or_(
                stored_active.copy(),
                exp.and_(
                    is_base.copy(), exp.GTE(this=stored_end.copy(), expression=earliest.copy())
                ),
            ),
        ),
        exp.and_(
            exp.Is(this=earliest.copy(), expression=exp.Null()),
            deleting.copy(),
            stored_active.copy(),
        ),
    )
    source_where = exp.or_(
        exp.and_(is_version.copy(), _col(_H_LAST)),
        exp.and_(is_stored.copy(), exp.paren(change_where)),
    )

    on = exp.and_(
        _keys_equal([*key_columns, start], TARGET_ALIAS, SOURCE_ALIAS),
        exp.NEQ(this=_col(_H_ACTION, SOURCE_ALIAS), expression=_text(_ACTION_INSERT)),
    )
    assignments = [
        _sql(exp.EQ(this=_col(name, TARGET_ALIAS), expression=_col(name, SOURCE_ALIAS)))
        for name in (op.end, op.active)
    ]
    return _template(
        "merge_history",
        table=_table(op.table),
        target=ident(TARGET_ALIAS),
        source=ident(SOURCE_ALIAS),
        view=ident(op.view),
        rows=ident(_H_ROWS),
        all=ident(_H_ALL),
        windowed=ident(_H_WINDOWED),
        based=ident(_H_BASED),
        filled=ident(_H_FILLED),
        op=ident(OP_COLUMN),
        seq=ident(SEQ_COLUMN),
        start=ident(start.name),
        key=[ident(c.name) for c in key_columns],
        rows_select=rows_select,
        row_columns=row_columns,
        row_order=_sql(row_order),
        stored_columns=stored_columns,
        order=ident(_H_ORDER),
        position_expr=_sql(position_expr),
        next_order_expr=_sql(next_order_expr),
        next_start_expr=_sql(next_start_expr),
        earliest_expr=_sql(earliest_expr),
        deleted_expr=_sql(deleted_expr),
        earliest=ident(_H_EARLIEST),
        deleted_at=ident(_H_DELETED_AT),
        pos=ident(_H_POS),
        next_order=ident(_H_NEXT_ORDER),
        next_start=ident(_H_NEXT_START),
        survives=ident(_H_SURVIVES),
        survives_expr=_sql(survives_expr),
        base=ident(_H_BASE),
        base_expr=_sql(base_expr),
        filled_select=filled_select,
        last=ident(_H_LAST),
        last_expr=_sql(last_expr),
        source_select=source_select,
        action_expr=_sql(action_expr),
        action=ident(_H_ACTION),
        source_where=_sql(source_where),
        on=_sql(on),
        source_action=_sql(_col(_H_ACTION, SOURCE_ALIAS)),
        delete=string_literal(_ACTION_DELETE),
        insert=string_literal(_ACTION_INSERT),
        assignments=assignments,
        insert_columns=[ident(c.name) for c in op.columns],
        insert_values=[_sql(_col(c.name, SOURCE_ALIAS)) for c in op.columns],
    )


# --- Migrate --------------------------------------------------------------------------------

# Fivetran's history-mode bounds: first versions of soft-deleted rows start and end at the
# minimum, active versions end at the maximum (reference: "Switching to history mode" names
# 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z for destinations other than MySQL).
# PySpark's collect() cannot return the minimum as a Python datetime (TimestampType.fromInternal
# calls datetime.fromtimestamp, which raises "year 0 is out of range" for it, even in UTC); the
# destination never reads such a value back into Python, so the documented value is kept.
HISTORY_MIN_TIMESTAMP: Final = "0001-01-01 00:00:00"
HISTORY_MAX_TIMESTAMP: Final = "9999-12-31 23:59:59.999"
_M_ACTION: Final = "__sd_action"
_M_RANK: Final = "__sd_rank"
_M_LATEST: Final = "__sd_latest"
_M_LATEST_ALIAS: Final = "m"
_M_BAD: Final = "__sd_bad"
_M_INSERT: Final = "insert"
_M_CLOSE: Final = "close"
_M_FIX: Final = "fix"


def _timestamp_text(text: str) -> exp.Expr:
    return exp.cast(exp.Literal.string(text), exp.DataType.build("TIMESTAMP"))


def _timestamp(value: datetime) -> exp.Expr:
    """The UTC timestamp literal of ``quoting.timestamp_literal`` as an expression."""
    return sqlglot.parse_one(timestamp_literal(value), read=SQLGLOT_DIALECT)


def _typed_literal(column: Column, value: str | None) -> exp.Expr:
    """``value`` stored in ``column``'s type (ANSI cast: fails on a bad value); None is NULL."""
    if value is None:
        return exp.cast(exp.Null(), spark_iceberg.sql_type(column))
    return spark_iceberg.decode(exp.Literal.string(value), column)


def _migrate_sql(
    op: DropTableOp
    | CheckLiteralOp
    | CheckHistoryStartOp
    | RenameColumnOp
    | DropColumnsOp
    | SetColumnValueOp
    | CopyRowsOp
    | CopyRowsToHistoryOp
    | HistoryColumnChangeOp
    | KeepLatestVersionsOp
    | RewriteToHistoryOp,
) -> Statement:
    match op:
        case DropTableOp():
            sql = _template("drop_table", table=_table(op.table))
            return _statement(op, sql, f"drop table {op.table.name!r}")
        case CheckLiteralOp():
            bad = spark_iceberg.invalid(exp.Literal.string(op.value), op.column)
            sql = _template(
                "check_literal",
                predicate="FALSE" if bad is None else _sql(bad),
                alias=ident(_M_BAD),
            )
            return _statement(op, sql, f"check the value for column {op.column.name!r}")
        case CheckHistoryStartOp():
            sql = _template(
                "check_history_start",
                table=_table(op.table),
                start=ident(op.start),
                active=ident(op.active),
                ts=timestamp_literal(op.operation_timestamp),
                alias=ident(_M_LATEST),
            )
            return _statement(op, sql, f"check no active version of {op.table.name!r} starts later")
        case RenameColumnOp():
            sql = _template(
                "rename_column",
                table=_table(op.table),
                from_column=ident(op.from_column),
                to_column=ident(op.to_column),
            )
            summary = f"rename column {op.from_column!r} of {op.table.name!r} to {op.to_column!r}"
            return _statement(op, sql, summary)
        case DropColumnsOp():
            sql = _template(
                "drop_columns", table=_table(op.table), columns=[ident(c) for c in op.columns]
            )
            return _statement(op, sql, f"drop {len(op.columns)} column(s) of {op.table.name!r}")
        case SetColumnValueOp():
            value = (
                ident(op.from_column)
                if op.from_column is not None
                else _sql(_typed_literal(op.column, op.value))
            )
            sql = _template(
                "set_column_value",
                table=_table(op.table),
                column=ident(op.column.name),
                value=value,
            )
            return _statement(op, sql, f"set column {op.column.name!r} of {op.table.name!r}")
        case CopyRowsOp():
            sql = _template(
                "copy_rows",
                target=_table(op.target),
                source=_table(op.source),
                columns=[ident(c) for c in op.columns],
            )
            return _statement(
                op, sql, f"copy the rows of {op.source.name!r} into {op.target.name!r}"
            )
        case CopyRowsToHistoryOp():
            return _statement(
                op,
                _copy_rows_to_history(op),
                f"copy the rows of {op.source.name!r} into history table {op.target.name!r}",
            )
        case HistoryColumnChangeOp():
            return _statement(
                op,
                _history_column_change(op),
                f"record the change of column {op.column.name!r} as history of {op.table.name!r}",
            )
        case KeepLatestVersionsOp():
            summary = f"keep the latest version per key of {op.table.name!r}"
            return _statement(op, _keep_latest_versions(op), summary)
        case RewriteToHistoryOp():
            summary = f"rewrite {op.table.name!r} as a history-mode table"
            return _statement(op, _rewrite_to_history(op), summary)
        case _:
            assert_never(op)


def _history_values(
    deleted: str | None, synced: str | None
) -> tuple[exp.Expr, exp.Expr, exp.Expr, exp.Expr]:
    """The first-version history values of a soft-delete row aliased ``SOURCE_ALIAS``, with the
    table's latest sync time as ``_M_LATEST`` of a one-row relation aliased ``_M_LATEST_ALIAS``:
    (that latest value, start, end, active)."""
    latest: exp.Expr = exp.CurrentTimestamp()
    if synced is not None:
        latest = exp.Coalesce(this=exp.Max(this=_col(synced)), expressions=[exp.CurrentTimestamp()])
    start: exp.Expr = _col(_M_LATEST, _M_LATEST_ALIAS)
    end: exp.Expr = _timestamp_text(HISTORY_MAX_TIMESTAMP)
    active: exp.Expr = exp.true()
    if deleted is not None:
        is_deleted = exp.Coalesce(this=_col(deleted, SOURCE_ALIAS), expressions=[exp.false()])
        minimum = _timestamp_text(HISTORY_MIN_TIMESTAMP)
        start = exp.Case(ifs=[exp.If(this=is_deleted.copy(), true=minimum.copy())], default=start)
        end = exp.Case(ifs=[exp.If(this=is_deleted.copy(), true=minimum.copy())], default=end)
        active = exp.not_(is_deleted.copy())
    return latest, start, end, active


def _copy_rows_to_history(op: CopyRowsToHistoryOp) -> str:
    latest, start, end, active = _history_values(op.deleted, op.synced)
    return _template(
        "copy_rows_to_history",
        target=_table(op.target),
        source=_table(op.source),
        s=ident(SOURCE_ALIAS),
        m=ident(_M_LATEST_ALIAS),
        columns=[_sql(_col(c, SOURCE_ALIAS)) for c in op.columns],
        start=ident(op.start),
        end=ident(op.end),
        active=ident(op.active),
        start_value=_sql(start),
        end_value=_sql(end),
        active_value=_sql(active),
        latest=ident(_M_LATEST),
        latest_value=_sql(latest),
    )


def _rewrite_to_history(op: RewriteToHistoryOp) -> str:
    latest, start, end, active = _history_values(op.deleted, op.synced)
    # The key gains ``start``: an identifier field must be NOT NULL, and the runtime keeps the
    # query's nullability (the fallback is never used: every branch of ``start`` is non-NULL).
    start = spark_iceberg.non_null(
        start, Column(name=op.start, type=DataType.UTC_DATETIME, primary_key=True)
    )
    return _template(
        "rewrite_to_history",
        table=_table(op.table),
        properties=_properties(op.properties),
        select=[_sql(_col(c.name, SOURCE_ALIAS)) for c in op.columns],
        s=ident(SOURCE_ALIAS),
        m=ident(_M_LATEST_ALIAS),
        start=ident(op.start),
        end=ident(op.end),
        active=ident(op.active),
        start_value=_sql(start),
        end_value=_sql(end),
        active_value=_sql(active),
        latest=ident(_M_LATEST),
        latest_value=_sql(latest),
    )


def _history_column_change(op: HistoryColumnChangeOp) -> str:
    ts = _timestamp(op.operation_timestamp)
    closed_end = _timestamp(op.operation_timestamp - timedelta(milliseconds=1))
    value = _typed_literal(op.column, op.value)
    insert_select = []
    for column in op.columns:
        if column.name == op.start:
            insert_select.append(_sql(_alias(ts.copy(), column.name)))
        elif column.name == op.column.name:
            insert_select.append(_sql(_alias(value.copy(), column.name)))
        else:
            insert_select.append(ident(column.name))
    open_where: exp.Expr = exp.and_(
        _col(op.active), exp.LT(this=_col(op.start), expression=ts.copy())
    )
    if op.only_non_null:
        open_where = exp.and_(
            open_where, exp.not_(exp.Is(this=_col(op.column.name), expression=exp.Null()))
        )
    at_ts = exp.EQ(this=_col(op.start), expression=ts.copy())
    change_action = exp.Case(
        ifs=[exp.If(this=at_ts.copy(), true=_text(_M_FIX))], default=_text(_M_CLOSE)
    )
    on = exp.and_(
        _keys_equal(
            [c for c in op.columns if c.name in (*op.key, op.start)], TARGET_ALIAS, SOURCE_ALIAS
        ),
        exp.NEQ(this=_col(_M_ACTION, SOURCE_ALIAS), expression=_text(_M_INSERT)),
    )
    close_assignments = [
        _sql(exp.EQ(this=_col(op.end, TARGET_ALIAS), expression=closed_end)),
        _sql(exp.EQ(this=_col(op.active, TARGET_ALIAS), expression=exp.false())),
    ]
    return _template(
        "history_column_change",
        table=_table(op.table),
        target=ident(TARGET_ALIAS),
        source=ident(SOURCE_ALIAS),
        insert_select=insert_select,
        plain_select=[ident(c.name) for c in op.columns],
        insert=string_literal(_M_INSERT),
        close=string_literal(_M_CLOSE),
        action=ident(_M_ACTION),
        open_where=_sql(open_where),
        change_action=_sql(change_action),
        change_where=_sql(exp.or_(open_where.copy(), at_ts.copy())),
        on=_sql(on),
        source_action=_sql(_col(_M_ACTION, SOURCE_ALIAS)),
        close_assignments=close_assignments,
        fix_assignment=_sql(
            exp.EQ(this=_col(op.column.name, TARGET_ALIAS), expression=value.copy())
        ),
        insert_columns=[ident(c.name) for c in op.columns],
        insert_values=[_sql(_col(c.name, SOURCE_ALIAS)) for c in op.columns],
    )


def _keep_latest_versions(op: KeepLatestVersionsOp) -> str:
    key_and_start = [*op.key, op.start]
    on = exp.and_(
        *(
            exp.EQ(this=_col(name, TARGET_ALIAS), expression=_col(name, SOURCE_ALIAS))
            for name in key_and_start
        )
    )
    deleted = exp.not_(exp.Coalesce(this=_col(op.active, SOURCE_ALIAS), expressions=[exp.false()]))
    return _template(
        "keep_latest_versions",
        table=_table(op.table),
        target=ident(TARGET_ALIAS),
        source=ident(SOURCE_ALIAS),
        key=[ident(k) for k in op.key],
        start=ident(op.start),
        active=ident(op.active),
        rank=ident(_M_RANK),
        on=_sql(on),
        source_rank=_sql(_col(_M_RANK, SOURCE_ALIAS)),
        deleted_assignment=_sql(exp.EQ(this=_col(op.deleted, TARGET_ALIAS), expression=deleted)),
    )


# --- AlterTable (schema evolution) ------------------------------------------------------------

_A_DUPLICATES: Final = "__sd_duplicate_keys"


def _stored_value(change: ColumnChange) -> exp.Expr:
    """The column's stored value (a typed NULL for a new column)."""
    if change.source is None:
        return exp.cast(exp.Null(), spark_iceberg.sql_type(change.target))
    return _col(change.source.name)


def _converted(change: ColumnChange) -> exp.Expr:
    if change.source is None:
        return _stored_value(change)
    return spark_iceberg.convert(_col(change.source.name), change.source, change.target)


def conversion_checks(op: CheckConversionsOp) -> tuple[ColumnChange, ...]:
    """The conversions the CheckConversionsOp query reports on (two outputs each), in order."""
    return tuple(
        c
        for c in op.conversions
        if c.source is not None
        and spark_iceberg.unconvertible(_col(c.source.name), c.source, c.target) is not None
    )


def _alter_sql(
    op: AlterColumnTypeOp | DropNotNullOp | CheckConversionsOp | CheckUniqueKeyOp | RewriteTableOp,
) -> Statement:
    match op:
        case AlterColumnTypeOp():
            sql = _template(
                "alter_column_type",
                table=_table(op.table),
                column=ident(op.column.name),
                type=_sql(spark_iceberg.sql_type(op.column)),
            )
            summary = (
                f"widen column {op.column.name!r} of {op.table.name!r} to "
                f"{_sql(spark_iceberg.sql_type(op.column))}"
            )
            return _statement(op, sql, summary)
        case DropNotNullOp():
            sql = _template("drop_not_null", table=_table(op.table), column=ident(op.column))
            return _statement(op, sql, f"make column {op.column!r} of {op.table.name!r} nullable")
        case CheckConversionsOp():
            outputs = []
            for index, change in enumerate(conversion_checks(op)):
                assert change.source is not None
                raw = _col(change.source.name)
                bad = spark_iceberg.unconvertible(raw, change.source, change.target)
                assert bad is not None
                bad = exp.and_(exp.not_(exp.Is(this=raw.copy(), expression=exp.Null())), bad)
                sample = exp.Min(
                    this=exp.Case(
                        ifs=[exp.If(this=bad.copy(), true=exp.cast(raw.copy(), "STRING"))]
                    )
                )
                outputs.append(_sql(_alias(exp.func("COUNT_IF", bad), f"bad_count_{index}")))
                outputs.append(_sql(_alias(sample, f"bad_value_{index}")))
            for index, change in enumerate(op.not_null):
                # The stored value: converting a non-NULL value never yields NULL (ANSI).
                is_null = exp.Is(this=_stored_value(change), expression=exp.Null())
                outputs.append(_sql(_alias(exp.func("COUNT_IF", is_null), f"null_count_{index}")))
            if not outputs:
                outputs.append(_sql(_alias(exp.Literal.number(0), "check_none")))
            sql = _template("check_conversions", table=_table(op.table), outputs=outputs)
            return _statement(op, sql, f"check the stored values of {op.table.name!r} convert")
        case CheckUniqueKeyOp():
            sql = _template(
                "check_unique_key",
                table=_table(op.table),
                key=[_sql(_converted(c)) for c in op.key],
                alias=ident(_A_DUPLICATES),
            )
            return _statement(op, sql, f"check the new key of {op.table.name!r} is unique")
        case RewriteTableOp():
            select = []
            for change in op.columns:
                value = _converted(change)
                if change.target.primary_key:
                    value = spark_iceberg.non_null(value, change.target)
                select.append(_sql(_alias(value, change.target.name)))
            sql = _template(
                "rewrite_table",
                table=_table(op.table),
                properties=_properties(op.properties),
                select=select,
            )
            return _statement(op, sql, f"rewrite {op.table.name!r} with the new columns")
        case _:
            assert_never(op)
