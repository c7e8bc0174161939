"""Typed decoding of one batch file: Fivetran's text values -> typed Arrow columns.

Every column becomes an Arrow array of the type the table stores (pyarrow's vectorised C++
casts); the null sentinel becomes a real NULL and the unmodified sentinel its own boolean mask
column (``ir.unmodified_column``), so Spark reads typed columns, as the bare engine would. This
is also the value check: a value that does not fit its column fails the request with file, data
row, column and type named (never the value), before anything is written.

Accepted text, per Fivetran type (where the wire format allows more than Fivetran writes, the
Spark ANSI cast the destination used before is the reference):

* BOOLEAN: ``true`` / ``false``, any letter case (Spark also took ``yes``, ``t``, ``1``: refused);
* SHORT / INT / LONG: decimal digits with an optional ``-``; out of range fails;
* DECIMAL(p, s): plain or scientific notation; more than ``p - s`` integer digits, or
  fractional digits beyond ``s`` that are not zeros, fail (Spark's CAST rounded them away);
* FLOAT / DOUBLE: Java's text; a finite number too large for the type fails (Spark made it
  Infinity), only text spelling infinity becomes infinity;
* NAIVE_DATE ``YYYY-MM-DD`` (impossible dates fail); NAIVE_DATETIME without and UTC_DATETIME
  with an optional zone (``Z``/``+hh:mm``; none means UTC): 0-9 fractional digits, truncated to
  microseconds;
* NAIVE_TIME ``HH:MM[:SS[.f{1,9}]]`` (kept as text); BINARY base64, or the UTF-8 bytes of text
  that is not base64 (the destination tester copies JSON strings verbatim);
* STRING / XML / JSON: as is.

Runtime layer: no pyspark here.
"""

from __future__ import annotations

import binascii
import decimal
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, assert_never

import pyarrow as pa
import pyarrow.compute as pc

from spark_destination.core.errors import BatchFileError, ValueConversionError
from spark_destination.core.model import NAIVE_TIME_PATTERN, Column, DataType, FileKind
from spark_destination.planner.ir import RowOp, unmodified_column

__all__ = ["ROW_OP", "DecodeSpec", "arrow_type", "decode_file"]

ROW_OP: Final = {
    FileKind.REPLACE: RowOp.UPSERT,
    FileKind.UPDATE: RowOp.UPDATE,
    FileKind.DELETE: RowOp.DELETE,
    FileKind.EARLIEST_START: RowOp.EARLIEST_START,
}

# Spark/Iceberg keep microseconds: extra fractional digits (Fivetran sends up to 9) are cut.
_EXTRA_FRACTION: Final = r"(\.[0-9]{6})[0-9]{1,3}"
# A UTC_DATETIME without a zone is UTC (Spark's session zone was UTC for the same text).
_NO_ZONE: Final = r"^([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+)$"
_DATE_ONLY: Final = r"^([0-9]{4}-[0-9]{2}-[0-9]{2})$"
_DECIMAL_TEXT: Final = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DECIMAL_CONTEXT: Final = decimal.Context(prec=200)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeSpec:
    """What the decoder needs to know about a request's columns and sentinels."""

    columns: tuple[Column, ...]
    key: tuple[str, ...]
    # None when the producer set no sentinel: then no value is special.
    null_string: str | None
    unmodified_string: str | None
    # Columns that must hold a real value (neither sentinel) on rows of the given operations.
    required: tuple[tuple[str, tuple[RowOp, ...]], ...] = ()
    # Each column's declared SQL type for messages, e.g. ``DECIMAL(10, 2)`` (the renderer's,
    # so the runtime needs no dialect); a column without one is named by its Fivetran type.
    type_texts: tuple[tuple[str, str], ...] = ()

    @property
    def masked(self) -> tuple[str, ...]:
        """Columns that get an unmodified mask: every non-key column, when there is a sentinel."""
        if self.unmodified_string is None:
            return ()
        return tuple(c.name for c in self.columns if c.name not in self.key)

    def schema(self) -> pa.Schema:
        """The typed table ``decode_file`` returns."""
        return pa.schema(
            [
                *(pa.field(c.name, arrow_type(c)) for c in self.columns),
                *(pa.field(unmodified_column(n), pa.bool_(), nullable=False) for n in self.masked),
            ]
        )


