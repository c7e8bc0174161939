"""Streaming decoder for Fivetran batch files: AES-256-CBC -> ZSTD/GZIP -> CSV -> Arrow.

Fivetran writes ``Cipher(Compress(csv))`` with a 16-byte IV prefix (protocol reference §6). This
module undoes the layers as a chain of chunk generators, entirely in memory: decrypted plaintext
is never written to disk. The CSV is parsed by pyarrow into a table whose every column is a
non-null ``string``; sentinels (``null_string`` / ``unmodified_string``) are kept verbatim for the
SQL layer to interpret.

Error messages name the file and, for CSV problems, the record number, but never row contents or
key material: they reach logs and Fivetran's dashboard.

This is the runtime layer: no pyspark here.
"""

from __future__ import annotations

import csv
import io
import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

import pyarrow as pa
import pyarrow.csv as pa_csv
import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.errors import BatchFileError
from spark_destination.model import Compression, Encryption, FileParams
from spark_destination.runtime.csv_header import check_header, guard_csv
from spark_destination.runtime.prefetch import prefetched

__all__ = ["open_plain_stream", "read_batch_file"]

KEY_BYTES = 32
IV_BYTES = 16
AES_BLOCK_BYTES = 16
CHUNK_BYTES = 1 << 20

# pyarrow fails when one CSV record straddles two blocks, so a single value larger than the block
# cannot be parsed. Start generous and retry with bigger blocks: such values are rare, and a
# block at least as large as the decoded file can never be straddled.
_FIRST_BLOCK_BYTES = 4 << 20
_MAX_BLOCK_BYTES = 1 << 30
# Decoded chunks (a few MiB each) the decoding thread may run ahead of the parser.
_PREFETCH_CHUNKS = 4


# ---------------------------------------------------------------------------------------------
# Byte layers: file -> decrypt -> decompress, each a generator of non-empty chunks.
# ---------------------------------------------------------------------------------------------


