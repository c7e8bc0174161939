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
from typing import BinaryIO, Protocol, cast

import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.model import Compression, Encryption, FileParams

__all__ = ["new_key", "quote_field", "shuffled", "write_batch_file"]

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