def arrow_type(column: Column) -> pa.DataType:
    """The Arrow type a column is staged as (Spark reads it as the column's SQL type)."""
    match column.type:
        case DataType.BOOLEAN:
            return pa.bool_()
        case DataType.SHORT:
            return pa.int16()
        case DataType.INT:
            return pa.int32()
        case DataType.LONG:
            return pa.int64()
        case DataType.DECIMAL:
            params = column.decimal_params
            return pa.decimal128(params.precision, params.scale)
        case DataType.FLOAT:
            return pa.float32()
        case DataType.DOUBLE:
            return pa.float64()
        case DataType.NAIVE_DATE:
            return pa.date32()
        case DataType.NAIVE_DATETIME:
            return pa.timestamp("us")
        case DataType.UTC_DATETIME:
            return pa.timestamp("us", tz="UTC")
        case DataType.BINARY:
            return pa.binary()
        case DataType.STRING | DataType.XML | DataType.JSON | DataType.NAIVE_TIME:
            return pa.string()
        case DataType.UNSPECIFIED:
            raise ValueError(f"column {column.name!r} has no data type (UNSPECIFIED)")
        case _:
            assert_never(column.type)


def decode_file(raw: pa.Table, *, spec: DecodeSpec, kind: FileKind, path: str) -> pa.Table:
    """The typed table (``spec.schema()``) of one file parsed into non-null string columns.

    ``raw`` holds text columns (CSV; sentinels are interpreted) or typed ones (Parquet: NULL is
    NULL, nothing is unmodified). Columns absent from the file are NULL, or unmodified in update
    files. Raises
    ``ValueConversionError`` naming every column with a value that does not fit (its first
    such data row), the file and the expected type; never the value.
    """
    missing_key = [name for name in spec.key if name not in raw.column_names]
    if missing_key:
        listed = ", ".join(repr(name) for name in missing_key)
        raise BatchFileError(
            f"batch file '{path}' lacks primary key column(s) {listed} in its header: every "
            "row must name its key"
        )
    rows = raw.num_rows
    masked = set(spec.masked)
    arrays: list[pa.Array] = []
    masks: dict[str, pa.Array] = {}
    problems: list[str] = []
    for column in spec.columns:
        # Chunked as parsed: every step below works per chunk (combining would copy the text).
        text = raw.column(column.name) if column.name in raw.column_names else None
        try:
            typed, unmodified, problem = _decode_column(text, rows, column, spec, kind)
        except WrongColumnType as wrong:
            raise BatchFileError(
                f"batch file '{path}' stores column {column.name!r} as {wrong.source}, which "
                f"cannot hold Fivetran type {column.type.name} (expected "
                f"{arrow_type(column)} or text)"
            ) from None
        if problem is not None:
            problems.append(_describe(column, spec, kind, path, *problem))
        arrays.append(typed)
        if column.name in masked:
            masks[column.name] = unmodified
    if problems:
        raise ValueConversionError("batch values do not fit the table: " + "; ".join(problems))
    return pa.Table.from_arrays([*arrays, *masks.values()], schema=spec.schema())


def _describe(
    column: Column, spec: DecodeSpec, kind: FileKind, path: str, index: int, expected: str
) -> str:
    sql_type = dict(spec.type_texts).get(column.name, column.type.name)
    return (
        f"column {column.name!r} ({sql_type}) in {kind.value} file '{path}', "
        f"data row {index + 1}: expected {expected}"
    )


def _decode_column(
    text: pa.ChunkedArray | None, rows: int, column: Column, spec: DecodeSpec, kind: FileKind
) -> tuple[pa.Array, pa.Array, tuple[int, str] | None]:
    """(typed values, unmodified mask, first problem as (row index, expectation) or None)."""
    target = arrow_type(column)
    if text is None:
        unmodified = kind is FileKind.UPDATE and spec.unmodified_string is not None
        typed = pa.nulls(rows, target)
        mask = pa.repeat(pa.scalar(unmodified), rows) if rows else pa.array([], pa.bool_())
        if rows and (column.name in spec.key or _required(spec, column.name, kind)):
            return typed, mask, (0, _expectation(column, spec, kind))
        return typed, mask, None
    if not pa.types.is_string(text.type) and not pa.types.is_large_string(text.type):
        return _decode_typed_column(text, column, spec, kind)
    # Real NULLs (Parquet; CSV's null sentinel in runtime.batch.typed_csv) are NULL, never
    # unmodified.
    is_null_text = _equals(text, spec.null_string, missing=False)
    is_null = _or(is_null_text, _real_nulls(text))
    is_unmodified = _equals(text, spec.unmodified_string, missing=False)
    special = _or(is_null, is_unmodified)
    unmodified_mask = is_unmodified if is_unmodified is not None else _all_false(rows)
    if special is not None and (column.name in spec.key or _required(spec, column.name, kind)):
        first = _first_true(special)
        if first is not None:
            return (
                pa.nulls(rows, target),
                unmodified_mask,
                (first, _expectation(column, spec, kind)),
            )
    # Only a sentinel's text must become NULL: without one, skip copying the column.
    sentinels = _or(is_null_text, is_unmodified)
    if sentinels is not None and pc.any(sentinels).as_py():
        text = pc.if_else(special, pa.scalar(None, pa.string()), text)
    typed, bad = _convert(text, column)
    problem = None if bad is None else (bad, f"a value of type {column.type.name}")
    return typed, unmodified_mask, problem