class _ChunkStream(io.RawIOBase):
    """A read-only raw stream over an iterator of byte chunks.

    Exceptions raised by the iterator (our BatchFileErrors) surface from ``read``; pyarrow
    re-raises Python exceptions from file objects unchanged, so they reach the caller as is.
    """

    def __init__(self, chunks: Iterator[bytes], on_close: Callable[[], None]) -> None:
        super().__init__()
        self._chunks = chunks
        self._on_close = on_close
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        target = memoryview(buffer).cast("B")
        n = min(len(target), len(self._pending))
        target[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            # Stop the generator chain first (releases decoder state), then the file.
            close_chunks = getattr(self._chunks, "close", None)
            if close_chunks is not None:
                close_chunks()
            self._on_close()
        super().close()


def _file_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    while True:
        try:
            chunk = fh.read(CHUNK_BYTES)
        except OSError as exc:
            raise BatchFileError(f"cannot read batch file '{path}': {exc.strerror}") from None
        if not chunk:
            return
        yield chunk


def _open_file(path: str) -> BinaryIO:
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the stream that owns it
    except FileNotFoundError:
        raise BatchFileError(f"batch file '{path}' does not exist") from None
    except OSError as exc:
        raise BatchFileError(f"cannot open batch file '{path}': {exc.strerror}") from None


def _check_key(path: str, key: bytes | None) -> bytes:
    # Never echo the key: only its length may appear in a message.
    if key is None:
        raise BatchFileError(f"batch file '{path}' is AES-encrypted but no key was sent for it")
    if len(key) != KEY_BYTES:
        raise BatchFileError(
            f"the key for batch file '{path}' is {len(key)} bytes; AES-256 needs {KEY_BYTES}"
        )
    return key


def _check_ciphertext_size(fh: BinaryIO, path: str) -> None:
    """Fail fast on an obviously truncated file: IV plus whole blocks, at least one (padding)."""
    size = os.fstat(fh.fileno()).st_size
    body = size - IV_BYTES
    if body < AES_BLOCK_BYTES:
        raise BatchFileError(
            f"batch file '{path}' is truncated: {size} bytes is too short for an AES IV "
            "and one block"
        )
    if body % AES_BLOCK_BYTES:
        raise BatchFileError(
            f"batch file '{path}' is truncated: ciphertext length {body} is not a multiple of "
            f"{AES_BLOCK_BYTES}"
        )


def _decrypt(chunks: Iterator[bytes], key: bytes, iv: bytes, path: str) -> Iterator[bytes]:
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    # The unpadder holds back the last block until finalize, so padding is stripped in-stream.
    unpadder = padding.PKCS7(AES_BLOCK_BYTES * 8).unpadder()
    for chunk in chunks:
        plain = unpadder.update(decryptor.update(chunk))
        if plain:
            yield plain
    try:
        tail = unpadder.update(decryptor.finalize()) + unpadder.finalize()
    except ValueError:
        # Bad PKCS#7 padding is the only integrity signal CBC gives: a wrong key almost always
        # trips it (and the decompressor catches most of the rest).
        raise BatchFileError(
            f"cannot decrypt batch file '{path}': wrong key or corrupted file"
        ) from None
    if tail:
        yield tail


def _bad_compressed(path: str, codec: str) -> BatchFileError:
    return BatchFileError(
        f"batch file '{path}' is not valid {codec} data (wrong key or corrupted file?)"
    )


def _decompress_zstd(chunks: Iterator[bytes], path: str) -> Iterator[bytes]:
    """Stream-decompress one or more concatenated zstd frames.

    Uses ``decompressobj`` rather than ``stream_reader`` because the reader silently returns
    short (even empty) output for a truncated frame; ``eof`` lets us detect truncation.
    """
    dctx = zstandard.ZstdDecompressor()
    dobj = dctx.decompressobj()
    consumed_any = False
    in_frame = False
    for chunk in chunks:
        consumed_any = True
        data = chunk
        while data:
            try:
                out = dobj.decompress(data)
            except zstandard.ZstdError:
                raise _bad_compressed(path, "zstd") from None
            in_frame = not dobj.eof
            if out:
                yield out
            data = dobj.unused_data if dobj.eof else b""
            if dobj.eof:
                dobj = dctx.decompressobj()
    # An input of zero bytes decodes to nothing (as Python's gzip does); anything else must end
    # on a frame boundary.
    if consumed_any and in_frame:
        raise BatchFileError(f"batch file '{path}' is truncated: the zstd stream ends mid-frame")


def _decompress_gzip(chunks: Iterator[bytes], path: str) -> Iterator[bytes]:
    """Stream-decompress one or more gzip members; zlib checks each member's CRC32 trailer."""
    dobj = zlib.decompressobj(wbits=31)
    consumed_any = False
    in_member = False
    for chunk in chunks:
        consumed_any = True
        data = chunk
        while data:
            try:
                out = dobj.decompress(data)
            except zlib.error:
                raise _bad_compressed(path, "gzip") from None
            in_member = not dobj.eof
            if out:
                yield out
            data = dobj.unused_data if dobj.eof else b""
            if dobj.eof:
                dobj = zlib.decompressobj(wbits=31)
    if consumed_any and in_member:
        raise BatchFileError(f"batch file '{path}' is truncated: the gzip stream ends mid-member")


def _plain_chunks(
    path: str, key: bytes | None, params: FileParams
) -> tuple[Iterator[bytes], BinaryIO]:
    """Build the decoding chain; returns the plaintext chunks and the file that must be closed.

    Key, existence and size problems are raised here, eagerly, not on first read.
    """
    if params.encryption is Encryption.AES:
        aes_key = _check_key(path, key)
    fh = _open_file(path)
    try:
        chunks = _file_chunks(fh, path)
        if params.encryption is Encryption.AES:
            _check_ciphertext_size(fh, path)
            iv = fh.read(IV_BYTES)
            chunks = _decrypt(chunks, aes_key, iv, path)
        if params.compression is Compression.ZSTD:
            chunks = _decompress_zstd(chunks, path)
        elif params.compression is Compression.GZIP:
            chunks = _decompress_gzip(chunks, path)
    except BaseException:
        fh.close()
        raise
    return chunks, fh


def _as_stream(chunks: Iterator[bytes], fh: BinaryIO) -> io.BufferedReader:
    return io.BufferedReader(_ChunkStream(chunks, fh.close), buffer_size=CHUNK_BYTES)


def open_plain_stream(path: str, *, key: bytes | None, params: FileParams) -> BinaryIO:
    """Open a batch file and return its decrypted, decompressed bytes as a read-only stream.

    The result is a context manager; closing it closes the file. Decoding errors surface as
    ``BatchFileError`` from ``read``.
    """
    chunks, fh = _plain_chunks(path, key, params)
    return _as_stream(chunks, fh)


# ---------------------------------------------------------------------------------------------
# CSV layer.
# ---------------------------------------------------------------------------------------------


class _BlockTooSmall(Exception):
    """pyarrow could not fit one CSV record into a block; retry with a bigger one."""


_ROW = re.compile(r"Row #(\d+)")
_FIELD_COUNT = re.compile(r"Expected (\d+) columns, got (\d+)")
_COLUMN_INDEX = re.compile(r"In CSV column #(\d+)")


def _csv_error(path: str, exc: Exception, header: Sequence[str]) -> Exception:
    """Map a pyarrow CSV error to a message with no row contents.

    pyarrow appends the offending row text to its messages, so only numbers are extracted from
    them (record number, field counts, column index); the wording is ours.
    """
    text = str(exc)
    if "straddle" in text:
        return _BlockTooSmall()
    row = _ROW.search(text)
    # pyarrow counts the header as record 1; records may span lines (embedded newlines).
    where = f" at record {row.group(1)} (the header is record 1)" if row else ""
    counts = _FIELD_COUNT.search(text)
    if counts:
        detail = f"expected {counts.group(1)} fields, got {counts.group(2)}"
    elif "invalid UTF8" in text:
        column = _COLUMN_INDEX.search(text)
        index = int(column.group(1)) if column else -1
        if 0 <= index < len(header):
            named = f" in column '{header[index]}'"
        else:
            # The error came while opening, before the header was available to us.
            named = f" in the file's column {index + 1}" if index >= 0 else ""
        detail = f"invalid UTF-8 text{named}"
    else:
        detail = "malformed CSV"
    return BatchFileError(f"batch file '{path}' is not valid CSV{where}: {detail}")


def _csv_options(
    columns: Sequence[str], block_size: int, convert: pa_csv.ConvertOptions | None = None
) -> dict[str, object]:
    return {
        # Serial parsing when converting to text: pyarrow only reports record numbers when not
        # using threads. A typed parse (``convert``, runtime.typed_csv) never shows pyarrow's
        # errors (the text parse runs again to name the problem), so it may use threads.
        "read_options": pa_csv.ReadOptions(use_threads=convert is not None, block_size=block_size),
        "parse_options": pa_csv.ParseOptions(
            delimiter=",",
            quote_char='"',
            double_quote=True,
            escape_char=False,  # Jackson never escapes with '\': it is a literal
            newlines_in_values=True,
            # Jackson never writes blank lines (an empty string is written as ""); skipping is
            # pyarrow's default and avoids phantom all-empty rows.
            ignore_empty_lines=True,
        ),
        "convert_options": convert
        or pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in columns},
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        ),
    }


