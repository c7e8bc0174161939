"""The one interface staging decodes batch files through: a file in, its typed table out.

Each format has one decoder with one signature, so staging never asks which format it holds:

* CSV: ``typed_csv.decode_csv_file`` (pyarrow types the columns it can type exactly while it
  parses; anything else takes the precise path: parse as text, then ``typed_decode``);
* Parquet: the file's own columns (``parquet_files``), then ``typed_decode``.

Either gives ``DecodeSpec.schema()`` or raises naming file, data row, column and type (never a
value); with lenient columns (``bad_value_policy=null``) the values changed instead are
appended to ``changes``. Runtime layer: no pyspark here.
"""

from __future__ import annotations

from typing import Protocol, assert_never

import pyarrow as pa

from spark_destination.core.config import BatchFileFormat
from spark_destination.core.model import FileKind, FileParams
from spark_destination.runtime.batch.parquet_files import read_parquet_batch_file
from spark_destination.runtime.batch.typed_csv import decode_csv_file
from spark_destination.runtime.batch.typed_decode import DecodeSpec, decode_file
from spark_destination.runtime.batch.value_changes import ColumnChanges

__all__ = ["BatchFileDecoder", "decode_parquet_file", "decoder_for"]


class BatchFileDecoder(Protocol):
    def __call__(
        self,
        path: str,
        *,
        key: bytes | None,
        params: FileParams,
        spec: DecodeSpec,
        kind: FileKind,
        changes: list[ColumnChanges] | None = None,
    ) -> pa.Table: ...


def decode_parquet_file(
    path: str,
    *,
    key: bytes | None,
    params: FileParams,
    spec: DecodeSpec,
    kind: FileKind,
    changes: list[ColumnChanges] | None = None,
) -> pa.Table:
    """The typed table of one Parquet batch file."""
    names = [c.name for c in spec.columns]
    raw = read_parquet_batch_file(path, key=key, params=params, columns=names)
    return decode_file(raw, spec=spec, kind=kind, path=path, changes=changes)


def decoder_for(file_format: BatchFileFormat) -> BatchFileDecoder:
    match file_format:
        case BatchFileFormat.CSV:
            return decode_csv_file
        case BatchFileFormat.PARQUET:
            return decode_parquet_file
        case _:
            assert_never(file_format)
