"""The typed CSV fast path (runtime.batch.typed_csv) gives exactly what the precise path gives.

The precise path is ``decode_file(read_batch_file(...))``: every value parsed as text, then cast.
Each case writes a real batch file and decodes it both ways: same table, or same error message
(file, data row, column, type; never the value). Other tests check that the fast path is taken
(pyarrow types the columns while parsing) and that it falls back when it must.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest

from spark_destination.core.errors import DestinationError
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileKind,
    FileParams,
)
from spark_destination.planner.ir import unmodified_column
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.batch import typed_csv
from spark_destination.runtime.batch.csv_text import read_batch_file
from spark_destination.runtime.batch.typed_csv import decode_csv_file, parse_types
from spark_destination.runtime.batch.typed_decode import DecodeSpec, decode_file
from spark_destination.runtime.batch.value_changes import ColumnChanges
from tests.unit.test_typed_decode import ACCEPTED, NULL, REFUSED, UNMOD

PROD = FileParams(null_string=NULL, unmodified_string=UNMOD)
KEY_COLUMN = Column(name="id", type=DataType.INT, primary_key=True)


def spec_of(
    columns: Sequence[Column], null: str | None = NULL, unmod: str | None = UNMOD
) -> DecodeSpec:
    return DecodeSpec(
        columns=(KEY_COLUMN, *columns),
        key=("id",),
        null_string=null,
        unmodified_string=unmod,
    )


def write(
    tmp_path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> tuple[str, bytes]:
    path = tmp_path / f"f{len(list(tmp_path.iterdir()))}.csv.zst.aes"
    key = new_key()
    write_batch_file(path, header, rows, params=PROD, key=key, rng=random.Random(3))
    return str(path), key


def both(path: str, key: bytes, spec: DecodeSpec, kind: FileKind) -> tuple[object, object]:
    """(fast result, precise result): each a table or the error's text."""
    results: list[object] = []
    for decode in (
        lambda: decode_csv_file(path, key=key, params=PROD, spec=spec, kind=kind),
        lambda: decode_file(
            read_batch_file(path, key=key, params=PROD, columns=[c.name for c in spec.columns]),
            spec=spec,
            kind=kind,
            path=path,
        ),
    ):
        try:
            results.append(decode())
        except DestinationError as exc:
            results.append(f"{type(exc).__name__}: {exc}")
    return results[0], results[1]


def assert_same(fast: object, precise: object) -> None:
    if isinstance(precise, pa.Table):
        assert isinstance(fast, pa.Table), fast
        assert fast.schema == precise.schema
        assert fast.to_pylist() == precise.to_pylist()
    else:
        assert fast == precise


CASES = [(c, texts) for c, texts, _ in ACCEPTED] + [(c, ["1", bad]) for c, bad in REFUSED]
MORE = [
    (Column(name="v", type=DataType.BOOLEAN), ["tRuE", "FALSE", " true", "1"]),
    (Column(name="v", type=DataType.INT), [" 1", "1 ", "\t1"]),
    (Column(name="v", type=DataType.NAIVE_DATE), [" 2020-01-01"]),
    (Column(name="v", type=DataType.UTC_DATETIME), [" 2020-01-01T00:00:00Z", "2020-01-01"]),
    (Column(name="v", type=DataType.NAIVE_DATETIME), ["2020-01-01T00:00:00Z"]),
]


@pytest.mark.parametrize(("column", "texts"), CASES + MORE, ids=lambda x: getattr(x, "name", None))
@pytest.mark.parametrize("kind", [FileKind.REPLACE, FileKind.UPDATE])
def test_every_accepted_and_refused_text_decodes_as_on_the_precise_path(
    tmp_path: Path, column: Column, texts: list[str], kind: FileKind
) -> None:
    good = {
        DataType.BOOLEAN: "false",
        DataType.NAIVE_DATE: "2021-01-01",
        DataType.NAIVE_DATETIME: "2021-01-01T00:00:00",
        DataType.UTC_DATETIME: "2021-01-01T00:00:00Z",
        DataType.NAIVE_TIME: "10:00:00",
    }.get(column.type, "1")
    values = [good, NULL, *texts, UNMOD if kind is FileKind.UPDATE else good]
    path, key = write(tmp_path, ["id", "v"], [[str(i), v] for i, v in enumerate(values)])
    fast, precise = both(path, key, spec_of([column]), kind)
    assert_same(fast, precise)