def first_record(path: str, key: bytes | None, params: FileParams) -> list[str]:
    """The file's first CSV record, decoded afresh (error path only: naming a column)."""
    try:
        with open_plain_stream(path, key=key, params=params) as stream:
            head = stream.read(_FIRST_BLOCK_BYTES)
    except BatchFileError:
        return []
    text = head.decode("utf-8", errors="replace")
    return next(csv.reader(io.StringIO(text, newline="")), [])


def _parse_csv(
    stream: BinaryIO,
    path: str,
    columns: Sequence[str],
    block_size: int,
    header_of: Callable[[], list[str]],
    convert: pa_csv.ConvertOptions | None,
) -> pa.Table:
    header: list[str] = []
    try:
        reader = pa_csv.open_csv(stream, **_csv_options(columns, block_size, convert))
        header = list(reader.schema.names)
        # Checked before reading the rest: a column unknown to the table got an inferred type
        # and must not be parsed further.
        check_header(path, header, columns)
        return reader.read_all()
    except pa.ArrowException as exc:
        if isinstance(exc, MemoryError):  # ArrowMemoryError is not a problem with the file
            raise
        # pyarrow converts the first block while opening, so an error there comes before we
        # know the header; read it again only then, to name the column.
        raise _csv_error(path, exc, header or header_of()) from None


def read_batch_file(
    path: str,
    *,
    key: bytes | None,
    params: FileParams,
    columns: Sequence[str],
    convert: pa_csv.ConvertOptions | None = None,
    blanks: list[int] | None = None,
) -> pa.Table:
    """Decode and parse one batch file into a table of non-null string columns.

    The table's columns are the header's, in header order; the caller fills absent columns.
    A file that decodes to zero bytes has no header and is refused; a header-only file is a
    valid batch of no rows. ``convert`` replaces the all-text conversion and ``blanks`` receives
    the count of spaces and tabs in the text (both for runtime.typed_csv).
    """
    block_size = _FIRST_BLOCK_BYTES
    while True:
        try:
            return _read_once(path, key, params, columns, block_size, convert, blanks)
        except _BlockTooSmall:
            if block_size >= _MAX_BLOCK_BYTES:
                raise BatchFileError(
                    f"batch file '{path}' has a record larger than {_MAX_BLOCK_BYTES >> 20} MiB"
                ) from None
            # Decoding is deterministic, so simply decode the file again.
            block_size *= 4


def _read_once(
    path: str,
    key: bytes | None,
    params: FileParams,
    columns: Sequence[str],
    block_size: int,
    convert: pa_csv.ConvertOptions | None,
    blanks: list[int] | None,
) -> pa.Table:
    chunks, fh = _plain_chunks(path, key, params)
    # The byte layers run in a helper thread, overlapping pyarrow's parse (runtime.prefetch).
    guarded = guard_csv(chunks, path, blanks)
    with _as_stream(prefetched(guarded, _PREFETCH_CHUNKS), fh) as stream:
        if not stream.peek(1):
            # Fivetran always writes a header, so zero bytes means a file cut short (or never
            # written), not an empty batch: loading it as no rows would hide the loss.
            raise BatchFileError(
                f"batch file '{path}' is empty: zero bytes after decoding, not even a header row"
            )
        return _parse_csv(
            stream,
            path,
            columns,
            block_size,
            lambda: first_record(path, key, params),
            convert,
        )