def _decode_typed_column(
    values: pa.Array, column: Column, spec: DecodeSpec, kind: FileKind
) -> tuple[pa.Array, pa.Array, tuple[int, str] | None]:
    """A typed column (Parquet, or runtime.batch.typed_csv): NULL is NULL, nothing is unmodified."""
    unmodified = _all_false(len(values))
    if column.name in spec.key or _required(spec, column.name, kind):
        first = _first_true(pc.is_null(values))
        if first is not None:
            missing = (first, _expectation(column, spec, kind))
            return pa.nulls(len(values), arrow_type(column)), unmodified, missing
    typed, bad = _convert_typed(values, column)
    problem = None if bad is None else (bad, f"a value of type {column.type.name}")
    return typed, unmodified, problem


def _convert_typed(values: pa.Array, column: Column) -> tuple[pa.Array, int | None]:
    """A typed (non-text) column as ``column``'s Arrow type: same family only, range-checked."""
    target = arrow_type(column)
    source = values.type
    if source == target:
        return values, None
    if not _same_family(source, target):
        raise WrongColumnType(column, source)
    typed, bad = _cast_or_locate(values, target)
    if bad is None and pa.types.is_floating(target):
        overflow = pc.and_(pc.is_inf(typed), pc.invert(pc.is_inf(values)))
        bad = _first_true_or_none(overflow)
    return typed, bad


def _same_family(source: pa.DataType, target: pa.DataType) -> bool:
    families: tuple[Callable[[pa.DataType], bool], ...] = (
        pa.types.is_boolean,
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_decimal,
        pa.types.is_date,
        pa.types.is_timestamp,
        lambda t: (
            pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
        ),
    )
    if pa.types.is_decimal(target) and pa.types.is_integer(source):
        return True
    return any(family(source) and family(target) for family in families)


class WrongColumnType(Exception):
    """A typed file column whose type cannot hold the table column's values at all."""

    def __init__(self, column: Column, source: pa.DataType) -> None:
        super().__init__(column.name)
        self.column = column
        self.source = source


def _required(spec: DecodeSpec, name: str, kind: FileKind) -> bool:
    ops = next((ops for column, ops in spec.required if column == name), ())
    return ROW_OP[kind] in ops


def _expectation(column: Column, spec: DecodeSpec, kind: FileKind) -> str:
    if column.name in spec.key:
        return "a non-NULL key value"
    ops = next(ops for name, ops in spec.required if name == column.name)
    return (
        f"a value of type {column.type.name} (required in "
        + "/".join(o.value for o in ops)
        + " rows)"
    )


def _equals(text: pa.Array, sentinel: str | None, *, missing: bool) -> pa.Array | None:
    """Where ``text`` is ``sentinel``; ``missing`` on NULL rows."""
    if sentinel is None:
        return None
    equal = pc.equal(text, pa.scalar(sentinel, pa.string()))
    return pc.fill_null(equal, missing) if text.null_count else equal


def _real_nulls(text: pa.Array) -> pa.Array | None:
    return pc.is_null(text) if text.null_count else None


def _or(left: pa.Array | None, right: pa.Array | None) -> pa.Array | None:
    if left is None or right is None:
        return left if right is None else right
    return pc.or_(left, right)


def _all_false(rows: int) -> pa.Array:
    return pa.repeat(pa.scalar(False), rows) if rows else pa.array([], pa.bool_())


def _first_true(mask: pa.Array) -> int | None:
    index = pc.index(mask, pa.scalar(True)).as_py()
    return None if index is None or index < 0 else int(index)


# --- Per-type conversion: (typed array, index of the first value that does not fit) ----------


