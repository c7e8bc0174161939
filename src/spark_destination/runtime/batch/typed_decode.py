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
* STRING / XML / JSON: as is (at most ``max_lengths`` characters where a dialect declares a
  length: Iceberg never does).

A column is cast whole; only when that fails are its values checked one by one, in one
vectorised pass (``value_checks``), which finds every value that does not fit at once. The
first one fails the request; with ``bad_value_policy=null`` a *lenient* column (not a key,
required or Fivetran column: ``planner.bad_values``) keeps its rows instead, with NULL in
place of each value that does not fit (a too long text cut to its length), and each change is
reported (column, NULLED / TRUNCATED, reason, data rows) for the changes table.

Runtime layer: no pyspark here.
"""

from __future__ import annotations

import binascii
import decimal
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias, assert_never

import pyarrow as pa
import pyarrow.compute as pc

from spark_destination.core.errors import BatchFileError, ValueConversionError
from spark_destination.core.model import NAIVE_TIME_PATTERN, Column, DataType, FileKind
from spark_destination.planner.ir import RowOp, unmodified_column
from spark_destination.runtime.batch.arrow_threads import in_parallel
from spark_destination.runtime.batch.value_changes import Change, ColumnChanges
from spark_destination.runtime.batch.value_checks import (
    Misfit,
    Misfits,
    date_misfits,
    decimal_misfits,
    float_misfits,
    float_overflow,
    integer_misfits,
    locate_all,
    timestamp_misfits,
)

__all__ = ["ROW_OP", "DecodeSpec", "arrow_type", "decode_file"]

log = logging.getLogger(__name__)

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
# The digits of a 128-bit decimal (pyarrow scales a parsed value into it, unchecked).
_DECIMAL_DIGITS: Final = 38

# One column decoded: typed values, unmodified mask, its first problem as (row index,
# expectation) or None, the values changed instead in a lenient column or None.
Decoded: TypeAlias = tuple[pa.Array, pa.Array, tuple[int, str] | None, Misfits | None]


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
    # bad_value_policy=null: columns whose values that do not fit become NULL (a too long one
    # is cut to its length) and are reported through ``decode_file``'s ``changes``.
    lenient: tuple[str, ...] = ()
    # The most characters a value may have, per column (a dialect's VARCHAR(n)).
    max_lengths: tuple[tuple[str, int], ...] = ()

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


def decode_file(
    raw: pa.Table,
    *,
    spec: DecodeSpec,
    kind: FileKind,
    path: str,
    changes: list[ColumnChanges] | None = None,
) -> pa.Table:
    """The typed table (``spec.schema()``) of one file parsed into non-null string columns.

    ``raw`` holds text columns (CSV; sentinels are interpreted) or typed ones (Parquet: NULL is
    NULL, nothing is unmodified). Columns absent from the file are NULL, or unmodified in update
    files. Raises
    ``ValueConversionError`` naming every column with a value that does not fit (its first
    such data row), the file and the expected type; never the value. In ``spec.lenient``
    columns such values are NULL (too long ones cut) instead, each change appended to
    ``changes``, which such a spec requires.
    """
    if spec.lenient and changes is None:
        raise ValueError("a spec with lenient columns needs a list to report changes in")
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

    def decode(column: Column) -> Decoded:
        # Chunked as parsed: every step below works per chunk (combining would copy the text).
        text = raw.column(column.name) if column.name in raw.column_names else None
        return _decode_column(text, rows, column, spec, kind)

    # Columns are typed side by side (pyarrow's kernels release the GIL); their results, and a
    # column stored in a type that cannot hold it, are taken in column order, as one by one.
    decoded = in_parallel(decode, spec.columns, rows=rows)
    for column in spec.columns:
        try:
            typed, unmodified, problem, misfits = next(decoded)
        except WrongColumnType as wrong:
            raise BatchFileError(
                f"batch file '{path}' stores column {column.name!r} as {wrong.source}, which "
                f"cannot hold Fivetran type {column.type.name} (expected "
                f"{arrow_type(column)} or text)"
            ) from None
        if problem is not None:
            problems.append(_describe(column, spec, kind, path, *problem))
        if misfits is not None and changes is not None:
            changes.extend(_changes(column, spec, misfits))
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


def _sql_type(column: Column, spec: DecodeSpec) -> str:
    return dict(spec.type_texts).get(column.name, column.type.name)


def _reason(column: Column, spec: DecodeSpec, misfit: Misfit) -> str:
    """Why a value was changed, as what was expected (never the value)."""
    sql_type = _sql_type(column, spec)
    match misfit:
        case Misfit.INVALID if column.type is DataType.NAIVE_TIME:
            return "not a valid time of day (HH:MM[:SS[.fraction]])"
        case Misfit.INVALID:
            return f"not a valid {sql_type}"
        case Misfit.OVERFLOW:
            return f"{sql_type} overflow"
        case Misfit.SCALE:
            return f"more fractional digits than {sql_type} holds"
        case Misfit.LENGTH:
            return f"longer than {_max_length(spec, column.name)} characters"
        case _:
            assert_never(misfit)


def _changes(column: Column, spec: DecodeSpec, misfits: Misfits) -> list[ColumnChanges]:
    return [
        ColumnChanges(
            column=column.name,
            change=Change.TRUNCATED if misfit is Misfit.LENGTH else Change.NULLED,
            reason=_reason(column, spec, misfit),
            rows=pc.indices_nonzero(mask),
        )
        for misfit, mask in misfits.masks
    ]


def _max_length(spec: DecodeSpec, name: str) -> int | None:
    return next((limit for column, limit in spec.max_lengths if column == name), None)


def _settle(
    typed: pa.Array, misfits: Misfits | None, column: Column, spec: DecodeSpec
) -> tuple[pa.Array, tuple[int, str] | None, Misfits | None]:
    """A converted column's values, then either its first problem (a column that must not
    change: ``spec.lenient`` lacks it) or the changes made to it (NULL, or a too long text cut
    to its length)."""
    limit = _max_length(spec, column.name)
    if limit is not None and pa.types.is_string(typed.type):
        too_long = pc.greater(pc.utf8_length(typed), limit)
        if pc.any(too_long).as_py():
            typed = pc.if_else(too_long, pc.utf8_slice_codeunits(typed, 0, limit), typed)
            misfits = Misfits.of(*(misfits.masks if misfits else ()), (Misfit.LENGTH, too_long))
    if misfits is None:
        return typed, None, None
    if column.name in spec.lenient:
        return typed, None, misfits
    first = misfits.first()
    expected = f"a value of type {column.type.name}"
    if any(m is Misfit.LENGTH and mask[first].as_py() for m, mask in misfits.masks):
        expected = f"at most {limit} characters"
    return typed, (first, expected), None


def _decode_column(
    text: pa.ChunkedArray | None, rows: int, column: Column, spec: DecodeSpec, kind: FileKind
) -> Decoded:
    """One text (or typed) column of a file, decoded (``Decoded``)."""
    target = arrow_type(column)
    if text is None:
        unmodified = kind is FileKind.UPDATE and spec.unmodified_string is not None
        typed = pa.nulls(rows, target)
        mask = pa.repeat(pa.scalar(unmodified), rows) if rows else pa.array([], pa.bool_())
        if rows and (column.name in spec.key or _required(spec, column.name, kind)):
            return typed, mask, (0, _expectation(column, spec, kind)), None
        return typed, mask, None, None
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
                None,
            )
    # Only a sentinel's text must become NULL: without one, skip copying the column.
    sentinels = _or(is_null_text, is_unmodified)
    if sentinels is not None and pc.any(sentinels).as_py():
        text = pc.if_else(special, pa.scalar(None, pa.string()), text)
    typed, problem, misfits = _settle(*_convert(text, column), column, spec)
    return typed, unmodified_mask, problem, misfits


def _decode_typed_column(
    values: pa.Array, column: Column, spec: DecodeSpec, kind: FileKind
) -> Decoded:
    """A typed column (Parquet, or runtime.batch.typed_csv): NULL is NULL, nothing is unmodified."""
    unmodified = _all_false(len(values))
    if column.name in spec.key or _required(spec, column.name, kind):
        first = _first_true(pc.is_null(values))
        if first is not None:
            missing = (first, _expectation(column, spec, kind))
            return pa.nulls(len(values), arrow_type(column)), unmodified, missing, None
    typed, problem, misfits = _settle(*_convert_typed(values, column), column, spec)
    return typed, unmodified, problem, misfits


def _convert_typed(values: pa.Array, column: Column) -> tuple[pa.Array, Misfits | None]:
    """A typed (non-text) column as ``column``'s Arrow type: same family only, range-checked.
    Values that do not fit are NULL in the result and named by the misfits."""
    target = arrow_type(column)
    source = values.type
    if source == target:
        return values, None
    if not _same_family(source, target):
        raise WrongColumnType(column, source)
    try:
        typed, misfits = pc.cast(values, target), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Narrowing a typed column: rare (Fivetran writes each type as its own), so found
        # one slice at a time.
        bad = locate_all(values, lambda part: pc.cast(part, target))
        kind = Misfit.SCALE if _loses_scale(values, target) else Misfit.OVERFLOW
        misfits = Misfits.of((kind, bad))
        typed = pc.cast(_without(values, bad), target)
    if pa.types.is_floating(target):
        overflow = pc.and_(pc.is_inf(typed), pc.invert(pc.is_inf(values)))
        if pc.any(overflow).as_py():
            misfits = Misfits.of(*(misfits.masks if misfits else ()), (Misfit.OVERFLOW, overflow))
            typed = _without(typed, overflow)
    return typed, misfits


def _loses_scale(values: pa.Array, target: pa.DataType) -> bool:
    """A decimal column cast to a smaller scale (its misfits are digits the scale drops)."""
    return bool(
        pa.types.is_decimal(values.type)
        and pa.types.is_decimal(target)
        and values.type.scale > target.scale
    )


def _without(values: pa.Array, mask: pa.Array) -> pa.Array:
    """``values`` with NULL where ``mask`` is true."""
    return pc.if_else(mask, pa.scalar(None, values.type), values)


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


# --- Per-type conversion: (typed array, the values that do not fit) -------------------------
# The whole column is cast first: the usual, clean column costs that cast alone. Only when it
# fails does ``runtime.batch.value_checks`` find every value that does not fit in one
# vectorised pass; the column is then cast with those values NULL.


def _convert(values: pa.Array, column: Column) -> tuple[pa.Array, Misfits | None]:
    """``values`` (strings, NULL where a sentinel was) as ``column``'s Arrow type."""
    target = arrow_type(column)
    match column.type:
        case DataType.STRING | DataType.XML | DataType.JSON:
            return values, None
        case DataType.NAIVE_TIME:
            fits = pc.match_substring_regex(values, NAIVE_TIME_PATTERN)
            return _masked(values, Misfits.of((Misfit.INVALID, pc.invert(fits))))
        case DataType.BOOLEAN:
            lower = pc.utf8_lower(values)
            true = pc.equal(lower, "true")
            fits = pc.or_(true, pc.equal(lower, "false"))
            return _masked(true, Misfits.of((Misfit.INVALID, pc.invert(fits))))
        case DataType.SHORT | DataType.INT | DataType.LONG:
            return _checked_cast(values, target, lambda v: integer_misfits(v, target))
        case DataType.NAIVE_DATE:
            return _checked_cast(values, target, date_misfits)
        case DataType.DECIMAL:
            return _decimal(values, target)
        case DataType.FLOAT | DataType.DOUBLE:
            typed, misfits = _checked_cast(values, target, float_misfits)
            if not pc.any(pc.is_inf(typed)).as_py():
                return typed, misfits
            overflow = float_overflow(values, typed)
            masks = (*(misfits.masks if misfits else ()), (Misfit.OVERFLOW, overflow))
            return _masked(typed, Misfits.of(*masks))
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