WIDE = (
    Column(name="flag", type=DataType.BOOLEAN),
    Column(name="at", type=DataType.UTC_DATETIME),
    Column(name="local", type=DataType.NAIVE_DATETIME),
    Column(name="n", type=DataType.LONG),
    Column(name="s", type=DataType.STRING),
    Column(name="d", type=DataType.DECIMAL, decimal=DecimalParams(precision=10, scale=2)),
    Column(name="f", type=DataType.DOUBLE),
    Column(name="day", type=DataType.NAIVE_DATE),
)


def wide_rows(unmodified: bool) -> list[list[str]]:
    rng = random.Random(5)
    rows = []
    for i in range(3000):
        row = [
            str(i),
            rng.choice(["true", "False", NULL]),
            rng.choice(["2024-05-01T10:00:00.123Z", "2024-05-01T10:00:00+02:00", NULL]),
            rng.choice(["2024-05-01T10:00:00", "2024-05-01 10:00:00.5", NULL]),
            rng.choice(["-7", "0", NULL]),
            rng.choice(["a, b", 'say "hi"', "", "x\ny", " tab\t", NULL]),
            rng.choice(["1.5", "-12345678.99", "1E+3", "2.500", NULL]),
            rng.choice(["1e10", "-0.5", "-1.25E-3", NULL]),
            rng.choice(["2024-02-29", "0001-01-01", NULL]),
        ]
        if unmodified:
            row[1 + i % 8] = UNMOD
        rows.append(row)
    return rows


@pytest.mark.parametrize("kind", list(FileKind))
def test_a_wide_file_decodes_as_on_the_precise_path(tmp_path: Path, kind: FileKind) -> None:
    rows = wide_rows(unmodified=kind is FileKind.UPDATE)
    path, key = write(tmp_path, ["id", *(c.name for c in WIDE)], rows)
    fast, precise = both(path, key, spec_of(WIDE), kind)
    assert isinstance(precise, pa.Table)
    assert_same(fast, precise)


@dataclass
class Parses:
    """What ``typed_csv`` asked ``read_batch_file`` for: each parse's ``convert`` option (None:
    the precise text parse) and the table it got."""

    converts: list[pa.csv.ConvertOptions | None] = field(default_factory=list)
    tables: list[pa.Table] = field(default_factory=list)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Parses:
    seen = Parses()

    def spy(*args: object, convert: pa.csv.ConvertOptions | None = None, **kw: object) -> pa.Table:
        seen.converts.append(convert)
        seen.tables.append(read_batch_file(*args, convert=convert, **kw))  # type: ignore[arg-type]
        return seen.tables[-1]

    monkeypatch.setattr(typed_csv, "read_batch_file", spy)
    return seen


def test_the_fast_path_types_columns_while_parsing(tmp_path: Path, parses: Parses) -> None:
    """One parse, with pyarrow converting every column but text and decimals, for a clean
    replace file."""
    # A space for T in a timestamp would take the precise path (its blank is not accounted for).
    rows = [[v.replace(" 10:", "T10:") for v in row] for row in wide_rows(unmodified=False)]
    path, key = write(tmp_path, ["id", *(c.name for c in WIDE)], rows)
    decode_csv_file(path, key=key, params=PROD, spec=spec_of(WIDE), kind=FileKind.REPLACE)
    assert len(parses.converts) == 1 and parses.converts[0] is not None
    parsed = parses.tables[0].schema
    assert parsed.field("flag").type == pa.bool_()
    assert parsed.field("at").type == pa.timestamp("us", tz="UTC")
    assert parsed.field("local").type == pa.timestamp("us")
    assert parsed.field("n").type == pa.int64() and parsed.field("id").type == pa.int32()
    # Text: pyarrow's decimal parser can wrap a too large value (decode_file checks it).
    assert parsed.field("d").type == pa.string()
    assert parsed.field("f").type == pa.float64()
    assert parsed.field("day").type == pa.date32()
    # The null sentinel became NULL while parsing.
    assert parses.tables[0].column("s").null_count > 0


