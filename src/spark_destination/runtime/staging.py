"""Stage a request's batch files as one all-string Spark temp view.

Files are decoded in memory (never written decrypted to persistent disk), normalised to the
table's columns, tagged with the row operation and a global sequence number, and handed to Spark
either through Arrow (works on any cluster: the data travels through the driver) or, for a local
master, as a Parquet file on a RAM-backed tmpfs, which Spark reads faster.
"""

from __future__ import annotations

import enum
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spark_destination.model import FileKind, FileParams
from spark_destination.planner.ir import (
    DUP_COLUMN,
    OP_COLUMN,
    SEQ_COLUMN,
    RowOp,
    StageBatchOp,
    StagedFile,
)
from spark_destination.runtime import scratch
from spark_destination.runtime.batch_files import read_batch_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

_ROW_OP = {
    FileKind.REPLACE: RowOp.UPSERT,
    FileKind.UPDATE: RowOp.UPDATE,
    FileKind.DELETE: RowOp.DELETE,
    FileKind.EARLIEST_START: RowOp.EARLIEST_START,
}

# RAM-backed on Linux: decrypted rows staged here never reach persistent storage.
TMPFS = Path("/dev/shm")  # noqa: S108 - deliberately the RAM-backed tmpfs

log = logging.getLogger(__name__)


class Transport(enum.Enum):
    ARROW = "arrow"
    TMPFS_PARQUET = "tmpfs-parquet"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSpan:
    """Rows ``first_seq .. first_seq + rows - 1`` of the staged view came from ``file``."""

    file: StagedFile
    first_seq: int
    rows: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedBatch:
    view: str
    rows: int
    spans: tuple[FileSpan, ...]
    # Rows whose key occurs more than once in the batch (they need folding).
    repeated_rows: int = 0

    def locate(self, seq: int) -> tuple[StagedFile, int]:
        """The file and 1-based data row (header excluded) a sequence number came from."""
        for span in self.spans:
            if span.first_seq <= seq < span.first_seq + span.rows:
                return span.file, seq - span.first_seq + 1
        raise KeyError(seq)


def _fill_value(kind: FileKind, params: FileParams) -> str:
    """What a column absent from a file's header means for that kind of file."""
    if kind is FileKind.UPDATE and params.unmodified_string:
        return params.unmodified_string
    return params.null_string


def _normalise(
    table: pa.Table, columns: Sequence[str], kind: FileKind, params: FileParams, first_seq: int
) -> pa.Table:
    rows = table.num_rows
    fill = pa.scalar(_fill_value(kind, params), pa.string())
    arrays = [
        table.column(name) if name in table.column_names else pa.repeat(fill, rows)
        for name in columns
    ]
    arrays.append(pa.repeat(pa.scalar(_ROW_OP[kind].value, pa.string()), rows))
    arrays.append(pa.array(range(first_seq, first_seq + rows), pa.int64()))
    return pa.Table.from_arrays(arrays, names=[*columns, OP_COLUMN, SEQ_COLUMN])


def decode_batch(
    op: StageBatchOp, *, keys: Mapping[str, bytes], params: FileParams
) -> tuple[pa.Table, tuple[FileSpan, ...]]:
    """Every file of ``op`` as one Arrow table of the view's columns, in processing order."""
    parts: list[pa.Table] = []
    spans: list[FileSpan] = []
    seq = 0
    for staged in op.files:
        table = read_batch_file(
            staged.path, key=keys.get(staged.path), params=params, columns=op.columns
        )
        log.info("decoded %d row(s) from %s", table.num_rows, os.path.basename(staged.path))
        parts.append(_normalise(table, op.columns, staged.kind, params, seq))
        spans.append(FileSpan(file=staged, first_seq=seq, rows=table.num_rows))
        seq += table.num_rows
    schema = pa.schema(
        [
            *(pa.field(c, pa.string(), nullable=False) for c in op.columns),
            pa.field(OP_COLUMN, pa.string(), nullable=False),
            pa.field(SEQ_COLUMN, pa.int64(), nullable=False),
        ]
    )
    combined = pa.concat_tables([p.cast(schema) for p in parts]) if parts else schema.empty_table()
    combined = combined.append_column(
        pa.field(DUP_COLUMN, pa.bool_(), nullable=False), duplicate_mask(combined, op.key)
    )
    return combined, tuple(spans)


