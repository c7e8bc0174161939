"""How a raw staged string becomes a typed value, and how a stored value converts.

Staged batch values are raw strings; these rules say how each becomes a value of its column's
type: strictly for the write, and as a predicate for the pre-write check that names the first
value that does not fit. Fragments are sqlglot expressions built for a dialect (its type
table and storage rules); they become text only in the lowering modules. Both dialects run on
Spark's SQL engine, so the functions are shared; what differs is data on the dialect, read
through the small ``TypeRules`` protocol below (so this module imports no dialect).
"""

from __future__ import annotations

from typing import Final, Protocol, assert_never

from sqlglot import exp

from spark_destination.core.model import NAIVE_TIME_PATTERN, Column, DataType


class TypeRules(Protocol):
    """What these rules read of a dialect (``dialects.base.Dialect`` has it): its declared
    types and its storage rules."""

    def sql_type(self, column: Column) -> exp.DataType: ...

    def same_storage(self, source: Column, target: Column) -> bool: ...

    def widens_in_place(self, source: Column, target: Column) -> bool: ...


_TEXT_TYPES: Final = frozenset({DataType.STRING, DataType.XML, DataType.JSON, DataType.NAIVE_TIME})


def try_cast(dialect: TypeRules, raw: exp.Expr, column: Column) -> exp.Expr:
    # safe=True is what makes sqlglot print TRY_CAST rather than CAST for Spark.
    return exp.TryCast(this=raw.copy(), to=dialect.sql_type(column), safe=True)


def decode(dialect: TypeRules, raw: exp.Expr, column: Column) -> exp.Expr:
    """The value of the staged raw string ``raw`` in ``column``'s type; fails on a bad value.

    ANSI mode (set on the session) makes every CAST raise instead of returning NULL.
    """
    if column.type in _TEXT_TYPES:
        return raw.copy()
    if column.type is DataType.BINARY:
        # Fivetran sends base64. The destination tester copies the JSON text verbatim (e.g.
        # "[B@7d4991ad", which is not base64), so text that is not base64 is stored as its UTF-8
        # bytes instead of failing every tester run.
        return exp.Coalesce(
            this=exp.func("TRY_TO_BINARY", raw.copy(), exp.Literal.string("base64")),
            expressions=[exp.func("ENCODE", raw.copy(), exp.Literal.string("UTF-8"))],
        )
    return exp.cast(raw.copy(), dialect.sql_type(column))


def unrepresentable(
    dialect: TypeRules, raw: exp.Expr, column: Column, *, in_check: bool = False
) -> exp.Expr | None:
    """A predicate true for text ``decode`` would accept without error but must refuse.

    None for types where ``decode`` itself fails on every bad value (ANSI casts). Inside a
    write the predicate casts strictly (a value that is not a number fails the statement, as
    ``decode`` would); a check query (``in_check``) uses TRY_CAST and reports the row instead.
    """
    match column.type:
        case DataType.NAIVE_TIME:
            # Stored as text, so nothing else checks the format.
            return exp.not_(
                exp.RegexpLike(this=raw.copy(), expression=exp.Literal.string(NAIVE_TIME_PATTERN))
            )
        case DataType.FLOAT | DataType.DOUBLE:
            # Spark turns an out-of-range number into +-Infinity without an error; only text
            # that spells infinity may become infinity.
            infinite = exp.EQ(
                this=exp.Abs(
                    this=try_cast(dialect, raw, column)
                    if in_check
                    else exp.cast(raw.copy(), dialect.sql_type(column))
                ),
                expression=exp.cast(exp.Literal.string("Infinity"), "DOUBLE"),
            )
            spelled = exp.Like(
                this=exp.Lower(this=raw.copy()), expression=exp.Literal.string("%inf%")
            )
            return exp.and_(infinite, exp.not_(spelled))
        case _:
            return None


def invalid(dialect: TypeRules, raw: exp.Expr, column: Column) -> exp.Expr | None:
    """A predicate true when ``raw`` (known not to be a sentinel) cannot be stored in ``column``.

    None when every string is acceptable (text and binary columns).
    """
    match column.type:
        case DataType.STRING | DataType.XML | DataType.JSON | DataType.BINARY:
            return None
        case DataType.NAIVE_TIME:
            return unrepresentable(dialect, raw, column, in_check=True)
        case DataType.FLOAT | DataType.DOUBLE:
            refused = unrepresentable(dialect, raw, column, in_check=True)
            assert refused is not None
            return exp.or_(
                exp.Is(this=try_cast(dialect, raw, column), expression=exp.Null()), refused
            )
        case (
            DataType.BOOLEAN
            | DataType.SHORT
            | DataType.INT
            | DataType.LONG
            | DataType.DECIMAL
            | DataType.NAIVE_DATE
            | DataType.NAIVE_DATETIME
            | DataType.UTC_DATETIME
        ):
            return exp.Is(this=try_cast(dialect, raw, column), expression=exp.Null())
        case DataType.UNSPECIFIED:
            raise ValueError(f"column {column.name!r} has no data type (UNSPECIFIED)")
        case _:
            assert_never(column.type)


# --- Column type changes (AlterTable) -------------------------------------------------------