def test_a_value_the_fast_converter_refuses_falls_back_with_the_precise_message(
    tmp_path: Path, parses: Parses
) -> None:
    column = Column(name="at", type=DataType.UTC_DATETIME)
    rows = [["1", "2024-01-01T00:00:00Z"], ["2", "SECRET-not-a-time"], ["3", NULL]]
    path, key = write(tmp_path, ["id", "at"], rows)
    with pytest.raises(DestinationError) as info:
        decode_csv_file(path, key=key, params=PROD, spec=spec_of([column]), kind=FileKind.REPLACE)
    message = str(info.value)
    assert f"column 'at' (UTC_DATETIME) in replace file '{path}', data row 2" in message
    assert "SECRET" not in message
    # The fast attempt, then the precise path.
    assert parses.converts[0] is not None and parses.converts[-1] is None


@pytest.mark.parametrize(
    ("column", "bad"),
    [
        (Column(name="n", type=DataType.LONG), " 7"),
        (Column(name="n", type=DataType.LONG), "7\t"),
        (Column(name="f", type=DataType.DOUBLE), "1e400"),
    ],
)
def test_what_pyarrow_accepts_but_the_precise_path_refuses_takes_the_precise_path(
    tmp_path: Path, parses: Parses, column: Column, bad: str
) -> None:
    """Blanks around a number, an infinite float: refused."""
    null = "nu ll\t"
    rows = [["1", "1"], ["2", bad], ["3", null]]
    path, key = write(tmp_path, ["id", column.name, "s"], [[*r, "a b\tc"] for r in rows])
    spec = spec_of([column, Column(name="s", type=DataType.STRING)], null=null)
    with pytest.raises(DestinationError, match=f"'{column.name}' .*data row 2: expected a value"):
        decode_csv_file(path, key=key, params=PROD, spec=spec, kind=FileKind.REPLACE)
    assert parses.converts[0] is not None and parses.converts[-1] is None


def test_blanks_in_text_and_in_the_null_sentinel_keep_the_fast_path(
    tmp_path: Path, parses: Parses
) -> None:
    null = "nu ll\t x"
    rows = [["1", "7", " a b "], ["2", null, null], ["3", "8", "\t"]]
    path, key = write(tmp_path, ["id", "n", "s t"], rows)
    spec = spec_of(
        [Column(name="n", type=DataType.LONG), Column(name="s t", type=DataType.STRING)],
        null=null,
    )
    fast, precise = both(path, key, spec, FileKind.REPLACE)
    assert_same(fast, precise)
    assert len(parses.converts) == 1 and parses.converts[0] is not None  # no second, precise parse
    assert isinstance(fast, pa.Table) and fast.column("n").to_pylist() == [7, None, 8]


def test_columns_that_may_hold_the_unmodified_sentinel_stay_text() -> None:
    spec = spec_of(WIDE)
    replace, update = parse_types(spec, FileKind.REPLACE), parse_types(spec, FileKind.UPDATE)
    assert replace["flag"] == pa.bool_() and update["flag"] == pa.string()
    assert replace["at"] == pa.timestamp("us", tz="UTC") and update["at"] == pa.string()
    # Only the key would be typed in an update file: the fast attempt would not pay.
    assert typed_csv.fast_path_applies(spec, FileKind.REPLACE)
    assert not typed_csv.fast_path_applies(spec, FileKind.UPDATE)


