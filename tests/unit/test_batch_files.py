"""Batch-file decoding (runtime.batch: envelope, csv_text) against the Fivetran-style writer
(replay.batch_writer).

Pure Python + pyarrow: no Spark. Values that must never leak into error messages are called
SECRET-something so the assertions can look for them.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pytest
import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.core.errors import BatchFileError, InvalidRequestError
from spark_destination.core.model import Compression, Encryption, FileParams
from spark_destination.replay.batch_writer import new_key, quote_field, shuffled, write_batch_file
from spark_destination.runtime.batch import csv_text, envelope
from spark_destination.runtime.batch.csv_text import read_batch_file
from spark_destination.runtime.batch.envelope import open_plain_stream

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PLAIN = FileParams(
    compression=Compression.OFF,
    encryption=Encryption.NONE,
    null_string=NULL,
    unmodified_string=UNMOD,
)
PROD = FileParams(
    compression=Compression.ZSTD,
    encryption=Encryption.AES,
    null_string=NULL,
    unmodified_string=UNMOD,
)
ALL_PARAMS = [
    FileParams(compression=c, encryption=e, null_string=NULL, unmodified_string=UNMOD)
    for c, e in itertools.product(Compression, Encryption)
]


def _id(params: FileParams) -> str:
    return f"{params.compression.name}-{params.encryption.name}"


def seeded_key(seed: int) -> bytes:
    return random.Random(seed).randbytes(32)


def write(
    path: Path,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    params: FileParams,
    key: bytes | None,
) -> str:
    write_batch_file(path, header, rows, params=params, key=key, rng=random.Random(7))
    return str(path)


def read_rows(
    path: str, params: FileParams, key: bytes | None, columns: Sequence[str]
) -> list[dict[str, str]]:
    table = read_batch_file(path, key=key, params=params, columns=columns)
    assert all(t == pa.string() for t in table.schema.types)
    assert all(col.null_count == 0 for col in table.columns)
    rows: list[dict[str, str]] = table.to_pylist()
    return rows


def encrypt(plain: bytes, key: bytes, iv: bytes = b"\x01" * 16) -> bytes:
    """An independent AES-256-CBC/PKCS#7 implementation (IV prefix) to craft arbitrary files."""
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return iv + encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize()


def assert_no_key(error: BaseException, key: bytes) -> None:
    text = str(error)
    for form in (
        key.hex(),
        key.hex().upper(),
        repr(key),
        base64.b64encode(key).decode(),
        key.decode("latin-1"),
    ):
        assert form not in text
    # Also no long run of the hex form (e.g. a prefix).
    assert key.hex()[:16] not in text


# Values that exercise every CSV corner: the writer must quote them and the reader must give them
# back byte for byte.
TRICKY = [
    "plain",
    "",
    " leading",
    "trailing ",
    "  both  ",
    "a,b,c",
    'say "hi"',
    '"',
    '""',
    "line1\nline2",
    "crlf\r\nline",
    "lone\rcr",
    "back\\slash",
    "ends with backslash\\",
    '\\"',
    "\\n is not a newline",
    "tab\tinside",
    "unicode: ünïcödé — 日本語 — 🦆",
    "é",
    "x" * 24,
    "y" * 25,
    NULL,
    UNMOD,
    "2024-01-02T03:04:05.123456789Z",
    "null",
    "NULL",
    "NaN",
    "#N/A",
]


@pytest.mark.parametrize("params", ALL_PARAMS, ids=_id)
def test_roundtrip_every_compression_and_encryption(tmp_path: Path, params: FileParams) -> None:
    key = seeded_key(1)
    header = ["id", "value", "other"]
    rows = [[str(i), v, f"o{i}"] for i, v in enumerate(TRICKY)]
    path = write(tmp_path / "f.csv", header, rows, params, key)

    got = read_rows(path, params, key, header)

    assert got == [dict(zip(header, r, strict=True)) for r in rows]


@pytest.mark.parametrize("params", ALL_PARAMS, ids=_id)
def test_open_plain_stream_yields_the_exact_csv_bytes(tmp_path: Path, params: FileParams) -> None:
    key = seeded_key(2)
    path = write(tmp_path / "f", ["a", "b"], [["1", "x y"], ["2", ""]], params, key)

    with open_plain_stream(path, key=key, params=params) as stream:
        assert stream.read() == b'a,b\n1,"x y"\n2,""\n'