def _masked(typed: pa.Array, misfits: Misfits | None) -> tuple[pa.Array, Misfits | None]:
    """``typed`` with NULL where a value does not fit."""
    return (typed, None) if misfits is None else (_without(typed, misfits.rows()), misfits)


def _checked_cast(
    values: pa.Array,
    target: pa.DataType,
    misfits_of: Callable[[pa.Array], Misfits | None],
) -> tuple[pa.Array, Misfits | None]:
    """Cast; when the cast fails, ``misfits_of`` names every value it refuses and the rest
    is cast."""
    try:
        return pc.cast(values, target), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    return _cast_without(values, target, misfits_of(values))


def _cast_without(
    values: pa.Array, target: pa.DataType, misfits: Misfits | None
) -> tuple[pa.Array, Misfits | None]:
    """Cast with the ``misfits`` NULL. Should a predicate have let a refused value through
    (the property tests say none does), those are found one slice at a time rather than
    failing the request."""
    kept = values if misfits is None else _without(values, misfits.rows())
    try:
        return pc.cast(kept, target), misfits
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        log.warning("a %s value check accepted a value its conversion refuses", target)
    missed = locate_all(kept, lambda part: pc.cast(part, target))
    misfits = Misfits.of(*(misfits.masks if misfits else ()), (Misfit.INVALID, missed))
    assert misfits is not None
    return pc.cast(_without(values, misfits.rows()), target), misfits