@pytest.mark.parametrize(
    ("name", "unmod", "good"),
    [("flag", "TRUE", "true"), ("at", "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")],
)
def test_a_sentinel_that_reads_as_a_value_keeps_its_column_text(
    tmp_path: Path, name: str, unmod: str, good: str
) -> None:
    path, key = write(tmp_path, ["id", name], [["1", unmod], ["2", good]])
    spec = spec_of([c for c in WIDE if c.name == name], unmod=unmod)
    assert parse_types(spec, FileKind.REPLACE)[name] == pa.string()
    fast, precise = both(path, key, spec, FileKind.REPLACE)
    assert_same(fast, precise)
    assert isinstance(fast, pa.Table)
    assert fast.column(unmodified_column(name)).to_pylist() == [True, False]


def test_one_text_for_both_sentinels_takes_the_precise_path(tmp_path: Path) -> None:
    rows = [["1", "same", "same"], ["2", "true", "2024-01-02T00:00:00Z"]]
    path, key = write(tmp_path, ["id", "flag", "at"], rows)
    spec = spec_of([WIDE[0], WIDE[1]], null="same", unmod="same")
    assert not typed_csv.fast_path_applies(spec, FileKind.REPLACE)
    fast, precise = both(path, key, spec, FileKind.UPDATE)
    assert_same(fast, precise)


def test_a_null_sentinel_with_a_comma_and_a_quote(tmp_path: Path) -> None:
    null = 'nu,ll"x'
    rows = [["1", null, null], ["2", "true", "2024-01-02T00:00:00Z"]]
    path, key = write(tmp_path, ["id", "flag", "at"], rows)
    spec = spec_of([WIDE[0], WIDE[1]], null=null)
    fast, precise = both(path, key, spec, FileKind.REPLACE)
    assert_same(fast, precise)
    assert isinstance(fast, pa.Table) and fast.column("flag").to_pylist() == [None, True]


def test_plain_files_and_structural_errors_match(tmp_path: Path) -> None:
    plain = FileParams(compression=Compression.OFF, encryption=Encryption.NONE, null_string=NULL)
    path = tmp_path / "bad.csv"
    path.write_text('id,flag\n1,true\n2,"SECRET open quote\n')
    spec = spec_of([WIDE[0]])
    with pytest.raises(DestinationError) as fast:
        decode_csv_file(str(path), key=None, params=plain, spec=spec, kind=FileKind.REPLACE)
    with pytest.raises(DestinationError) as precise:
        decode_file(
            read_batch_file(str(path), key=None, params=plain, columns=["id", "flag"]),
            spec=spec,
            kind=FileKind.REPLACE,
            path=str(path),
        )
    assert str(fast.value) == str(precise.value) and "SECRET" not in str(fast.value)


@pytest.mark.parametrize(
    ("precision", "scale", "bad"),
    [
        # Scaled, the digits overflow 128 bits: pyarrow's parser wraps them into range.
        (38, 20, "12345678901234567890123"),
        (36, 36, "477329463985853"),
        # Far below the scale: pyarrow's parser rounds it to 0.
        (33, 11, "-5.21000E-89"),
        # Not a number at all, which pyarrow's parser reads as 0.02.
        (6, 4, "2e+-02"),
    ],
)
def test_a_decimal_pyarrow_would_get_wrong_is_refused_on_both_paths(
    tmp_path: Path, precision: int, scale: int, bad: str
) -> None:
    column = Column(
        name="d", type=DataType.DECIMAL, decimal=DecimalParams(precision=precision, scale=scale)
    )
    columns = [column, Column(name="n", type=DataType.LONG)]  # a typed column: the fast path
    path, key = write(tmp_path, ["id", "d", "n"], [["1", "0", "1"], ["2", bad, "2"]])
    with pytest.raises(DestinationError, match="'d' .*data row 2: expected a value of type DEC"):
        decode_csv_file(path, key=key, params=PROD, spec=spec_of(columns), kind=FileKind.REPLACE)


