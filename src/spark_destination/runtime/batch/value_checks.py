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


# --- Helpers: a cheap exact test on every row, the details on the few rows it refuses ---------


def _flat(values: pa.Array) -> pa.Array:
    return pa.concat_arrays(values.chunks) if isinstance(values, pa.ChunkedArray) else values


def _mask(rows: int, hits: list[int]) -> pa.Array:
    """A boolean array of ``rows`` values, true at ``hits``."""
    mask = np.zeros(rows, dtype=bool)
    mask[hits] = True
    return pa.array(mask)


def _refused(values: pa.Array, fits: pa.Array) -> pa.Array:
    """The non-NULL rows ``fits`` does not hold for (a flat mask without NULLs)."""
    return _flat(pc.and_(pc.is_valid(values), pc.invert(pc.fill_null(fits, False))))


def _spread(rows: pa.Array, subset: pa.Array) -> pa.Array:
    """A mask over every row: at the true ``rows`` the values of ``subset`` (a mask over those
    rows only, in order), false elsewhere."""
    return pc.replace_with_mask(rows, rows, _flat(subset))


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
    decimal = pc.fill_null(_matches(values, r"^-?[0-9]+$"), False)
    hexadecimal = _matches(values, "^0[xX][0-9a-fA-F]{1,%d}$" % hex_digits)  # noqa: UP031
    invalid = _refused(values, pc.or_(decimal, pc.fill_null(hexadecimal, False)))
    # Only text as long as the bound's digits can be out of range: compare those (usually
    # few) by their significant digits, as equal-length text.
    long = _flat(pc.and_(decimal, pc.greater_equal(pc.utf8_length(values), len(largest))))
    overflow = None
    if pc.any(long).as_py():
        candidates = _flat(values).filter(long)
        digits = pc.replace_substring_regex(candidates, r"^-?0*", "")
        length = pc.utf8_length(digits)
        bound = pc.if_else(pc.starts_with(candidates, "-"), smallest, largest)
        in_range = pc.or_(
            pc.less(length, len(largest)),
            pc.and_(pc.equal(length, len(largest)), pc.less_equal(digits, bound)),
        )
        overflow = _spread(long, pc.invert(in_range))
    return Misfits.of((Misfit.INVALID, invalid), (Misfit.OVERFLOW, overflow))


# --- Floating point ---------------------------------------------------------------------------

FLOAT_TEXT: Final = (
    r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
    r"|(?i:inf(inity)?|nan(\([0-9a-z_]*\))?))$"
)


def float_misfits(values: pa.Array) -> Misfits | None:
    """Rows of a text column that pyarrow's float parser refuses (overflow: ``float_overflow``)."""
    return Misfits.of((Misfit.INVALID, _refused(values, _matches(values, FLOAT_TEXT))))


def float_overflow(values: pa.Array, typed: pa.Array) -> pa.Array:
    """Where a finite number became infinite (only text spelling infinity may)."""
    spelled = pc.match_substring(values, "inf", ignore_case=True)
    return pc.and_(pc.is_inf(typed), _not(spelled))


# --- Decimals ---------------------------------------------------------------------------------


def _decimal_fits(target: pa.Decimal128Type) -> str:
    """Plain notation that fits DECIMAL(p, s) exactly: at most p - s significant integer
    digits (leading zeros free), at most s fractional digits before trailing zeros, a digit
    somewhere."""
    whole, scale = target.precision - target.scale, target.scale
    integer = f"(0+[0-9]{{0,{whole}}}|[1-9][0-9]{{0,{whole - 1}}})" if whole else "0+"
    fraction = f"[0-9]{{0,{scale}}}0*" if scale else "0*"
    some_fraction = f"([0-9]{{1,{scale}}}0*|0+)" if scale else "0+"
    return rf"^[+-]?({integer}(\.{fraction})?|\.{some_fraction})$"


_DECIMAL_PLAIN: Final = r"^[+-]?(?P<whole>[0-9]*)(?:\.(?P<fraction>[0-9]*))?$"
_HAS_DIGIT: Final = r"[0-9]"
DECIMAL_SCIENTIFIC: Final = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+$"