def normalised_instants(values: pa.Array, *, zone: bool) -> pa.Array:
    """Timestamp text as pyarrow's parser takes it: fractional digits past microseconds cut;
    for an instant (``zone``), a date alone is midnight UTC and no zone means UTC."""
    text = pc.replace_substring_regex(values, _EXTRA_FRACTION, r"\1")
    if zone:
        text = pc.replace_substring_regex(text, _DATE_ONLY, r"\1T00:00:00Z")
        text = pc.replace_substring_regex(text, _NO_ZONE, r"\1Z")
    return text


def _timestamp(
    values: pa.Array, target: pa.DataType, *, zone: bool
) -> tuple[pa.Array, Misfits | None]:
    """Cast; when that fails, the values pyarrow's parser refuses as they are (usually few)
    are normalised (``normalised_instants``), and those it still refuses do not fit."""
    try:
        return pc.cast(values, target), None
    except pa.ArrowInvalid:
        pass
    refused = timestamp_misfits(values, zone=zone)
    if refused is None:  # cannot be: the cast refused a value; the safety net decides
        return _cast_without(values, target, None)
    rows = refused.rows()
    flat = pa.concat_arrays(values.chunks) if isinstance(values, pa.ChunkedArray) else values
    normal = normalised_instants(flat.filter(rows), zone=zone)
    text = pc.replace_with_mask(flat, rows, normal)
    still = timestamp_misfits(normal, zone=zone)
    misfits = None
    if still is not None:
        misfits = Misfits.of((Misfit.INVALID, pc.replace_with_mask(rows, rows, still.rows())))
    return _cast_without(text, target, misfits)