def duplicate_mask(table: pa.Table, key: Sequence[str]) -> pa.Array:
    """True on rows whose raw key values occur on more than one row.

    Fivetran normally sends each key once per batch, so usually nothing is marked and the MERGE
    skips the (sort-based, costly) fold; the destination tester does repeat keys.
    """
    rows = table.num_rows
    mask = np.zeros(rows, dtype=bool)
    if rows and key:
        index = "__sd_row"
        keyed = table.select(list(key)).append_column(index, pa.array(np.arange(rows)))
        counts = keyed.group_by(list(key)).aggregate([(index, "count")])
        repeated = counts.filter(pc.greater(counts[f"{index}_count"], 1)).select(list(key))
        if repeated.num_rows:
            hits = keyed.join(repeated, keys=list(key), join_type="inner")
            mask[hits.column(index).to_numpy()] = True
    return pa.array(mask, pa.bool_())


def choose_transport(session: SparkSession) -> Transport:
    master = session.sparkContext.master or ""
    if master.startswith("local") and TMPFS.is_dir() and os.access(TMPFS, os.W_OK):
        return Transport.TMPFS_PARQUET
    return Transport.ARROW


class Stager:
    """Registers staged views on one session and removes them, and their files, afterwards."""

    def __init__(self, session: SparkSession, transport: Transport | None = None) -> None:
        self._session = session
        self._transport = transport or choose_transport(session)
        self._views: list[str] = []
        self._dirs: list[Path] = []

    def stage(
        self, op: StageBatchOp, *, keys: Mapping[str, bytes], params: FileParams
    ) -> StagedBatch:
        table, spans = decode_batch(op, keys=keys, params=params)
        match self._transport:
            case Transport.TMPFS_PARQUET:
                folder = Path(tempfile.mkdtemp(prefix="staged-", dir=scratch.process_dir()))
                self._dirs.append(folder)
                # Uncompressed: the file lives in RAM for seconds; compressing costs more than
                # it saves. Row groups of 64k rows and small read splits let every core work on
                # a large batch (one split per ~8 MiB instead of one per 128 MiB file).
                pq.write_table(
                    table, folder / "batch.parquet", compression="NONE", row_group_size=1 << 16
                )
                self._session.conf.set("spark.sql.files.maxPartitionBytes", str(8 << 20))
                frame = self._session.read.parquet(str(folder))
            case Transport.ARROW:
                frame = self._session.createDataFrame(table.to_pandas(), schema=_spark_schema(op))
        frame.createOrReplaceTempView(op.view)
        self._views.append(op.view)
        repeated = pc.sum(table.column(DUP_COLUMN)).as_py() or 0
        return StagedBatch(view=op.view, rows=table.num_rows, spans=spans, repeated_rows=repeated)

    def cleanup(self) -> None:
        try:
            for view in self._views:
                self._session.catalog.dropTempView(view)
            self._views.clear()
        finally:
            # Even when the JVM is gone (dropping a view fails): the files hold decrypted rows.
            for folder in self._dirs:
                shutil.rmtree(folder, ignore_errors=True)
            self._dirs.clear()


def _spark_schema(op: StageBatchOp) -> StructType:
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

    return StructType(
        [
            *(StructField(c, StringType(), nullable=False) for c in op.columns),
            StructField(OP_COLUMN, StringType(), nullable=False),
            StructField(SEQ_COLUMN, LongType(), nullable=False),
            StructField(DUP_COLUMN, BooleanType(), nullable=False),
        ]
    )