def _lenient(spec: DecodeSpec) -> DecodeSpec:
    names = tuple(c.name for c in spec.columns if c.name not in spec.key)
    return DecodeSpec(
        **{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "lenient": names}
    )


def _decoded(decode: object) -> tuple[pa.Table, list[tuple[str, str, str, list[int]]]]:
    changes: list[ColumnChanges] = []
    table = decode(changes)  # type: ignore[operator]
    listed = [(c.column, c.change.value, c.reason, c.rows.to_pylist()) for c in changes]
    return table, sorted(listed)


def test_under_null_a_column_with_bad_values_is_parsed_as_text_and_the_rest_stays_typed(
    tmp_path: Path, parses: Parses
) -> None:
    """Bad values in two typed columns (both in the first block): one short fast attempt,
    then one with those two as text; never the all-text parse. Same table and changes as the
    precise path."""
    rows = [[v.replace(" 10:", "T10:") for v in row] for row in wide_rows(unmodified=False)]
    rows[5][4] = "x7"  # n: LONG
    rows[2900][8] = "2024-02-30"  # day: NAIVE_DATE
    rows[7][8] = "2023-02-29"
    path, key = write(tmp_path, ["id", *(c.name for c in WIDE)], rows)
    spec = _lenient(spec_of(WIDE))
    fast, fast_changes = _decoded(
        lambda changes: decode_csv_file(
            path, key=key, params=PROD, spec=spec, kind=FileKind.REPLACE, changes=changes
        )
    )
    assert all(convert is not None for convert in parses.converts)
    assert len(parses.converts) == 2
    final = parses.tables[-1].schema
    assert final.field("n").type == pa.string() and final.field("day").type == pa.string()
    assert final.field("at").type == pa.timestamp("us", tz="UTC")
    names = [c.name for c in spec.columns]
    precise, precise_changes = _decoded(
        lambda changes: decode_file(
            read_batch_file(path, key=key, params=PROD, columns=names),
            spec=spec,
            kind=FileKind.REPLACE,
            path=path,
            changes=changes,
        )
    )
    assert_same(fast, precise)
    assert (
        fast_changes
        == precise_changes
        == [
            ("day", "NULLED", "not a valid NAIVE_DATE", [7, 2900]),
            ("n", "NULLED", "not a valid LONG", [5]),
        ]
    )


def test_under_null_a_bad_key_still_takes_the_precise_path_and_fails(
    tmp_path: Path, parses: Parses
) -> None:
    path, key = write(tmp_path, ["id", "n"], [["1", "7"], ["x", "8"]])
    spec = _lenient(spec_of([Column(name="n", type=DataType.LONG)]))
    with pytest.raises(DestinationError, match="'id' .*data row 2"):
        decode_csv_file(path, key=key, params=PROD, spec=spec, kind=FileKind.REPLACE, changes=[])
    assert parses.converts[-1] is None


def test_under_null_bad_values_beyond_the_first_block_cost_one_more_attempt_each(
    tmp_path: Path, parses: Parses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first block (here: none: the sample is refused) cannot tell every bad column: each
    one found later is parsed as text from the next attempt on."""
    monkeypatch.setattr(typed_csv, "first_block", lambda *args: None)
    rows = [[v.replace(" 10:", "T10:") for v in row] for row in wide_rows(unmodified=False)]
    rows[5][4] = "x7"  # n: LONG
    rows[2900][8] = "2024-02-30"  # day: NAIVE_DATE
    path, key = write(tmp_path, ["id", *(c.name for c in WIDE)], rows)
    spec = _lenient(spec_of(WIDE))
    changes: list[ColumnChanges] = []
    decode_csv_file(path, key=key, params=PROD, spec=spec, kind=FileKind.REPLACE, changes=changes)
    assert len(parses.converts) == 3 and all(c is not None for c in parses.converts)
    assert sorted(c.column for c in changes) == ["day", "n"]