def test_shuffled_header_is_mapped_by_name(tmp_path: Path) -> None:
    columns = ["id", "name", "amount", "_fivetran_synced", "_fivetran_deleted", "desc"]
    records = [
        {c: f"{c}-{i}" if c != "desc" else f'line\n{i}, "q"' for c in columns} for i in range(20)
    ]
    rng = random.Random(3)
    header = shuffled(columns, rng)
    assert header != columns and sorted(header) == sorted(columns)
    key = seeded_key(3)
    path = write(tmp_path / "f", header, [[r[c] for c in header] for r in records], PROD, key)

    table = read_batch_file(path, key=key, params=PROD, columns=columns)

    assert table.column_names == header  # header order, not table order
    assert table.to_pylist() == records


def test_header_may_hold_a_subset_of_the_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["b"], [["1"]], PLAIN, None)

    table = read_batch_file(path, key=None, params=PLAIN, columns=["a", "b", "c"])

    assert table.column_names == ["b"]


def test_empty_string_and_sentinels_are_distinct_and_never_null(tmp_path: Path) -> None:
    header = ["id", "v"]
    rows = [["1", ""], ["2", NULL], ["3", UNMOD], ["4", " "]]
    key = seeded_key(4)
    path = write(tmp_path / "f", header, rows, PROD, key)

    got = [r["v"] for r in read_rows(path, PROD, key, header)]

    assert got == ["", NULL, UNMOD, " "]
    assert len(set(got)) == 4


def test_quoted_and_unquoted_empty_fields_are_both_empty_strings(tmp_path: Path) -> None:
    # Jackson writes "" but another writer may leave the field bare: both mean the empty string.
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b,c\n"",,x\n,"",\n')

    got = read_rows(str(path), PLAIN, None, ["a", "b", "c"])

    assert got == [{"a": "", "b": "", "c": "x"}, {"a": "", "b": "", "c": ""}]


def test_unquoted_spaces_and_backslashes_are_kept_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b\n  x  ,c:\\dir\\\n"\\""",\\n\n')

    got = read_rows(str(path), PLAIN, None, ["a", "b"])

    assert got == [{"a": "  x  ", "b": "c:\\dir\\"}, {"a": '\\"', "b": "\\n"}]


def test_bare_quote_in_unquoted_field_is_rejected_when_unbalanced(tmp_path: Path) -> None:
    # RFC 4180 forbids it and Jackson never writes it; pyarrow would accept it silently, and an
    # odd number of quotes is indistinguishable from a truncated quoted field.
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b\nSECRET"x,y\n')

    with pytest.raises(BatchFileError, match="unbalanced quotes") as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    assert "SECRET" not in str(info.value)


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b\r\n1,"x\r\ny"\r\n2,3\r\n')

    got = read_rows(str(path), PLAIN, None, ["a", "b"])

    assert got == [{"a": "1", "b": "x\r\ny"}, {"a": "2", "b": "3"}]


def test_writer_quotes_like_jackson(tmp_path: Path) -> None:
    assert quote_field("x" * 24) == "x" * 24
    assert quote_field("x" * 25) == '"' + "x" * 25 + '"'
    assert quote_field("") == '""'
    assert quote_field("a b") == '"a b"'
    assert quote_field('a"b') == '"a""b"'
    assert quote_field("a\\b") == "a\\b"
    assert quote_field(UNMOD) == f'"{UNMOD}"'
    path = write(tmp_path / "f", ["a", "b"], [["x" * 24, "y" * 25]], PLAIN, None)
    assert Path(path).read_bytes() == b"a,b\n" + b"x" * 24 + b',"' + b"y" * 25 + b'"\n'


def test_24_and_25_char_values_roundtrip(tmp_path: Path) -> None:
    key = seeded_key(5)
    rows = [["x" * 24, "y" * 25], ["a,b" + "z" * 21, " " * 25]]
    path = write(tmp_path / "f", ["a", "b"], rows, PROD, key)

    assert read_rows(path, PROD, key, ["a", "b"]) == [{"a": r[0], "b": r[1]} for r in rows]


def test_nanosecond_timestamp_passes_through_verbatim(tmp_path: Path) -> None:
    key = seeded_key(6)
    stamps = ["2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04:05.000000000", "10:15:30.1"]
    path = write(tmp_path / "f", ["ts"], [[s] for s in stamps], PROD, key)

    assert [r["ts"] for r in read_rows(path, PROD, key, ["ts"])] == stamps


