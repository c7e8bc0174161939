"""Typed decoding (runtime.batch.typed_decode): every Fivetran type's accepted text, its
refusals and their messages (file, data row, column, type; never the value), sentinels and
masks."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from spark_destination.core.errors import BatchFileError, ValueConversionError
from spark_destination.core.model import Column, DataType, DecimalParams, FileKind
from spark_destination.planner.ir import RowOp, unmodified_column
from spark_destination.runtime.batch.typed_decode import DecodeSpec, decode_file

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
UTC = dt.UTC


def _spec(column: Column, **kwargs: object) -> DecodeSpec:
    key = Column(name="id", type=DataType.INT, primary_key=True)
    return DecodeSpec(
        columns=(key, column),
        key=("id",),
        null_string=NULL,
        unmodified_string=UNMOD,
        **kwargs,  # type: ignore[arg-type]
    )


def decode(
    column: Column, values: list[str], kind: FileKind = FileKind.REPLACE, **kwargs: object
) -> pa.Table:
    raw = pa.table(
        {"id": [str(i) for i in range(len(values))], column.name: values},
        schema=pa.schema([("id", pa.string()), (column.name, pa.string())]),
    )
    return decode_file(raw, spec=_spec(column, **kwargs), kind=kind, path="/batch/f.csv")


def values(column: Column, texts: list[str]) -> list[object]:
    return decode(column, texts).column(column.name).to_pylist()


def refused(column: Column, texts: list[str]) -> str:
    with pytest.raises(ValueConversionError) as info:
        decode(column, texts)
    return str(info.value)


def col(kind: DataType, **kwargs: object) -> Column:
    return Column(name="v", type=kind, **kwargs)  # type: ignore[arg-type]


ACCEPTED: list[tuple[Column, list[str], list[object]]] = [
    (
        col(DataType.BOOLEAN),
        ["true", "false", "TRUE", "False", NULL],
        [True, False, True, False, None],
    ),
    (col(DataType.SHORT), ["-32768", "32767", "01"], [-32768, 32767, 1]),
    (col(DataType.INT), ["2147483647", "-5", "007"], [2147483647, -5, 7]),
    (col(DataType.LONG), ["9223372036854775807", "0"], [9223372036854775807, 0]),
    (
        col(DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)),
        ["1.5", "-12345678.99", "1E+3", "2.500", "-0.1e1"],
        [
            Decimal("1.50"),
            Decimal("-12345678.99"),
            Decimal("1000.00"),
            Decimal("2.50"),
            Decimal("-1.00"),
        ],
    ),
    (
        col(DataType.FLOAT),
        ["1.5", "-Infinity", "3.4028235E38"],
        [1.5, float("-inf"), 3.4028234663852886e38],
    ),
    (
        col(DataType.DOUBLE),
        ["-2.2250738585072014E-308", "Infinity", "1e10"],
        [-2.2250738585072014e-308, float("inf"), 1e10],
    ),
    (
        col(DataType.NAIVE_DATE),
        ["2007-12-03", "0001-01-01", "9999-12-31"],
        [dt.date(2007, 12, 3), dt.date(1, 1, 1), dt.date(9999, 12, 31)],
    ),
    (
        col(DataType.NAIVE_DATETIME),
        ["2007-12-03T10:15:30", "2007-12-03T10:15:30.123456789", "2007-12-03 10:15"],
        [
            dt.datetime(2007, 12, 3, 10, 15, 30),
            dt.datetime(2007, 12, 3, 10, 15, 30, 123456),
            dt.datetime(2007, 12, 3, 10, 15),
        ],
    ),
    (
        col(DataType.UTC_DATETIME),
        [
            "2005-05-23T20:57:00Z",
            "2025-11-21T14:59:47.315Z",
            "9999-12-31T23:59:59.999Z",
            "2025-01-01T00:00:00.1234567Z",
            "2025-01-01T01:00:00+01:00",
            "2025-01-01T00:00:00",
        ],
        [
            dt.datetime(2005, 5, 23, 20, 57, tzinfo=UTC),
            dt.datetime(2025, 11, 21, 14, 59, 47, 315000, tzinfo=UTC),
            dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
            dt.datetime(2025, 1, 1, 0, 0, 0, 123456, tzinfo=UTC),
            dt.datetime(2025, 1, 1, tzinfo=UTC),
            dt.datetime(2025, 1, 1, tzinfo=UTC),
        ],
    ),
    (
        col(DataType.NAIVE_TIME),
        ["10:15:30", "23:59", "00:00:00.123456789"],
        ["10:15:30", "23:59", "00:00:00.123456789"],
    ),
    (col(DataType.BINARY), ["aGVsbG8=", "[B@7d4991ad", ""], [b"hello", b"[B@7d4991ad", b""]),
    (col(DataType.STRING), ["", " x ", "null"], ["", " x ", "null"]),
    (col(DataType.JSON), ['{"a": 1}'], ['{"a": 1}']),
    (col(DataType.XML), ["<a/>"], ["<a/>"]),
]


@pytest.mark.parametrize(
    ("column", "texts", "expected"),
    ACCEPTED,
    ids=lambda x: getattr(x, "type", None) and x.type.name,
)
def test_each_type_decodes_its_text(
    column: Column, texts: list[str], expected: list[object]
) -> None:
    got = values(column, texts)
    if column.type is DataType.UTC_DATETIME:
        got = [v.astimezone(UTC) if v is not None else None for v in got]
    assert got == expected


SECRET = "SECRET"

REFUSED: list[tuple[Column, str]] = [
    (col(DataType.BOOLEAN), "yes"),
    (col(DataType.BOOLEAN), "1"),
    (col(DataType.SHORT), "32768"),
    (col(DataType.INT), "2147483648"),
    (col(DataType.LONG), "9223372036854775808"),
    (col(DataType.INT), "1.5"),
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)), "123456789.5"),
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)), "1_000"),
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)), "1.005"),
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)), "1330E36148"),
    # pyarrow's cast alone would store these wrongly (wrapped past 128 bits; rounded to 0).
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=38, scale=20)), "1" * 23),
    (col(DataType.DECIMAL, decimal=DecimalParams(precision=33, scale=11)), "-5.21000E-89"),
    (col(DataType.FLOAT), "3.5E+38"),
    (col(DataType.DOUBLE), "1e400"),
    (col(DataType.DOUBLE), "abc"),
    (col(DataType.NAIVE_DATE), "2021-02-30"),
    (col(DataType.NAIVE_DATE), "2021-13-01"),
    (col(DataType.NAIVE_DATETIME), "2021-02-30T00:00:00"),
    (col(DataType.UTC_DATETIME), "2021-02-03T25:00:00Z"),
    (col(DataType.NAIVE_TIME), "25:61:00"),
    (col(DataType.INT), ""),
]


@pytest.mark.parametrize(
    ("column", "bad"), REFUSED, ids=lambda x: getattr(x, "type", None) and x.type.name
)
def test_a_value_that_does_not_fit_names_file_row_column_and_type(column: Column, bad: str) -> None:
    good = {
        DataType.BOOLEAN: "true",
        DataType.DECIMAL: "1.5",
        DataType.NAIVE_DATE: "2021-01-01",
        DataType.NAIVE_DATETIME: "2021-01-01T00:00:00",
        DataType.UTC_DATETIME: "2021-01-01T00:00:00Z",
        DataType.NAIVE_TIME: "10:00:00",
    }.get(column.type, "1")
    message = refused(column, [good, NULL, good, bad, good])
    assert "'v'" in message and "/batch/f.csv" in message and "replace file" in message
    assert "data row 4" in message
    assert f"expected a value of type {column.type.name}" in message
    if bad:
        assert bad not in message


def test_the_first_bad_row_is_found_in_a_large_column() -> None:
    texts = ["1"] * 100_000
    texts[76_543] = "x" + SECRET
    texts[90_000] = "y"
    message = refused(col(DataType.LONG), texts)
    assert "data row 76544" in message and SECRET not in message


def test_every_bad_column_is_named() -> None:
    spec = DecodeSpec(
        columns=(
            Column(name="id", type=DataType.INT, primary_key=True),
            Column(name="a", type=DataType.INT),
            Column(name="b", type=DataType.NAIVE_DATE),
        ),
        key=("id",),
        null_string=NULL,
        unmodified_string=UNMOD,
        type_texts=(("b", "DATE"),),
    )
    raw = pa.table({"id": ["1", "2"], "a": ["1", "x"], "b": ["2020-02-30", "2020-01-01"]})
    with pytest.raises(ValueConversionError) as info:
        decode_file(raw, spec=spec, kind=FileKind.UPDATE, path="p")
    message = str(info.value)
    assert "column 'a' (INT) in update file 'p', data row 2" in message
    assert "column 'b' (DATE) in update file 'p', data row 1" in message
    # Columns are typed side by side; the message still names them in the table's order.
    assert message.index("column 'a'") < message.index("column 'b'")


def test_of_two_columns_stored_in_wrong_types_the_first_is_named() -> None:
    spec = DecodeSpec(
        columns=(
            Column(name="id", type=DataType.INT, primary_key=True),
            Column(name="a", type=DataType.NAIVE_DATE),
            Column(name="b", type=DataType.INT),
        ),
        key=("id",),
        null_string=None,
        unmodified_string=None,
    )
    # Typed Parquet columns of other families: neither can be cast, and "a" comes first.
    raw = pa.table({"id": [1], "a": pa.array([1.5]), "b": pa.array([True])})
    with pytest.raises(BatchFileError, match="stores column 'a' as double"):
        decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="p")


def test_sentinels_become_null_and_an_unmodified_mask() -> None:
    table = decode(col(DataType.INT), ["1", NULL, UNMOD], kind=FileKind.UPDATE)
    assert table.column("v").to_pylist() == [1, None, None]
    assert table.column(unmodified_column("v")).to_pylist() == [False, False, True]
    assert unmodified_column("id") not in table.column_names


def test_absent_columns_are_null_in_replace_files_and_unmodified_in_update_files() -> None:
    spec = _spec(col(DataType.STRING))
    raw = pa.table({"id": ["1"]})
    replace = decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="p")
    update = decode_file(raw, spec=spec, kind=FileKind.UPDATE, path="p")
    assert replace.column("v").to_pylist() == [None] == update.column("v").to_pylist()
    assert replace.column(unmodified_column("v")).to_pylist() == [False]
    assert update.column(unmodified_column("v")).to_pylist() == [True]


def test_without_sentinels_nothing_is_special_and_nothing_is_masked() -> None:
    spec = DecodeSpec(
        columns=(Column(name="id", type=DataType.STRING, primary_key=True),),
        key=("id",),
        null_string=None,
        unmodified_string=None,
    )
    table = decode_file(pa.table({"id": [NULL, ""]}), spec=spec, kind=FileKind.REPLACE, path="p")
    assert table.column_names == ["id"] and table.column("id").to_pylist() == [NULL, ""]


@pytest.mark.parametrize("sentinel", [NULL, UNMOD])
def test_a_sentinel_in_a_key_column_is_refused(sentinel: str) -> None:
    spec = _spec(col(DataType.STRING))
    raw = pa.table({"id": ["1", sentinel], "v": ["a", "b"]})
    with pytest.raises(ValueConversionError, match="'id' .*data row 2: expected a non-NULL key"):
        decode_file(raw, spec=spec, kind=FileKind.DELETE, path="p")


def test_required_columns_must_hold_a_value_on_their_rows_only() -> None:
    start = Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True)
    spec = _spec(start, required=(("_fivetran_start", (RowOp.UPSERT, RowOp.UPDATE)),))
    raw = pa.table({"id": ["1", "2"], "_fivetran_start": ["2020-01-01T00:00:00Z", NULL]})
    assert decode_file(raw, spec=spec, kind=FileKind.DELETE, path="p").num_rows == 2
    with pytest.raises(ValueConversionError, match="data row 2: expected a value of type UTC"):
        decode_file(raw, spec=spec, kind=FileKind.REPLACE, path="p")


def test_the_schema_is_typed() -> None:
    column = col(DataType.DECIMAL, decimal=DecimalParams(precision=38, scale=10))
    table = decode(column, ["1"])
    assert table.schema.field("v").type == pa.decimal128(38, 10)
    assert table.schema.field("id").type == pa.int32()


def test_repeated_keys_are_compared_as_typed_values() -> None:
    """``1`` and ``01`` are one INT key: folding must see them as repeated."""
    from spark_destination.runtime.batch.staging import duplicate_mask

    raw = pa.table({"id": ["1", "01", "2"], "v": ["a", "b", "c"]})
    table = decode_file(raw, spec=_spec(col(DataType.STRING)), kind=FileKind.REPLACE, path="p")
    assert duplicate_mask(table, ("id",)).to_pylist() == [True, True, False]
    assert duplicate_mask(raw, ("id",)).to_pylist() == [False, False, False]


@pytest.mark.parametrize("kind", [FileKind.REPLACE, FileKind.UPDATE, FileKind.DELETE])
def test_a_file_lacking_a_key_column_is_refused_as_a_file(kind: FileKind) -> None:
    column = Column(name="note", type=DataType.STRING)
    raw = pa.table({"note": ["SECRET-VALUE"]})
    with pytest.raises(BatchFileError, match=r"'/batch/f.csv' lacks primary key column.*'id'") as e:
        decode_file(raw, spec=_spec(column), kind=kind, path="/batch/f.csv")
    assert "SECRET" not in str(e.value)
