"""The value checks agree with the conversions they stand for (generated with hypothesis).

``runtime.batch.value_checks`` finds every value of a column that does not fit in one pass, so
that ``bad_value_policy=null`` can NULL exactly those and ``fail`` can name the first. Each
predicate must accept exactly what its conversion accepts, value by value: the authority is the
cast of that one value alone (pyarrow's parser; decimals: the exact rule ``decimal_misfit``).
Then, through ``decode_file``, every Fivetran type under both policies: ``null`` keeps every
row, NULLs exactly the values the authority refuses and reports each (column, NULLED, reason,
row); ``fail`` raises naming the first such row, and only when there is one.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_destination.core.errors import ValueConversionError
from spark_destination.core.model import (
    NAIVE_TIME_PATTERN,
    Column,
    DataType,
    DecimalParams,
    FileKind,
)
from spark_destination.runtime.batch.typed_decode import (
    DecodeSpec,
    arrow_type,
    decimal_misfit,
    decode_file,
    normalised_instants,
)
from spark_destination.runtime.batch.value_changes import Change, ColumnChanges
from spark_destination.runtime.batch.value_checks import (
    Misfit,
    Misfits,
    date_misfits,
    decimal_misfits,
    float_misfits,
    integer_misfits,
    locate_all,
    timestamp_misfits,
)

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Through decode_file, per type: fewer examples each (15 types).
PER_TYPE = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- Text generators: near the grammar, across its edges, and junk -----------------------------


def _digits(low: int = 0, high: int = 22) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=low, max_size=high)


def _joined(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(*parts).map("".join)


def _maybe(part: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), part)


SIGN = st.sampled_from(["", "", "-", "+"])

INTEGER_TEXT = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    _joined(st.sampled_from(["", "-", "+", "0", "-0", "00", "--"]), _digits(1, 21)),
    _joined(
        st.sampled_from(["0x", "0X", "-0x", "0x-", "x"]),
        st.text("0123456789abcdefABCDEFg", max_size=18),
    ),
    st.text("0123456789-+xXaAfF .e", max_size=12),
)

FLOAT_WORDS = st.sampled_from(
    ["inf", "Infinity", "-inf", "+INF", "infinit", "infinityx", "nan", "NaN", "-nan", "nan()",
     "nan(x_1)", "nan(a-b)", "nan( )", "NAN(Z9)", ".", "e5", "1e", ".e1", "1.e5", "+.5", "5.", ""]
)  # fmt: skip
FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:e}"),
    _joined(SIGN, _digits(0, 6), _maybe(_joined(st.just("."), _digits(0, 6))),
            _maybe(_joined(st.sampled_from("eE"), SIGN, _digits(0, 4)))),
    FLOAT_WORDS,
    st.text("0123456789.eE+-infatyINFATY()_x ", max_size=12),
)  # fmt: skip

DECIMAL_TEXT = st.one_of(
    _joined(SIGN, st.sampled_from(["", "0", "000"]), _digits(0, 24),
            _maybe(_joined(st.just("."), _digits(0, 24), st.sampled_from(["", "0", "000"]))),
            _maybe(_joined(st.sampled_from("eE"), SIGN, _digits(0, 4)))),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.text("0123456789.eE+- x_", max_size=12),
)  # fmt: skip


def _two(high: int) -> st.SearchStrategy[str]:
    return st.integers(0, high).map(lambda n: f"{n:02d}")


DATE_PART = st.one_of(
    st.dates().map(dt.date.isoformat),
    st.tuples(st.integers(0, 9999), st.integers(0, 19), st.integers(0, 39)).map(
        lambda p: f"{p[0]:04d}-{p[1]:02d}-{p[2]:02d}"
    ),
    st.sampled_from(["2000-02-29", "1900-02-29", "2024-02-29", "2023-02-29", "0001-01-01",
                     "9999-12-31", "0000-01-01", "2021-1-01", "20210101"]),
)  # fmt: skip
DATE_TEXT = st.one_of(DATE_PART, st.text("0123456789-T: ", max_size=12))

ZONE = st.one_of(
    st.sampled_from(["", "Z", "z", "+00:00", "-00:00"]),
    _joined(st.sampled_from("+-"), _two(25), st.sampled_from(["", ":"]),
            st.one_of(st.just(""), _two(61), st.sampled_from(["0", "5"]))),
)  # fmt: skip
TIME_PART = _joined(
    st.sampled_from(["T", "T", " ", "t"]),
    st.one_of(_two(25), st.sampled_from(["1", "9"])),
    _maybe(_joined(st.just(":"), _two(61), _maybe(_joined(st.just(":"), _two(61),
           _maybe(_joined(st.just("."), _digits(0, 11))))))),
)  # fmt: skip
TIMESTAMP_TEXT = st.one_of(
    _joined(DATE_PART, _maybe(TIME_PART), ZONE),
    _joined(st.sampled_from(["0001-01-01", "9999-12-31"]), TIME_PART, ZONE),
    st.datetimes(timezones=st.just(dt.UTC)).map(dt.datetime.isoformat),
    st.text("0123456789-T: Z+.", max_size=25),
)

BOOLEAN_TEXT = st.one_of(
    st.sampled_from(["true", "false", "TRUE", "False", "tRuE", "yes", "1", "t", " true", ""]),
    st.text("trueFALSE ", max_size=6),
)
TIME_TEXT = st.one_of(
    _joined(_two(25), st.just(":"), _two(61), _maybe(_joined(st.just(":"), _two(61),
            _maybe(_joined(st.just("."), _digits(0, 10)))))),
    st.text("0123456789:. ", max_size=12),
)  # fmt: skip


def values(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(text, min_size=1, max_size=40)


def _casts(text: str, target: pa.DataType) -> bool:
    try:
        pc.cast(pa.array([text], pa.string()), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def _refused(misfits: Misfits | None, count: int) -> list[bool]:
    return [False] * count if misfits is None else misfits.rows().to_pylist()


# --- Each predicate against its conversion, value by value ------------------------------------


@PROPERTY
@given(texts=values(INTEGER_TEXT), target=st.sampled_from([pa.int16(), pa.int32(), pa.int64()]))
def test_integer_predicate_refuses_exactly_what_the_cast_refuses(
    texts: list[str], target: pa.DataType
) -> None:
    misfits = integer_misfits(pa.array(texts, pa.string()), target)
    assert _refused(misfits, len(texts)) == [not _casts(t, target) for t in texts]


@PROPERTY
@given(texts=values(FLOAT_TEXT))
def test_float_predicate_refuses_exactly_what_the_parser_refuses(texts: list[str]) -> None:
    misfits = float_misfits(pa.array(texts, pa.string()))
    assert _refused(misfits, len(texts)) == [not _casts(t, pa.float64()) for t in texts]


@PROPERTY
@given(texts=values(DATE_TEXT))
def test_date_predicate_refuses_exactly_what_the_cast_refuses(texts: list[str]) -> None:
    misfits = date_misfits(pa.array(texts, pa.string()))
    assert _refused(misfits, len(texts)) == [not _casts(t, pa.date32()) for t in texts]


@PROPERTY
@given(texts=values(TIMESTAMP_TEXT), zone=st.booleans())
def test_timestamp_predicate_refuses_exactly_what_the_cast_refuses(
    texts: list[str], zone: bool
) -> None:
    """On the text as normalised (extra fractional digits cut; an instant's date alone or
    missing zone made UTC): what the cast then refuses, the request refuses."""
    target = pa.timestamp("us", tz="UTC") if zone else pa.timestamp("us")
    normal = normalised_instants(pa.array(texts, pa.string()), zone=zone)
    misfits = timestamp_misfits(normal, zone=zone)
    expected = [not _casts(t, target) for t in normal.to_pylist()]
    assert _refused(misfits, len(texts)) == expected


@PROPERTY
@given(
    texts=values(DECIMAL_TEXT),
    shape=st.integers(1, 38).flatmap(lambda p: st.tuples(st.just(p), st.integers(0, p))),
)
def test_decimal_predicate_agrees_with_the_exact_rule(
    texts: list[str], shape: tuple[int, int]
) -> None:
    target = pa.decimal128(*shape)
    misfits = decimal_misfits(
        pa.array(texts, pa.string()), target, lambda one: decimal_misfit(one, target)
    )
    found: list[Misfit | None] = [None] * len(texts)
    for misfit, mask in misfits.masks if misfits else ():
        for index, hit in enumerate(mask.to_pylist()):
            if hit:
                assert found[index] is None, "misfit masks overlap"
                found[index] = misfit
    assert found == [decimal_misfit(t, target) for t in texts]


def test_locate_all_finds_every_value_a_conversion_refuses() -> None:
    texts = ["1"] * 1000
    for index in (0, 17, 18, 500, 999):
        texts[index] = "x"
    mask = locate_all(pa.chunked_array([texts[:400], texts[400:]]), lambda v: pc.cast(v, pa.int8()))
    assert pc.indices_nonzero(mask).to_pylist() == [0, 17, 18, 500, 999]


def test_predicates_keep_nulls_out_of_their_masks() -> None:
    texts = pa.array([None, "x", None], pa.string())
    for misfits in (
        integer_misfits(texts, pa.int32()),
        float_misfits(texts),
        date_misfits(texts),
        timestamp_misfits(texts, zone=True),
    ):
        assert misfits is not None and misfits.rows().to_pylist() == [False, True, False]


# --- Every type through decode_file, under both policies --------------------------------------

# Scale 20: a value of 19 or more integer digits overflows 128 bits once scaled (which
# pyarrow's cast wraps silently: the decoder must refuse it all the same).
DECIMAL = Column(name="v", type=DataType.DECIMAL, decimal=DecimalParams(precision=38, scale=20))
TYPES: dict[DataType, tuple[Column, st.SearchStrategy[str]]] = {
    DataType.BOOLEAN: (Column(name="v", type=DataType.BOOLEAN), BOOLEAN_TEXT),
    DataType.SHORT: (Column(name="v", type=DataType.SHORT), INTEGER_TEXT),
    DataType.INT: (Column(name="v", type=DataType.INT), INTEGER_TEXT),
    DataType.LONG: (Column(name="v", type=DataType.LONG), INTEGER_TEXT),
    DataType.DECIMAL: (DECIMAL, DECIMAL_TEXT),
    DataType.FLOAT: (Column(name="v", type=DataType.FLOAT), FLOAT_TEXT),
    DataType.DOUBLE: (Column(name="v", type=DataType.DOUBLE), FLOAT_TEXT),
    DataType.NAIVE_DATE: (Column(name="v", type=DataType.NAIVE_DATE), DATE_TEXT),
    DataType.NAIVE_DATETIME: (Column(name="v", type=DataType.NAIVE_DATETIME), TIMESTAMP_TEXT),
    DataType.UTC_DATETIME: (Column(name="v", type=DataType.UTC_DATETIME), TIMESTAMP_TEXT),
    DataType.NAIVE_TIME: (Column(name="v", type=DataType.NAIVE_TIME), TIME_TEXT),
    DataType.STRING: (Column(name="v", type=DataType.STRING), st.text(max_size=8)),
    DataType.XML: (Column(name="v", type=DataType.XML), st.text(max_size=8)),
    DataType.JSON: (Column(name="v", type=DataType.JSON), st.text(max_size=8)),
    DataType.BINARY: (Column(name="v", type=DataType.BINARY), st.text(max_size=8)),
}
KINDS = {
    Misfit.INVALID: "not a valid",
    Misfit.OVERFLOW: "overflow",
    Misfit.SCALE: "more fractional digits than",
}


def _verdict(text: str, column: Column) -> tuple[Misfit | None, object]:
    """What one value alone becomes: (why it does not fit, or None; its typed value)."""
    target = arrow_type(column)
    match column.type:
        case DataType.BOOLEAN:
            fits = text.lower() in ("true", "false")
            return (None, text.lower() == "true") if fits else (Misfit.INVALID, None)
        case DataType.NAIVE_TIME:
            fits = re.fullmatch(NAIVE_TIME_PATTERN, text) is not None
            return (None, text) if fits else (Misfit.INVALID, None)
        case DataType.DECIMAL:
            misfit = decimal_misfit(text, target)
            if misfit is not None:
                return misfit, None
            quantum = decimal.Decimal(1).scaleb(-column.decimal_params.scale)
            return None, decimal.Decimal(text).quantize(quantum, context=decimal.Context(prec=80))
        case DataType.NAIVE_DATETIME | DataType.UTC_DATETIME:
            zone = column.type is DataType.UTC_DATETIME
            text = normalised_instants(pa.array([text], pa.string()), zone=zone)[0].as_py()
        case DataType.STRING | DataType.XML | DataType.JSON | DataType.BINARY:
            return None, None  # every text fits (binary: base64, else its UTF-8 bytes)
        case _:
            pass
    if not _casts(text, target):
        integer = column.type in (DataType.SHORT, DataType.INT, DataType.LONG)
        return _int_kind(text) if integer else Misfit.INVALID, None
    typed = _plain(pc.cast(pa.array([text], pa.string()), target))[0]
    spelled_infinity = "inf" in text.lower()
    if isinstance(typed, float) and typed in (float("inf"), float("-inf")) and not spelled_infinity:
        return Misfit.OVERFLOW, None
    return None, typed


def _plain(array: pa.Array | pa.ChunkedArray) -> list[object]:
    """Values as Python objects; dates and instants as their Arrow integers (years Python's
    datetime cannot hold, such as 0000, are values too)."""
    if pa.types.is_date32(array.type):
        array = array.cast(pa.int32())
    elif pa.types.is_temporal(array.type):
        array = array.cast(pa.int64())
    return list(array.to_pylist())


def _int_kind(text: str) -> Misfit:
    return Misfit.OVERFLOW if re.fullmatch(r"-?[0-9]+", text) else Misfit.INVALID


def _decode(
    column: Column, texts: list[str], *, lenient: bool
) -> tuple[pa.Table, list[ColumnChanges]]:
    key = Column(name="id", type=DataType.INT, primary_key=True)
    spec = DecodeSpec(
        columns=(key, column),
        key=("id",),
        null_string=NULL,
        unmodified_string=None,
        lenient=("v",) if lenient else (),
    )
    raw = pa.table({"id": [str(i) for i in range(len(texts))], "v": texts})
    changes: list[ColumnChanges] = []
    table = decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="/in/f.csv", changes=changes)
    return table, changes


@pytest.mark.parametrize("data_type", list(TYPES), ids=lambda t: t.name)
@PER_TYPE
@given(data=st.data())
def test_every_type_under_both_policies(data_type: DataType, data: st.DataObject) -> None:
    column, text = TYPES[data_type]
    texts = data.draw(values(st.one_of(text, st.just(NULL))))
    verdicts = [(None, None) if t == NULL else _verdict(t, column) for t in texts]
    bad = [index for index, (misfit, _) in enumerate(verdicts) if misfit is not None]

    table, changes = _decode(column, texts, lenient=True)
    assert table.num_rows == len(texts)
    got = _plain(table.column("v"))
    recorded: dict[int, str] = {}
    for change in changes:
        assert change.column == "v" and change.change is Change.NULLED
        for row in change.rows.to_pylist():
            recorded[row] = change.reason
    assert sorted(recorded) == bad
    for index, (misfit, value) in enumerate(verdicts):
        if misfit is not None:
            assert got[index] is None
            assert KINDS[misfit] in recorded[index]
        elif texts[index] == NULL:
            assert got[index] is None
        elif value is not None:
            if isinstance(value, float) and value != value:
                assert got[index] != got[index]  # NaN
            else:
                assert got[index] == value

    if bad:
        with pytest.raises(ValueConversionError, match=f"data row {bad[0] + 1}: expected"):
            _decode(column, texts, lenient=False)
    else:
        strict, none = _decode(column, texts, lenient=False)
        assert _same(_plain(strict.column("v")), got) and none == []


def _same(left: list[object], right: list[object]) -> bool:
    """Equal lists, NaN equal to NaN."""
    return len(left) == len(right) and all(
        a == b or (a != a and b != b) for a, b in zip(left, right, strict=True)
    )


def test_a_too_long_value_fails_or_is_truncated_where_a_length_is_declared() -> None:
    column = Column(name="v", type=DataType.STRING, string_byte_length=3)
    key = Column(name="id", type=DataType.INT, primary_key=True)
    raw = pa.table({"id": ["1", "2", "3"], "v": ["abc", "abcd", "ü€ßx"]})
    spec = DecodeSpec(
        columns=(key, column),
        key=("id",),
        null_string=None,
        unmodified_string=None,
        max_lengths=(("v", 3),),
    )
    with pytest.raises(ValueConversionError, match="data row 2: expected at most 3 characters"):
        decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="p")
    changes: list[ColumnChanges] = []
    lenient = DecodeSpec(**{**_fields(spec), "lenient": ("v",)})
    table = decode_file(raw, spec=lenient, kind=FileKind.REPLACE, path="p", changes=changes)
    assert table.column("v").to_pylist() == ["abc", "abc", "ü€ß"]
    (change,) = changes
    assert change.change is Change.TRUNCATED and change.reason == "longer than 3 characters"
    assert change.rows.to_pylist() == [1, 2]


def _fields(spec: DecodeSpec) -> dict[str, object]:
    return {name: getattr(spec, name) for name in DecodeSpec.__dataclass_fields__}


def test_a_lenient_spec_needs_somewhere_to_report_its_changes() -> None:
    key = Column(name="id", type=DataType.INT, primary_key=True)
    spec = DecodeSpec(
        columns=(key,), key=("id",), null_string=None, unmodified_string=None, lenient=("id",)
    )
    with pytest.raises(ValueError, match="report changes"):
        decode_file(pa.table({"id": ["1"]}), spec=spec, kind=FileKind.REPLACE, path="p")


def test_reasons_name_the_declared_type_and_never_the_value() -> None:
    column = Column(name="v", type=DataType.DECIMAL, decimal=DecimalParams(precision=4, scale=1))
    key = Column(name="id", type=DataType.INT, primary_key=True)
    spec = DecodeSpec(
        columns=(key, column),
        key=("id",),
        null_string=None,
        unmodified_string=None,
        lenient=("v",),
        type_texts=(("v", "DECIMAL(4, 1)"),),
    )
    raw = pa.table({"id": ["1", "2", "3", "4"], "v": ["12345", "1.25", "SECRET", "1.5"]})
    changes: list[ColumnChanges] = []
    decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="p", changes=changes)
    reasons = {c.reason: c.rows.to_pylist() for c in changes}
    assert "SECRET" not in str(reasons)
    assert reasons == {
        "DECIMAL(4, 1) overflow": [0],
        "more fractional digits than DECIMAL(4, 1) holds": [1],
        "not a valid DECIMAL(4, 1)": [2],
    }