# --- empty inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("params", ALL_PARAMS, ids=_id)
def test_header_only_file_has_zero_rows(tmp_path: Path, params: FileParams) -> None:
    key = seeded_key(7)
    path = write(tmp_path / "f", ["a", "b"], [], params, key)

    table = read_batch_file(path, key=key, params=params, columns=["a", "b"])

    assert table.num_rows == 0
    assert table.column_names == ["a", "b"]


def test_header_without_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b")

    table = read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    assert (table.num_rows, table.column_names) == (0, ["a", "b"])


def test_last_row_without_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b\n1,"x y"')

    assert read_rows(str(path), PLAIN, None, ["a", "b"]) == [{"a": "1", "b": "x y"}]


def test_zero_byte_plain_file_is_refused(tmp_path: Path) -> None:
    """Fivetran always writes a header: zero bytes is a lost file, not an empty batch."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"")

    with pytest.raises(BatchFileError, match="is empty"):
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a"])


def test_empty_plaintext_inside_zstd_and_aes_is_refused(tmp_path: Path) -> None:
    key = seeded_key(8)
    path = tmp_path / "f"
    path.write_bytes(encrypt(zstandard.ZstdCompressor().compress(b""), key))

    with pytest.raises(BatchFileError, match="is empty"):
        read_batch_file(str(path), key=key, params=PROD, columns=["a"])


def test_header_only_file_is_an_empty_batch(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n")

    table = read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])
    assert table.num_rows == 0 and table.column_names == ["a", "b"]


def test_a_file_without_a_header_is_refused_without_quoting_its_first_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"SECRET-VALUE,2\n3,4\n")

    with pytest.raises(BatchFileError, match="no header row") as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])
    assert "SECRET" not in str(info.value)


def test_an_empty_header_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,,b\n1,2,3\n")

    with pytest.raises(BatchFileError, match=r"empty column name in its header \(field 2\)"):
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])


# --- encryption and compression failures -------------------------------------------------------


@pytest.mark.parametrize(
    "params", [p for p in ALL_PARAMS if p.encryption is Encryption.AES], ids=_id
)
def test_wrong_key(tmp_path: Path, params: FileParams) -> None:
    key, wrong = seeded_key(9), seeded_key(10)
    path = write(tmp_path / "f", ["a"], [[f"SECRET-{i}"] for i in range(1000)], params, key)

    with pytest.raises(BatchFileError) as info:
        read_batch_file(path, key=wrong, params=params, columns=["a"])

    assert path in str(info.value)
    assert "SECRET" not in str(info.value)
    assert_no_key(info.value, key)
    assert_no_key(info.value, wrong)


@pytest.mark.parametrize("cut", [10, 1, 16])
@pytest.mark.parametrize(
    "params", [p for p in ALL_PARAMS if p.encryption is Encryption.AES], ids=_id
)
def test_truncated_ciphertext(tmp_path: Path, params: FileParams, cut: int) -> None:
    key = seeded_key(11)
    path = write(tmp_path / "f", ["a"], [[f"v{i}"] for i in range(5000)], params, key)
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:-cut])

    with pytest.raises(BatchFileError) as info:
        read_batch_file(path, key=key, params=params, columns=["a"])

    assert path in str(info.value)
    assert_no_key(info.value, key)


@pytest.mark.parametrize("size", [0, 8, 16, 20])
def test_too_short_for_iv_and_a_block(tmp_path: Path, size: int) -> None:
    key = seeded_key(12)
    path = write(tmp_path / "f", ["a"], [["1"]], PROD, key)
    Path(path).write_bytes(Path(path).read_bytes()[:size])

    with pytest.raises(BatchFileError, match="truncated") as info:
        read_batch_file(path, key=key, params=PROD, columns=["a"])

    assert_no_key(info.value, key)


@pytest.mark.parametrize(
    "compression", [Compression.ZSTD, Compression.GZIP], ids=lambda c: str(c.name)
)
def test_truncated_compressed_stream_without_encryption(
    tmp_path: Path, compression: Compression
) -> None:
    params = FileParams(compression=compression, encryption=Encryption.NONE)
    path = write(tmp_path / "f", ["a"], [[f"v{i}"] for i in range(5000)], params, None)
    Path(path).write_bytes(Path(path).read_bytes()[:-10])

    with pytest.raises(BatchFileError, match="truncated|not valid"):
        read_batch_file(path, key=None, params=params, columns=["a"])


@pytest.mark.parametrize(
    "params", [p for p in ALL_PARAMS if p.encryption is Encryption.AES], ids=_id
)
def test_corrupted_ciphertext_in_the_middle(tmp_path: Path, params: FileParams) -> None:
    # CBC has no MAC: detection relies on the codec (zstd structure, gzip CRC) or, for OFF, on
    # UTF-8 / CSV validation of the garbled 16-byte block. Deterministic inputs keep this stable.
    key = seeded_key(13)
    rows = [[f"value number {i}", f"{i * 7919}"] for i in range(20000)]
    path = write(tmp_path / "f", ["a", "b"], rows, params, key)
    data = bytearray(Path(path).read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(b ^ 0xFF for b in data[middle : middle + 4])
    Path(path).write_bytes(bytes(data))

    with pytest.raises(BatchFileError) as info:
        read_batch_file(path, key=key, params=params, columns=["a", "b"])

    assert "value number" not in str(info.value)
    assert_no_key(info.value, key)


def test_plain_file_declared_as_zstd(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["a"], [["1"]], PLAIN, None)
    params = FileParams(compression=Compression.ZSTD, encryption=Encryption.NONE)

    with pytest.raises(BatchFileError, match="not valid zstd data \\(wrong key or corrupted"):
        read_batch_file(path, key=None, params=params, columns=["a"])


def test_plain_file_declared_as_gzip(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["a"], [["1"]], PLAIN, None)
    params = FileParams(compression=Compression.GZIP, encryption=Encryption.NONE)

    with pytest.raises(BatchFileError, match="not valid gzip data"):
        read_batch_file(path, key=None, params=params, columns=["a"])


def test_concatenated_zstd_frames_and_gzip_members(tmp_path: Path) -> None:
    # Both formats allow concatenation; a streaming reader must not stop after the first part.
    parts = [b"a,b\n1,2\n", b"3,4\n", b"5,6\n"]
    zst = tmp_path / "z"
    zst.write_bytes(b"".join(zstandard.ZstdCompressor().compress(p) for p in parts))
    gz = tmp_path / "g"
    gz.write_bytes(b"".join(gzip.compress(p) for p in parts))
    expected = [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}, {"a": "5", "b": "6"}]

    for path, compression in ((zst, Compression.ZSTD), (gz, Compression.GZIP)):
        params = FileParams(compression=compression, encryption=Encryption.NONE)
        assert read_rows(str(path), params, None, ["a", "b"]) == expected


@pytest.mark.parametrize("compression", [Compression.ZSTD, Compression.GZIP], ids=lambda c: c.name)
def test_a_very_compressible_file_is_decompressed_a_piece_at_a_time(
    tmp_path: Path, compression: Compression
) -> None:
    # An earliest-start file of 1M rows: ~70:1 with zstd. The parser (in another thread) must
    # get it in pieces and start on the first ones, not wait for all of it to be decompressed;
    # what the chain yields must still be exactly the file.
    text = b"id,_fivetran_start\n" + b"".join(
        b"%d,2024-02-01T00:00:00Z\n" % i for i in range(1_000_000)
    )
    packed = (
        zstandard.ZstdCompressor().compress(text)
        if compression is Compression.ZSTD
        else gzip.compress(text, compresslevel=6)
    )
    key = seeded_key(5)
    path = tmp_path / "earliest"
    path.write_bytes(encrypt(packed, key))
    params = FileParams(compression=compression, encryption=Encryption.AES)

    chunks, fh = envelope.plain_chunks(str(path), key, params)
    with fh:
        pieces = list(chunks)
    assert b"".join(pieces) == text
    assert len(pieces) >= 4
    assert max(len(piece) for piece in pieces) <= len(text) // 3


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = str(tmp_path / "nope" / "table_input_1_upsert.csv.zstd.aes")

    with pytest.raises(BatchFileError) as info:
        read_batch_file(path, key=seeded_key(14), params=PROD, columns=["a"])

    assert path in str(info.value)


def test_missing_key_for_aes_file(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["a"], [["1"]], PROD, seeded_key(15))

    with pytest.raises(BatchFileError, match="no key") as info:
        read_batch_file(path, key=None, params=PROD, columns=["a"])

    assert path in str(info.value)


def test_key_of_31_bytes(tmp_path: Path) -> None:
    key = seeded_key(16)
    path = write(tmp_path / "f", ["a"], [["1"]], PROD, key)

    with pytest.raises(BatchFileError, match="31 bytes") as info:
        read_batch_file(path, key=key[:31], params=PROD, columns=["a"])

    assert path in str(info.value)
    assert_no_key(info.value, key[:31])


def test_key_is_ignored_without_encryption(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["a"], [["1"]], PLAIN, None)

    assert read_rows(path, PLAIN, b"short", ["a"]) == [{"a": "1"}]


def test_new_key_is_32_random_bytes() -> None:
    assert len(new_key()) == 32
    assert new_key() != new_key()


# --- malformed CSV -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b'a,b\n1,2\n3,"SECRET-VALUE\n',
        b'a,b\n1,"SECRET-VALUE\n2,3\n4,5\n',
        b'a,b,c\n1,2,3\n"SECRET-VALUE,x\n',
    ],
)
@pytest.mark.parametrize("params", [PLAIN, PROD], ids=_id)
def test_unterminated_quote(tmp_path: Path, params: FileParams, content: bytes) -> None:
    key = seeded_key(17)
    path = tmp_path / "f"
    path.write_bytes(
        encrypt(zstandard.ZstdCompressor().compress(content), key) if params is PROD else content
    )

    with pytest.raises(BatchFileError) as info:
        read_batch_file(str(path), key=key, params=params, columns=["a", "b", "c"])

    assert str(path) in str(info.value)
    assert "SECRET" not in str(info.value)
    assert_no_key(info.value, key)


@pytest.mark.parametrize(
    ("content", "record"),
    [
        (b"a,b\n1,2\n3,4,SECRET-VALUE\n", "3"),
        (b"a,b\n1,2\nSECRET-VALUE\n", "3"),
        (b'a,b\n"multi\nline",2\n3,4\n5,6,"SECRET VALUE"\n', "4"),
    ],
)
def test_wrong_number_of_fields(tmp_path: Path, content: bytes, record: str) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(content)

    with pytest.raises(BatchFileError) as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    message = str(info.value)
    assert str(path) in message
    assert f"record {record}" in message
    assert "SECRET" not in message


def test_wrong_number_of_fields_far_into_a_large_file(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    body = b"".join(b"%d,x\n" % i for i in range(300_000))
    path.write_bytes(b"a,b\n" + body + b"1,2,SECRET-VALUE\n")

    with pytest.raises(BatchFileError, match="record 300002") as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    assert "SECRET" not in str(info.value)


def test_invalid_utf8_names_the_column_not_the_value(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n1,SECRET\xff\xfe\n")

    # pyarrow fails while opening, before the header is known: the file is read again to name it.
    with pytest.raises(BatchFileError, match="record 2.*UTF-8.*column 'b'") as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    assert "SECRET" not in str(info.value)


def test_invalid_utf8_after_the_first_block_names_the_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_text, "_FIRST_BLOCK_BYTES", 4096)
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n" + b"1,x\n" * 10_000 + b"1,SECRET\xff\xfe\n")

    with pytest.raises(BatchFileError, match="record 10002.*UTF-8.*column 'b'") as info:
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])

    assert "SECRET" not in str(info.value)


def test_unknown_header_column(tmp_path: Path) -> None:
    key = seeded_key(18)
    path = write(tmp_path / "f", ["id", "surprise"], [["1", "2"]], PROD, key)

    with pytest.raises(InvalidRequestError) as info:
        read_batch_file(path, key=key, params=PROD, columns=["id", "name"])

    assert str(info.value) == (
        f"column 'surprise' in batch file '{path}' is not a column of the table"
    )


def test_header_columns_are_case_sensitive(tmp_path: Path) -> None:
    path = write(tmp_path / "f", ["id", "NAME"], [["1", "x"]], PLAIN, None)

    with pytest.raises(InvalidRequestError, match="'NAME'"):
        read_batch_file(path, key=None, params=PLAIN, columns=["id", "name"])


def test_duplicate_header_column(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b,a\n1,2,3\n")

    with pytest.raises(BatchFileError, match="'a' twice"):
        read_batch_file(str(path), key=None, params=PLAIN, columns=["a", "b"])


# --- size --------------------------------------------------------------------------------------


def test_record_larger_than_a_block_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_text, "_FIRST_BLOCK_BYTES", 4096)
    big = 'big, "value"\n' * 20_000  # ~260 KB, 64 blocks of the first size
    key = seeded_key(19)
    path = write(tmp_path / "f", ["a", "b"], [["1", "x"], ["2", big], ["3", "y"]], PROD, key)

    got = read_rows(path, PROD, key, ["a", "b"])

    assert [r["b"] for r in got] == ["x", big, "y"]


def test_multi_megabyte_file_streams(tmp_path: Path) -> None:
    key = seeded_key(20)
    header = ["id", "name", "note", "_fivetran_synced"]
    count = 200_000

    def rows() -> Iterator[list[str]]:
        for i in range(count):
            yield [str(i), f"name {i}", f'note,{i}\n"{i % 7}"', "2025-11-21T14:59:47.315Z"]

    write_batch_file(tmp_path / "f", header, rows(), params=PROD, key=key)
    with open_plain_stream(str(tmp_path / "f"), key=key, params=PROD) as stream:
        plain_size = len(stream.read())
    assert plain_size > 8_000_000

    table = read_batch_file(str(tmp_path / "f"), key=key, params=PROD, columns=header)

    assert table.num_rows == count
    assert table.column("id").to_pylist() == [str(i) for i in range(count)]
    assert table.slice(123_456, 1).to_pylist() == [
        {
            "id": "123456",
            "name": "name 123456",
            "note": 'note,123456\n"4"',
            "_fivetran_synced": "2025-11-21T14:59:47.315Z",
        }
    ]


def test_duplicate_mask_marks_every_row_of_a_repeated_key() -> None:
    import pyarrow as pa

    from spark_destination.runtime.batch.staging import duplicate_mask

    table = pa.table({"id": ["1", "2", "1", "3", "2"], "region": ["a", "a", "a", "a", "b"]})
    assert duplicate_mask(table, ["id"]).to_pylist() == [True, True, True, False, True]
    assert duplicate_mask(table, ["id", "region"]).to_pylist() == [True, False, True, False, False]
    assert duplicate_mask(table.slice(0, 0), ["id"]).to_pylist() == []


@pytest.mark.parametrize("name", ["../k", ".x", "[0]", "a.b"])
def test_duplicate_mask_takes_key_names_that_look_like_field_paths(name: str) -> None:
    import pyarrow as pa

    from spark_destination.runtime.batch.staging import duplicate_mask

    # Acero would read these as paths into nested fields (a key column "../k" failed staging).
    table = pa.table({name: ["1", "2", "1"], "v": ["a", "b", "c"]})
    assert duplicate_mask(table, [name]).to_pylist() == [True, False, True]
    assert duplicate_mask(table, [name, "v"]).to_pylist() == [False, False, False]


@pytest.mark.parametrize("name", ["id", "../k", "[0]"])
def test_distinct_keys_gives_each_key_once_for_the_key_filter(name: str) -> None:
    """A batch that names a key twice (upserted in one file, deleted in another) binds it to
    one marker: the key filter counts keys, not rows, against its markers."""
    import pyarrow as pa

    from spark_destination.runtime.batch.staging import distinct_keys

    table = pa.table({name: [1, 2, 1, 3, 2], "region": ["a", "a", "a", "a", "b"], "v": [0] * 5})
    one = distinct_keys(table, [name])
    assert one.column_names == [name]
    assert sorted(one.column(name).to_pylist()) == [1, 2, 3]
    both = distinct_keys(table, [name, "region"])
    assert both.column_names == [name, "region"]
    assert sorted(zip(*(both.column(c).to_pylist() for c in (name, "region")), strict=True)) == [
        (1, "a"),
        (2, "a"),
        (2, "b"),
        (3, "a"),
    ]


def test_duplicate_mask_among_new_versions_ignores_earliest_start_and_delete_rows() -> None:
    import pyarrow as pa

    from spark_destination.planner.ir import OP_COLUMN, RowOp
    from spark_destination.runtime.batch.staging import duplicate_mask

    ops = ["earliest_start", "upsert", "delete", "update", "upsert", "upsert"]
    table = pa.table({"id": ["1", "1", "1", "2", "3", "2"], OP_COLUMN: ops})
    versions = (RowOp.UPDATE, RowOp.UPSERT)
    # Key 1 has one new version (and other rows): not repeated; key 2 has two.
    assert duplicate_mask(table, ["id"], among=versions).to_pylist() == [
        False,
        False,
        False,
        True,
        False,
        True,
    ]
    assert duplicate_mask(table, ["id"]).to_pylist() == [True, True, True, True, False, True]