def decimal_misfits(
    values: pa.Array,
    target: pa.Decimal128Type,
    judge: Callable[[str], Misfit | None],
) -> Misfits | None:
    """Rows of a text column that do not fit DECIMAL(p, s) exactly. One regular expression
    takes the plain notation that fits; the rest (usually few) are told apart by their digits,
    scientific notation value by value with ``judge`` (the exact rule)."""
    candidates = _refused(values, _matches(values, _decimal_fits(target)))
    if not pc.any(candidates).as_py():
        return None
    rest = _flat(values).filter(candidates)
    parts = pc.extract_regex(rest, _DECIMAL_PLAIN)
    plain = pc.and_(pc.is_valid(parts), pc.fill_null(_matches(rest, _HAS_DIGIT), False))
    whole = pc.replace_substring_regex(pc.struct_field(parts, "whole"), "^0+", "")
    fraction = pc.replace_substring_regex(pc.struct_field(parts, "fraction"), "0+$", "")
    scale = pc.and_(plain, pc.fill_null(pc.greater(pc.utf8_length(fraction), target.scale), False))
    too_long = pc.greater(pc.utf8_length(whole), target.precision - target.scale)
    overflow = pc.and_(pc.and_(plain, pc.invert(scale)), pc.fill_null(too_long, False))
    scientific = pc.fill_null(_matches(rest, DECIMAL_SCIENTIFIC), False)
    invalid = pc.invert(pc.or_(plain, scientific))
    masks = {Misfit.INVALID: invalid, Misfit.OVERFLOW: overflow, Misfit.SCALE: scale}
    if pc.any(scientific).as_py():
        masks = _judged(rest, scientific, judge, masks)
    return Misfits.of(*((kind, _spread(candidates, mask)) for kind, mask in masks.items()))


def _judged(
    values: pa.Array,
    unsure: pa.Array,
    judge: Callable[[str], Misfit | None],
    masks: dict[Misfit, pa.Array],
) -> dict[Misfit, pa.Array]:
    """``masks`` where ``unsure`` rows are set to what ``judge`` (one value at a time) says."""
    flat = _flat(values)
    where = pc.indices_nonzero(_flat(unsure)).to_numpy()
    verdicts = [judge(flat[int(i)].as_py()) for i in where]
    out = {kind: pc.and_(_flat(mask), pc.invert(_flat(unsure))) for kind, mask in masks.items()}
    for misfit in Misfit:
        hits = [int(i) for i, verdict in zip(where, verdicts, strict=True) if verdict is misfit]
        if hits:
            mask = _mask(len(flat), hits)
            out[misfit] = pc.or_(out[misfit], mask) if misfit in out else mask
    return out


# --- Dates and instants -----------------------------------------------------------------------
# One regular expression each, exact to the day (a DFA match costs about two casts of the
# column; extracting the components to check them took seven times as long).

# A real day, proleptic Gregorian as pyarrow: February 29th in years divisible by 4 but not by
# 100, and in those divisible by 400 (0000 among them).
_DAY: Final = (
    r"([0-9]{4}-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])"
    r"|[0-9]{4}-(0[469]|11)-(0[1-9]|[12][0-9]|30)"
    r"|[0-9]{4}-02-(0[1-9]|1[0-9]|2[0-8])"
    r"|([0-9]{2}(0[48]|[2468][048]|[13579][26])|(00|0[48]|[2468][048]|[13579][26])00)-02-29)"
)
# ``T`` or a space, then the hour, minute, second and up to six fractional digits.
_TIME: Final = r"([T ]([01][0-9]|2[0-3])(:[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?)?)"
_ZONE: Final = r"(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)"
DATE_TEXT: Final = f"^{_DAY}$"
NAIVE_TIMESTAMP_TEXT: Final = f"^{_DAY}{_TIME}?$"
INSTANT_TEXT: Final = f"^{_DAY}{_TIME}{_ZONE}$"


def date_misfits(values: pa.Array) -> Misfits | None:
    """Rows of a text column that are not ``YYYY-MM-DD`` of a real day."""
    return Misfits.of((Misfit.INVALID, _refused(values, _matches(values, DATE_TEXT))))


def timestamp_misfits(values: pa.Array, *, zone: bool) -> Misfits | None:
    """Rows of a (normalised) text column that pyarrow's ISO-8601 parser refuses for an
    instant (``zone``: a zone is required) or a naive timestamp (no zone allowed)."""
    pattern = INSTANT_TEXT if zone else NAIVE_TIMESTAMP_TEXT
    return Misfits.of((Misfit.INVALID, _refused(values, _matches(values, pattern))))


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