_NUMERIC: Final = frozenset(
    {
        DataType.BOOLEAN,
        DataType.SHORT,
        DataType.INT,
        DataType.LONG,
        DataType.DECIMAL,
        DataType.FLOAT,
        DataType.DOUBLE,
    }
)
_EXACT: Final = frozenset({DataType.BOOLEAN, DataType.SHORT, DataType.INT, DataType.LONG})
_TEMPORAL: Final = frozenset({DataType.NAIVE_DATE, DataType.NAIVE_DATETIME, DataType.UTC_DATETIME})


def convertible(source: Column, target: Column) -> bool:
    """Whether stored ``source`` values can be converted to ``target`` by a rewrite (row by
    row, a value may still fail: see ``unconvertible``). ``Dialect.convertible`` adds the
    changes its table format makes without one."""
    if source.type in _TEXT_TYPES:
        return True  # the batch decoding of text applies (what a WriteBatch would store)
    if target.type in _TEXT_TYPES:
        return target.type is not DataType.NAIVE_TIME
    if source.type in _NUMERIC and target.type in _NUMERIC:
        return True
    return source.type in _TEMPORAL and target.type in _TEMPORAL


def convert(dialect: TypeRules, value: exp.Expr, source: Column, target: Column) -> exp.Expr:
    """The stored ``source`` value ``value`` as a ``target`` value (ANSI: fails on a bad one)."""
    if dialect.same_storage(source, target):
        return value.copy()
    if source.type in _TEXT_TYPES:
        return decode(dialect, value, target)
    if target.type in _TEXT_TYPES and source.type is DataType.BINARY:
        return exp.func("BASE64", value.copy())
    return exp.cast(value.copy(), dialect.sql_type(target))


def unconvertible(
    dialect: TypeRules, value: exp.Expr, source: Column, target: Column
) -> exp.Expr | None:
    """A predicate true when the stored, non-NULL ``value`` cannot become a ``target`` value
    without an error or a loss (a fraction dropped, a time of day dropped, a finite number
    becoming infinite, a number other than 0/1 becoming a boolean); None when every value
    converts. Decimal scale reductions round, as Spark's CAST does."""
    if dialect.widens_in_place(source, target):
        return None
    if dialect.same_storage(source, target):
        if target.type is DataType.SHORT and source.type is not DataType.SHORT:
            return exp.Is(this=try_cast(dialect, value, target), expression=exp.Null())
        if target.type is DataType.NAIVE_TIME and source.type is not DataType.NAIVE_TIME:
            return invalid(dialect, value, target)
        return None
    if source.type in _TEXT_TYPES:
        return invalid(dialect, value, target)
    if target.type in _TEXT_TYPES:
        return None
    typed = try_cast(dialect, value, target)
    failed: exp.Expr = exp.Is(this=typed.copy(), expression=exp.Null())
    round_trip = exp.NEQ(
        this=exp.cast(typed.copy(), dialect.sql_type(source)), expression=value.copy()
    )
    if target.type in _EXACT and source.type is not DataType.BOOLEAN:
        if target.type is DataType.BOOLEAN or source.type not in _EXACT:
            failed = exp.or_(failed, round_trip)
    elif target.type is DataType.NAIVE_DATE and source.type is not DataType.NAIVE_DATE:
        failed = exp.or_(failed, round_trip)
    elif target.type is DataType.FLOAT:
        infinity = exp.cast(exp.Literal.string("Infinity"), "DOUBLE")
        became_infinite = exp.and_(
            exp.EQ(this=exp.Abs(this=exp.cast(typed.copy(), "DOUBLE")), expression=infinity),
            exp.NEQ(
                this=exp.Abs(this=exp.cast(value.copy(), "DOUBLE")), expression=infinity.copy()
            ),
        )
        failed = exp.or_(failed, became_infinite)
    return failed


def non_null(dialect: TypeRules, value: exp.Expr, target: Column) -> exp.Expr:
    """``value`` in a form Spark knows is never NULL, so a rewritten key column is NOT NULL.

    The fallback is never used: the rewrite runs only after a check found no NULL in the new
    key columns (and converting a non-NULL value fails rather than yielding NULL, ANSI mode).
    """
    # Each fallback is an expression Spark types exactly as the column and as NOT NULL
    # (measured: a CAST of a string or of an int to DECIMAL(p, s) would count as nullable).
    zero = exp.Literal.number(0)
    if target.type is DataType.BOOLEAN:
        fallback: exp.Expr = exp.false()
    elif target.type in _TEXT_TYPES:
        fallback = exp.Literal.string("")
    elif target.type is DataType.BINARY:
        fallback = exp.HexString(this="")
    elif target.type is DataType.DECIMAL:
        scale = target.decimal_params.scale
        fallback = exp.Literal.number("0." + "0" * scale)
    elif target.type is DataType.NAIVE_DATE:
        fallback = exp.func("DATE_FROM_UNIX_DATE", zero)
    elif target.type is DataType.NAIVE_DATETIME:
        fallback = exp.cast(exp.cast(zero, "TIMESTAMP"), dialect.sql_type(target))
    else:
        fallback = exp.cast(zero, dialect.sql_type(target))
    return exp.Coalesce(this=value.copy(), expressions=[fallback])