def _decimal(values: pa.Array, target: pa.Decimal128Type) -> tuple[pa.Array, Misfits | None]:
    """A value is stored exactly or refused: ``1.500`` fits DECIMAL(p, 2), ``1.005`` does not
    (Spark's CAST rounded it), nor does a value with more than ``p - s`` integer digits.

    pyarrow's cast is trusted only where it is exact: it silently wraps a value whose digits
    overflow 128 bits once scaled (``12345678901234567890123`` into DECIMAL(38, 20) comes out
    as 234629342920435671.77) and rounds scientific notation far below the scale to 0. So a
    column holding scientific notation, or text longer than 38 - s characters (the fewest
    that can overflow), is checked value by value even when the cast succeeds."""
    try:
        typed = pc.cast(values, target)
        if _cast_exactly(values, target):
            return typed, None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Scientific notation, trailing zeros past the scale, or a value that does not fit.
        pass
    misfits = decimal_misfits(values, target, lambda text: decimal_misfit(text, target))
    kept = values if misfits is None else _without(values, misfits.rows())
    try:
        return pc.cast(kept, target), misfits
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Every value fits, but some text is beyond pyarrow's parser (e.g. more than 38
        # digits counting zeros that change nothing): Python's decimals, one by one.
        return _exact_decimals(kept, target), misfits


def _cast_exactly(values: pa.Array, target: pa.Decimal128Type) -> bool:
    """No text of the column is one pyarrow's decimal cast may get wrong (``_decimal``)."""
    if not len(values) or values.null_count == len(values):
        return True
    longest = pc.max(pc.utf8_length(values)).as_py()
    if longest > _DECIMAL_DIGITS - target.scale:
        return False
    return not pc.any(pc.match_substring(values, "e", ignore_case=True)).as_py()


def decimal_misfit(text: str, target: pa.Decimal128Type) -> Misfit | None:
    """Why one decimal text does not fit DECIMAL(p, s) exactly, or None (the exact rule)."""
    if not _DECIMAL_TEXT.fullmatch(text):
        return Misfit.INVALID
    exact = decimal.Decimal(text)
    try:  # an exponent like 1E+99999 cannot be quantized: it is far too large anyway
        value = exact.quantize(_quantum(target), context=_DECIMAL_CONTEXT)
    except decimal.InvalidOperation:
        return Misfit.OVERFLOW
    # A value is stored exactly or refused: rounding away digits would change it silently.
    if value != exact:
        return Misfit.SCALE
    if abs(value) >= decimal.Decimal(10) ** (target.precision - target.scale):
        return Misfit.OVERFLOW
    return None


def _quantum(target: pa.Decimal128Type) -> decimal.Decimal:
    return decimal.Decimal(1).scaleb(-target.scale)


def _exact_decimals(values: pa.Array, target: pa.Decimal128Type) -> pa.Array:
    """Decimal texts that all fit ``target`` exactly, as its values."""
    quantum = _quantum(target)
    return pa.array(
        [
            None
            if text is None
            else decimal.Decimal(text).quantize(quantum, context=_DECIMAL_CONTEXT)
            for text in values.to_pylist()
        ],
        target,
    )


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
