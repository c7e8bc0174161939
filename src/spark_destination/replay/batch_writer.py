"""Write batch files exactly as Fivetran and its destination tester do (protocol reference §6).

Layering is ``AES-256-CBC(Compress(csv))``: CSV text is compressed (ZSTD level 3, GZIP or not at
all), then encrypted with a random 16-byte IV written as a prefix and PKCS#7 padding. Everything
is streamed; the CSV mimics Jackson ``CsvMapper`` quoting.

Values are already strings here: the caller turns NULL into ``params.null_string`` and "not
changed" into ``params.unmodified_string``.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO, Final, Protocol, cast

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    Encryption,
    FileKind,
    FileParams,
)

__all__ = [
    "new_key",
    "parquet_table",
    "quote_field",
    "shuffled",
    "write_batch_file",
    "write_parquet_batch_file",
    "write_parquet_table",
]

KEY_BYTES = 32
IV_BYTES = 16
ZSTD_LEVEL = 3
# Jackson quotes any value longer than this without looking at its characters.
_MAX_UNQUOTED_CHARS = 24
_NEEDS_QUOTES = re.compile(r'[,"\r\n ]')
_FLUSH_CHARS = 1 << 20


class _Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...


def new_key() -> bytes:
    """A fresh random AES-256 key, as the tester makes one per file."""
    return os.urandom(KEY_BYTES)


def shuffled(header: Sequence[str], rng: random.Random) -> list[str]:
    """The header in a random order: the tester shuffles the column list per file."""
    order = list(header)
    rng.shuffle(order)
    return order


def quote_field(value: str) -> str:
    """Jackson-style: quote when empty, long, or containing a separator, quote, CR/LF or space."""
    if value == "" or len(value) > _MAX_UNQUOTED_CHARS or _NEEDS_QUOTES.search(value):
        return '"' + value.replace('"', '""') + '"'
    return value


def _csv_line(fields: Sequence[str]) -> str:
    return ",".join(quote_field(f) for f in fields) + "\n"


class _AesWriter(io.RawIOBase):
    """Encrypts everything written to it into ``fh``; ``finish`` writes the padded final block."""

    def __init__(self, fh: BinaryIO, key: bytes, iv: bytes) -> None:
        super().__init__()
        self._fh = fh
        self._encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        self._padder = padding.PKCS7(128).padder()
        fh.write(iv)

    def writable(self) -> bool:
        return True

    def write(self, data: bytes, /) -> int:  # type: ignore[override]
        self._fh.write(self._encryptor.update(self._padder.update(bytes(data))))
        return len(data)

    def finish(self) -> None:
        last = self._encryptor.update(self._padder.finalize()) + self._encryptor.finalize()
        self._fh.write(last)


def _check_key(key: bytes | None) -> bytes:
    if key is None or len(key) != KEY_BYTES:
        raise ValueError(f"AES-256 needs a {KEY_BYTES}-byte key")
    return key


def _write_text(sink: _Writable, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    pending = [_csv_line(header)]
    size = 0
    for number, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise ValueError(f"row {number} has {len(row)} fields; the header has {len(header)}")
        line = _csv_line(row)
        pending.append(line)
        size += len(line)
        if size >= _FLUSH_CHARS:
            sink.write("".join(pending).encode())
            pending, size = [], 0
    sink.write("".join(pending).encode())


def _write_compressed(
    sink: BinaryIO, compression: Compression, header: Sequence[str], rows: Iterable[Sequence[str]]
) -> None:
    if compression is Compression.ZSTD:
        # closefd=False: closing the compressor ends the frame but leaves our sink open.
        with zstandard.ZstdCompressor(level=ZSTD_LEVEL).stream_writer(sink, closefd=False) as z:
            _write_text(z, header, rows)
    elif compression is Compression.GZIP:
        # mtime=0 keeps the output reproducible; GzipFile never closes a passed-in fileobj.
        with gzip.GzipFile(fileobj=sink, mode="wb", mtime=0) as g:
            _write_text(g, header, rows)
    else:
        _write_text(sink, header, rows)


def write_batch_file(
    path: Path,
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    params: FileParams,
    key: bytes | None,
    rng: random.Random | None = None,
) -> None:
    """Write one batch file: header row, then ``rows`` (strings, in header order).

    ``rng``, when given, also draws the IV so that a seeded run produces identical files.
    """
    with open(path, "wb") as fh:
        if params.encryption is Encryption.AES:
            iv = rng.randbytes(IV_BYTES) if rng is not None else os.urandom(IV_BYTES)
            aes = _AesWriter(fh, _check_key(key), iv)
            _write_compressed(cast(BinaryIO, aes), params.compression, header, rows)
            aes.finish()
        else:
            _write_compressed(fh, params.compression, header, rows)


# --- Parquet (protocol v2, reference §6.3) --------------------------------------------------

# AvroParquetWriter's type conventions for Fivetran's Avro schema: these types are written
# typed; instants, dates, date-times and times are strings (the documents' "Instant -> String",
# "LocalDate -> String"; LocalDateTime is "UNSUPPORTED", so text too), text types are strings.
_PARQUET_TYPED: Final = frozenset(
    {
        DataType.BOOLEAN,
        DataType.SHORT,
        DataType.INT,
        DataType.LONG,
        DataType.FLOAT,
        DataType.DOUBLE,
        DataType.DECIMAL,
        DataType.BINARY,
    }
)
_PARQUET_CODEC: Final = {
    Compression.OFF: "NONE",
    Compression.ZSTD: "ZSTD",
    Compression.GZIP: "GZIP",
}


def parquet_table(
    columns: Sequence[Column],
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    params: FileParams,
) -> pa.Table:
    """Text rows (as for ``write_batch_file``) as the Arrow table AvroParquetWriter would write.

    Typed columns (see ``_PARQUET_TYPED``; Avro ``["null", T]`` unions, so optional) carry a
    NULL for the null sentinel. A column holding the unmodified sentinel cannot be typed: it is
    written as a string column, sentinels verbatim, as are instants, dates and text.
    """
    from spark_destination.runtime.batch.typed_decode import DecodeSpec, arrow_type, decode_file

    by_name = {c.name: c for c in columns}
    texts = list(zip(*rows, strict=True)) if header else []
    text_columns = {
        name: pa.array(list(values) if texts else [], pa.string())
        for name, values in zip(header, texts or [()] * len(header), strict=True)
    }
    arrays: list[pa.Array] = []
    for name in header:
        column = by_name[name]
        text = text_columns[name]
        sentinel_present = params.unmodified_string and params.unmodified_string in text.to_pylist()
        if column.type not in _PARQUET_TYPED or sentinel_present:
            arrays.append(text)
            continue
        plain = Column(name=name, type=column.type, decimal=column.decimal)
        spec = DecodeSpec(
            columns=(plain,), key=(), null_string=params.null_string or None, unmodified_string=None
        )
        typed = decode_file(pa.table({name: text}), spec=spec, kind=FileKind.REPLACE, path=name)
        if column.type is DataType.SHORT:
            # Avro has no 16-bit integer: Fivetran's Short is an Avro int (INT32).
            arrays.append(typed.column(name).cast(pa.int32()))
        else:
            arrays.append(typed.column(name).cast(arrow_type(plain)))
    return pa.table(arrays, names=list(header))


def write_parquet_batch_file(
    path: Path,
    columns: Sequence[Column],
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    params: FileParams,
    key: bytes | None,
    rng: random.Random | None = None,
) -> None:
    """Write one Parquet batch file from text rows, the way Fivetran's Java writer does.

    ``columns`` gives each header name its Fivetran type (``parquet_table``). The Parquet file
    compresses internally with ``params.compression`` (ZSTD, GZIP or none) and is then
    encrypted as CSV files are (16-byte IV prefix, PKCS#7).
    """
    table = parquet_table(columns, header, rows, params=params)
    write_parquet_table(path, table, params=params, key=key, rng=rng)


def write_parquet_table(
    path: Path,
    table: pa.Table,
    *,
    params: FileParams,
    key: bytes | None,
    rng: random.Random | None = None,
) -> None:
    """Write an Arrow table as a (possibly encrypted) Parquet batch file."""
    buffer = io.BytesIO()
    # Parquet format 1.0 data pages and no statistics quirks: AvroParquetWriter's defaults.
    pq.write_table(table, buffer, compression=_PARQUET_CODEC[params.compression])
    data = buffer.getvalue()
    with open(path, "wb") as fh:
        if params.encryption is Encryption.AES:
            iv = rng.randbytes(IV_BYTES) if rng is not None else os.urandom(IV_BYTES)
            aes = _AesWriter(fh, _check_key(key), iv)
            aes.write(data)
            aes.finish()
        else:
            fh.write(data)
