"""The CSV layer of a batch file as text: every column a non-null ``string``.

The precise path of typed staging (``typed_csv`` takes the fast one where it can): pyarrow
parses the decrypted, decompressed text (``envelope``) while a helper thread decodes ahead
(``prefetch``); sentinels (``null_string`` / ``unmodified_string``) are kept verbatim for
``typed_decode`` to interpret. Error messages name the file and the record number, never row
contents. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import BinaryIO

import pyarrow as pa
import pyarrow.csv as pa_csv

from spark_destination.core.errors import BatchFileError
from spark_destination.core.model import FileParams
from spark_destination.runtime.batch.csv_header import check_header, guard_csv
from spark_destination.runtime.batch.envelope import (
    as_stream,
    open_plain_stream,
    plain_chunks,
)
from spark_destination.runtime.batch.prefetch import prefetched

# pyarrow fails when one CSV record straddles two blocks, so a single value larger than the block
# cannot be parsed. Start generous and retry with bigger blocks: such values are rare, and a
# block at least as large as the decoded file can never be straddled.
_FIRST_BLOCK_BYTES = 4 << 20
_MAX_BLOCK_BYTES = 1 << 30
# Decoded chunks the decoding thread may run ahead of the parser: a compressed file's chunks
# come from envelope.DECOMPRESS_SLICE_BYTES of input each, so this holds back at most 4 MiB of
# input decompressed (1.5 MiB chunks at the bench's 12:1), an uncompressed file's at most
# 32 MiB (chunks of envelope.CHUNK_BYTES).
_PREFETCH_CHUNKS = 32


class _BlockTooSmall(Exception):
    """pyarrow could not fit one CSV record into a block; retry with a bigger one."""


class UnconvertedColumn(BatchFileError):
    """A typed parse (``convert``: ``typed_csv``'s fast attempt) met a value the converter of
    the file's column ``index`` (0-based, in header order) refuses."""

    def __init__(self, message: str, *, index: int) -> None:
        super().__init__(message)
        self.index = index


_ROW = re.compile(r"Row #(\d+)")
_FIELD_COUNT = re.compile(r"Expected (\d+) columns, got (\d+)")
_COLUMN_INDEX = re.compile(r"In CSV column #(\d+)")


def _csv_error(path: str, exc: Exception, header_of: Callable[[], Sequence[str]]) -> Exception:
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
    column = _COLUMN_INDEX.search(text)
    if "CSV conversion error" in text and column and "invalid UTF8" not in text:
        index = int(column.group(1))
        return UnconvertedColumn(
            f"batch file '{path}' holds a value its column {index + 1} does not take",
            index=index,
        )
    if counts:
        detail = f"expected {counts.group(1)} fields, got {counts.group(2)}"
    elif "invalid UTF8" in text:
        header = header_of()
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
        # using threads. A typed parse (``convert``, runtime.batch.typed_csv) never shows pyarrow's
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


def first_block(
    path: str, key: bytes | None, params: FileParams, columns: Sequence[str]
) -> pa.Table | None:
    """The records of the file's first parse block, as text, its columns in header order (a
    sample: ``typed_csv`` looks in it for the columns a typed parse would refuse); None when
    it cannot be parsed (the whole file's parse then says why)."""
    try:
        with open_plain_stream(path, key=key, params=params) as stream:
            reader = pa_csv.open_csv(stream, **_csv_options(columns, _FIRST_BLOCK_BYTES))
            return pa.Table.from_batches([reader.read_next_batch()], schema=reader.schema)
    except (pa.ArrowException, BatchFileError, StopIteration):
        return None


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
        # know the header; read it again only then, and only to name a column.
        raise _csv_error(path, exc, lambda: header or header_of()) from None


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
    the count of spaces and tabs in the text (both for runtime.batch.typed_csv).
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
    chunks, fh = plain_chunks(path, key, params)
    # The byte layers run in a helper thread, overlapping pyarrow's parse (runtime.batch.prefetch).
    guarded = guard_csv(chunks, path, blanks)
    with as_stream(prefetched(guarded, _PREFETCH_CHUNKS), fh) as stream:
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