def _convert(values: pa.Array, column: Column) -> tuple[pa.Array, int | None]:
    """``values`` (strings, NULL where a sentinel was) as ``column``'s Arrow type."""
    target = arrow_type(column)
    match column.type:
        case DataType.STRING | DataType.XML | DataType.JSON:
            return values, None
        case DataType.NAIVE_TIME:
            fits = pc.match_substring_regex(values, NAIVE_TIME_PATTERN)
            return values, _first_false(fits)
        case DataType.BOOLEAN:
            lower = pc.utf8_lower(values)
            true = pc.equal(lower, "true")
            fits = pc.or_(true, pc.equal(lower, "false"))
            return true, _first_false(fits)
        case DataType.SHORT | DataType.INT | DataType.LONG | DataType.NAIVE_DATE:
            return _cast_or_locate(values, target)
        case DataType.DECIMAL:
            try:
                return pc.cast(values, target), None
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                # Scientific notation, trailing zeros past the scale, or a value that does not fit.
                return _decimal_rounded(values, target)
        case DataType.FLOAT | DataType.DOUBLE:
            typed, bad = _cast_or_locate(values, target)
            if bad is not None or not pc.any(pc.is_inf(typed)).as_py():
                return typed, bad
            overflow = pc.and_(
                pc.is_inf(typed), pc.invert(pc.match_substring(values, "inf", ignore_case=True))
            )
            return typed, _first_true_or_none(overflow)
        case DataType.NAIVE_DATETIME:
            return _timestamp(values, target, zone=False)
        case DataType.UTC_DATETIME:
            return _timestamp(values, target, zone=True)
        case DataType.BINARY:
            return _binary(values), None
        case DataType.UNSPECIFIED:
            raise ValueError(f"column {column.name!r} has no data type (UNSPECIFIED)")
        case _:
            assert_never(column.type)


def _first_false(fits: pa.Array) -> int | None:
    """The first row where ``fits`` is false (NULL, a sentinel's row, fits)."""
    return _first_true_or_none(pc.invert(fits))


def _first_true_or_none(mask: pa.Array) -> int | None:
    return _first_true(pc.fill_null(mask, False))


def _cast_or_locate(
    values: pa.Array, target: pa.DataType, cast: Callable[[pa.Array], pa.Array] | None = None
) -> tuple[pa.Array, int | None]:
    """Cast; when the cast fails, find the first failing row by bisection (log n casts)."""
    convert = cast or (lambda part: pc.cast(part, target))
    try:
        return convert(values), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass

    def fails(start: int, stop: int) -> bool:
        try:
            convert(values.slice(start, stop - start))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return True
        return False

    low, high = 0, len(values)  # [low, high) holds a failing row
    while high - low > 1:
        middle = (low + high) // 2
        if fails(low, middle):
            high = middle
        else:
            low = middle
    return pa.nulls(len(values), target), low


def _timestamp(values: pa.Array, target: pa.DataType, *, zone: bool) -> tuple[pa.Array, int | None]:
    try:
        return pc.cast(values, target), None
    except pa.ArrowInvalid:
        pass

    def normalised(part: pa.Array) -> pa.Array:
        text = pc.replace_substring_regex(part, _EXTRA_FRACTION, r"\1")
        if zone:
            text = pc.replace_substring_regex(text, _DATE_ONLY, r"\1T00:00:00Z")
            text = pc.replace_substring_regex(text, _NO_ZONE, r"\1Z")
        return pc.cast(text, target)

    return _cast_or_locate(values, target, normalised)


def _decimal_rounded(values: pa.Array, target: pa.Decimal128Type) -> tuple[pa.Array, int | None]:
    """The slow path: Python decimals; a value must fit the scale exactly (``1.500`` fits
    DECIMAL(p, 2), ``1.005`` does not: Spark's CAST rounded it) and the precision."""
    quantum = decimal.Decimal(1).scaleb(-target.scale)
    limit = decimal.Decimal(10) ** (target.precision - target.scale)
    out: list[decimal.Decimal | None] = []
    for index, text in enumerate(values.to_pylist()):
        if text is None:
            out.append(None)
            continue
        if not _DECIMAL_TEXT.fullmatch(text):
            return pa.nulls(len(values), target), index
        exact = decimal.Decimal(text)
        try:  # an exponent like 1E+99999 cannot be quantized: it is far too large anyway
            value = exact.quantize(quantum, context=_DECIMAL_CONTEXT)
        except decimal.InvalidOperation:
            return pa.nulls(len(values), target), index
        # A value is stored exactly or refused: rounding away digits would change it silently.
        if value != exact or abs(value) >= limit:
            return pa.nulls(len(values), target), index
        out.append(value)
    return pa.array(out, target), None


def _binary(values: pa.Array) -> pa.Array:
    """Base64 text decoded; text that is not base64 is stored as its UTF-8 bytes."""
    out: list[bytes | None] = []
    for text in values.to_pylist():
        if text is None:
            out.append(None)
            continue
        try:
            out.append(binascii.a2b_base64(text, strict_mode=True))
        except (binascii.Error, ValueError):
            out.append(text.encode())
    return pa.array(out, pa.binary())
