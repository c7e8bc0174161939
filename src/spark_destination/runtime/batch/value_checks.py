"""Which text each Fivetran type's conversion takes, as vectorised predicates over a column.

``typed_decode`` converts a column with one pyarrow cast; this module answers, for a column
whose cast failed, *which* rows do not fit and why, in one vectorised pass (regular
expressions, lengths, string comparisons and component arithmetic, all pyarrow kernels), so
that every bad value of a column is found at once: the first one names the row of the
request's failure (``bad_value_policy=fail``), all of them are NULLed and recorded (``null``).

Each predicate accepts exactly the text the conversion accepts (the property tests in
``tests/unit/test_value_checks.py`` compare them value by value with the cast):

* SHORT / INT / LONG: ``-?digits`` within the type's range (compared as digit strings, so any
  length works), or ``0x`` and at most 4 / 8 / 16 hex digits, which pyarrow's parser also
  takes (any such value wraps into range: two's complement);
* FLOAT / DOUBLE: the grammar of pyarrow's parser (``fast_float``): decimal or scientific
  notation, ``inf``/``infinity``/``nan`` in any letter case, ``nan(chars)``; a finite number
  that becomes infinite is an overflow;
* DECIMAL(p, s): plain notation is judged by its digits (more than ``p - s`` significant
  integer digits: overflow; significant fractional digits beyond ``s``: scale); scientific
  notation is judged value by value, as before (rare);
* NAIVE_DATE: ``YYYY-MM-DD`` of a real day (proleptic Gregorian, years 0000-9999);
* NAIVE_DATETIME / UTC_DATETIME (text as normalised by ``typed_decode``): the ISO-8601 forms
  pyarrow's parser takes, every component in range (a zone offset up to 23:59).

BOOLEAN and NAIVE_TIME keep their own checks in ``typed_decode``; text, JSON, XML and binary
take every value. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "Misfit",
    "Misfits",
    "date_misfits",
    "decimal_misfits",
    "float_misfits",
    "integer_misfits",
    "locate_all",
    "timestamp_misfits",
]


class Misfit(enum.Enum):
    """Why a value does not fit its column."""

    INVALID = "invalid"  # not a value of the type at all
    OVERFLOW = "overflow"  # of the type's family, beyond its range or precision
    SCALE = "scale"  # more fractional digits than the scale holds (storing would round)
    LENGTH = "length"  # longer than the column's declared length (a VARCHAR(n) column)


@dataclass(frozen=True, slots=True)
class Misfits:
    """The rows of one column whose values do not fit, by why: disjoint boolean masks without
    NULLs, each with at least one true row (chunked as the column may be)."""

    masks: tuple[tuple[Misfit, pa.Array], ...]

    @staticmethod
    def of(*masks: tuple[Misfit, pa.Array | None]) -> Misfits | None:
        """The non-empty ``masks`` (NULL counts as false; masks of one kind are joined), or
        None when no row misfits."""
        kept: dict[Misfit, pa.Array] = {}
        for misfit, mask in masks:
            if mask is None:
                continue
            filled = pc.fill_null(mask, False)
            if pc.any(filled).as_py():
                kept[misfit] = pc.or_(kept[misfit], filled) if misfit in kept else filled
        return Misfits(tuple(kept.items())) if kept else None

    def rows(self) -> pa.Array:
        """Where any value misfits."""
        combined = self.masks[0][1]
        for _, mask in self.masks[1:]:
            combined = pc.or_(combined, mask)
        return combined

    def first(self) -> int:
        """The first row whose value misfits."""
        return int(pc.index(self.rows(), pa.scalar(True)).as_py())


def _matches(values: pa.Array, pattern: str) -> pa.Array:
    """Where ``values`` match ``pattern`` (NULL where a value is NULL)."""
    return pc.match_substring_regex(values, pattern)


def _not(mask: pa.Array) -> pa.Array:
    return pc.invert(pc.fill_null(mask, True))


# --- Integers ---------------------------------------------------------------------------------

# (largest value, magnitude of the smallest, most hex digits) per staged integer type.
_INTEGER_BOUNDS: Final = {
    pa.int16(): ("32767", "32768", 4),
    pa.int32(): ("2147483647", "2147483648", 8),
    pa.int64(): ("9223372036854775807", "9223372036854775808", 16),
}


def integer_misfits(values: pa.Array, target: pa.DataType) -> Misfits | None:
    """Rows of a text column that ``pc.cast(values, target)`` refuses (an integer type)."""
    largest, smallest, hex_digits = _INTEGER_BOUNDS[target]
    decimal = _matches(values, r"^-?[0-9]+$")
    hexadecimal = _matches(values, "^0[xX][0-9a-fA-F]{1,%d}$" % hex_digits)  # noqa: UP031
    # The magnitude's significant digits, compared with the bound as equal-length text.
    digits = pc.replace_substring_regex(values, r"^-?0*", "")
    length = pc.utf8_length(digits)
    bound = pc.if_else(pc.starts_with(values, "-"), smallest, largest)
    in_range = pc.or_(
        pc.less(length, len(largest)),
        pc.and_(pc.equal(length, len(largest)), pc.less_equal(digits, bound)),
    )
    valid = pc.or_(pc.fill_null(decimal, False), pc.fill_null(hexadecimal, False))
    return Misfits.of(
        (Misfit.INVALID, pc.and_(pc.invert(valid), pc.is_valid(values))),
        (Misfit.OVERFLOW, pc.and_(pc.fill_null(decimal, False), _not(in_range))),
    )


# --- Floating point ---------------------------------------------------------------------------

FLOAT_TEXT: Final = (
    r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
    r"|(?i:inf(inity)?|nan(\([0-9a-z_]*\))?))$"
)


def float_misfits(values: pa.Array) -> Misfits | None:
    """Rows of a text column that pyarrow's float parser refuses (overflow: ``float_overflow``)."""
    return Misfits.of((Misfit.INVALID, _not(_matches(values, FLOAT_TEXT))))


