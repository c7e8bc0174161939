"""Parquet batch files (protocol v2, reference §6.3) and the batch-file format setting.

Fivetran writes Parquet with Java's ``AvroParquetWriter`` when Capabilities answer PARQUET:
booleans, INT32/INT64, float/double and decimals typed, instants and dates as strings, binary as
bytes, inside the same AES envelope as CSV. The documents do not say how ``FileParams.
compression`` applies to Parquet, which compresses inside the file; so after decryption a file
that starts with Parquet's magic ``PAR1`` is read as is, and anything else is decompressed as
``compression`` says first. The plaintext stays in memory (files are at most ~100 MB).

Runtime layer: no pyspark here.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from spark_destination.core.errors import BatchFileError, InvalidRequestError
from spark_destination.core.model import Compression, FileParams
from spark_destination.runtime.batch.envelope import PARQUET_MAGIC, open_plain_stream

__all__ = ["read_parquet_batch_file"]


def _plaintext(path: str, key: bytes | None, params: FileParams) -> bytes:
    encrypted_only = dataclasses.replace(params, compression=Compression.OFF)
    with open_plain_stream(path, key=key, params=encrypted_only) as stream:
        data = stream.read()
    if data.startswith(PARQUET_MAGIC) or params.compression is Compression.OFF:
        return data
    try:
        if params.compression is Compression.ZSTD:
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return zlib.decompress(data, wbits=31)
    except (zstandard.ZstdError, zlib.error):
        raise BatchFileError(
            f"batch file '{path}' is neither Parquet nor {params.compression.name} data "
            "(wrong key or corrupted file?)"
        ) from None


def read_parquet_batch_file(
    path: str, *, key: bytes | None, params: FileParams, columns: Sequence[str]
) -> pa.Table:
    """One Parquet batch file as an Arrow table (the file's columns, types as stored).

    An empty (zero bytes after decryption) file has no columns and no rows, as for CSV.
    """
    data = _plaintext(path, key, params)
    if not data:
        return pa.table({})
    if not data.startswith(PARQUET_MAGIC):
        raise BatchFileError(
            f"batch file '{path}' is not a Parquet file, but this destination announced Parquet "
            "in Capabilities (the server's --batch-file-format)"
        )
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        names = list(parquet.schema_arrow.names)
    except (pa.ArrowException, OSError):
        # The library's message may quote bytes of the file: ours names only the file.
        raise BatchFileError(
            f"batch file '{path}' is not a valid Parquet file (corrupt or truncated footer)"
        ) from None
    known = set(columns)
    for name in names:
        if name not in known:
            raise InvalidRequestError(
                f"column '{name}' in batch file '{path}' is not a column of the table"
            )
    if len(set(names)) != len(names):
        raise BatchFileError(f"batch file '{path}' has a column twice in its schema")
    try:
        table = parquet.read(use_threads=False)
    except (pa.ArrowException, OSError):
        raise BatchFileError(
            f"batch file '{path}' is not a valid Parquet file (corrupt data pages)"
        ) from None
    nested = [f.name for f in table.schema if pa.types.is_nested(f.type)]
    if nested:
        raise BatchFileError(
            f"batch file '{path}' stores column '{nested[0]}' as a nested type; Fivetran "
            "columns are flat"
        )
    return table