def float_overflow(values: pa.Array, typed: pa.Array) -> pa.Array:
    """Where a finite number became infinite (only text spelling infinity may)."""
    spelled = pc.match_substring(values, "inf", ignore_case=True)
    return pc.and_(pc.is_inf(typed), _not(spelled))


# --- Decimals ---------------------------------------------------------------------------------

_DECIMAL_PLAIN: Final = r"^[+-]?(?P<whole>[0-9]*)(?:\.(?P<fraction>[0-9]*))?$"
_HAS_DIGIT: Final = r"[0-9]"
DECIMAL_SCIENTIFIC: Final = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+$"


def decimal_misfits(
    values: pa.Array,
    target: pa.Decimal128Type,
    judge: Callable[[str], Misfit | None],
) -> Misfits | None:
    """Rows of a text column that do not fit DECIMAL(p, s) exactly: plain notation by its
    digits, scientific notation value by value with ``judge`` (the exact rule)."""
    parts = pc.extract_regex(values, _DECIMAL_PLAIN)
    plain = pc.and_(pc.is_valid(parts), pc.fill_null(_matches(values, _HAS_DIGIT), False))
    whole = pc.replace_substring_regex(pc.struct_field(parts, "whole"), "^0+", "")
    fraction = pc.replace_substring_regex(pc.struct_field(parts, "fraction"), "0+$", "")
    scale = pc.and_(plain, pc.fill_null(pc.greater(pc.utf8_length(fraction), target.scale), False))
    too_long = pc.greater(pc.utf8_length(whole), target.precision - target.scale)
    overflow = pc.and_(pc.and_(plain, pc.invert(scale)), pc.fill_null(too_long, False))
    scientific = pc.fill_null(_matches(values, DECIMAL_SCIENTIFIC), False)
    invalid = pc.and_(pc.is_valid(values), pc.invert(pc.or_(plain, scientific)))
    masks = {Misfit.INVALID: invalid, Misfit.OVERFLOW: overflow, Misfit.SCALE: scale}
    if pc.any(scientific).as_py():
        masks = _judged(values, scientific, judge, masks)
    return Misfits.of(*masks.items())


def _judged(
    values: pa.Array,
    unsure: pa.Array,
    judge: Callable[[str], Misfit | None],
    masks: dict[Misfit, pa.Array],
) -> dict[Misfit, pa.Array]:
    """``masks`` with the ``unsure`` rows added where ``judge`` (one value at a time) says."""
    flat = _flat(values)
    where = pc.indices_nonzero(_flat(unsure)).to_numpy()
    verdicts = [judge(flat[int(i)].as_py()) for i in where]
    out = dict(masks)
    for misfit in Misfit:
        hits = [int(i) for i, verdict in zip(where, verdicts, strict=True) if verdict is misfit]
        if hits:
            mask = _mask(len(flat), hits)
            out[misfit] = pc.or_(_flat(out[misfit]), mask) if misfit in out else mask
    return out


def _flat(values: pa.Array) -> pa.Array:
    return pa.concat_arrays(values.chunks) if isinstance(values, pa.ChunkedArray) else values


def _mask(rows: int, hits: list[int]) -> pa.Array:
    """A boolean array of ``rows`` values, true at ``hits``."""
    mask = np.zeros(rows, dtype=bool)
    mask[hits] = True
    return pa.array(mask)


# --- Dates and instants -----------------------------------------------------------------------

_DATE: Final = r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
_TIME: Final = (
    r"(?:[T ](?P<hour>[0-9]{2})(?::(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})"
    r"(?:\.[0-9]{1,6})?)?)?)"
)
_ZONE: Final = r"(?P<zone>Z|(?P<sign>[+-])(?P<zone_hour>[0-9]{2})(?::?(?P<zone_minute>[0-9]{2}))?)"
# Month lengths of a common year, January first.
_MONTH_DAYS: Final = pa.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], pa.int32())


def _number(parts: pa.Array, name: str) -> pa.Array:
    """A numeric component of ``parts`` (a non-participating group, ``""``, is 0)."""
    text = pc.struct_field(parts, name)
    return pc.cast(pc.if_else(pc.equal(text, ""), "0", text), pa.int32())


def _real_day(parts: pa.Array) -> pa.Array:
    """Month 1-12 and a day of that month (proleptic Gregorian, as pyarrow: year 0000 is a
    leap year; any four-digit year is taken)."""
    year, month, day = (_number(parts, n) for n in ("year", "month", "day"))
    month_ok = pc.and_(pc.greater_equal(month, 1), pc.less_equal(month, 12))
    index = pc.subtract(pc.if_else(month_ok, month, 1), 1)
    leap = pc.and_(
        pc.equal(pc.bit_wise_and(year, 3), 0),
        pc.or_(
            pc.not_equal(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 0),
            pc.equal(pc.subtract(year, pc.multiply(pc.divide(year, 400), 400)), 0),
        ),
    )
    longest = pc.add(
        pc.take(_MONTH_DAYS, index), pc.cast(pc.and_(leap, pc.equal(month, 2)), pa.int32())
    )
    return pc.and_(month_ok, pc.and_(pc.greater_equal(day, 1), pc.less_equal(day, longest)))


def date_misfits(values: pa.Array) -> Misfits | None:
    """Rows of a text column that are not ``YYYY-MM-DD`` of a real day."""
    parts = pc.extract_regex(values, f"^{_DATE}$")
    valid = pc.fill_null(pc.and_(pc.is_valid(parts), _real_day(parts)), False)
    return Misfits.of((Misfit.INVALID, pc.and_(pc.is_valid(values), pc.invert(valid))))


def timestamp_misfits(values: pa.Array, *, zone: bool) -> Misfits | None:
    """Rows of a (normalised) text column that pyarrow's ISO-8601 parser refuses for an
    instant (``zone``: a zone is required) or a naive timestamp (no zone allowed)."""
    pattern = f"^{_DATE}{_TIME}{_ZONE}$" if zone else f"^{_DATE}{_TIME}?$"
    parts = pc.extract_regex(values, pattern)
    valid = pc.and_(pc.is_valid(parts), _real_day(parts))
    limits = [("hour", 23), ("minute", 59), ("second", 59)]
    if zone:
        limits += [("zone_hour", 23), ("zone_minute", 59)]
    for name, largest in limits:
        valid = pc.and_(valid, pc.less_equal(_number(parts, name), largest))
    valid = pc.fill_null(valid, False)
    return Misfits.of((Misfit.INVALID, pc.and_(pc.is_valid(values), pc.invert(valid))))


# --- Any cast, one row at a time ----------------------------------------------------------------


def locate_all(values: pa.Array, convert: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """Where ``convert`` refuses a value, found by splitting failing slices in two (about
    2 k log(n / k) conversions for k bad values): for typed Parquet columns and as the
    safety net of a predicate that accepted too much. A boolean mask without NULLs."""
    flat = _flat(values)
    bad: list[int] = []
    todo = [(0, len(flat))]
    while todo:
        start, stop = todo.pop()
        if stop <= start:
            continue
        try:
            convert(flat.slice(start, stop - start))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if stop - start == 1:
                bad.append(start)
            else:
                middle = (start + stop) // 2
                todo += [(middle, stop), (start, middle)]
    return _mask(len(flat), bad)
