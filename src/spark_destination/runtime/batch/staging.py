"""Stage a request's batch files as one typed Spark temp view.

Files are decoded in memory (never written decrypted to persistent disk) into typed Arrow
columns (``typed_decode``: the value check happens here, before anything is written), tagged
with the row operation and a global sequence number, and handed to Spark either through Arrow
(works on any cluster: the data travels through the driver) or, for a local master, as
Parquet files on a RAM-backed tmpfs, which Spark reads faster.
"""

from __future__ import annotations

import enum
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spark_destination.core.model import SYNCED, FileParams
from spark_destination.planner.ir import (
    DUP_COLUMN,
    OP_COLUMN,
    SEQ_COLUMN,
    RowOp,
    StageBatchOp,
    StagedFile,
    masked_columns,
    unmodified_column,
)
from spark_destination.runtime.batch.arrow_threads import WORKERS, in_parallel
from spark_destination.runtime.batch.decoders import BatchFileDecoder
from spark_destination.runtime.batch.staging_space import fits, is_out_of_space, staging_dir
from spark_destination.runtime.batch.typed_csv import decode_csv_file
from spark_destination.runtime.batch.typed_decode import ROW_OP, DecodeSpec
from spark_destination.runtime.batch.value_changes import (
    ChangeCount,
    ColumnChanges,
    count_changes,
    file_records,
    records_schema,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

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
    # Rows whose key occurs more than once among the op's ``repeats_among`` rows (a WriteBatch
    # folds them; a history batch with any cannot take the full-versions form).
    repeated_rows: int = 0
    # Some staged value is "unmodified" (the MERGE must read stored values to fill it).
    unmodified_values: bool = False
    # The staged key columns, each key once (zero-copy slices of the staged Arrow table when
    # no key repeats), for the MERGE's key filter; None when the batch was not staged from
    # Arrow here.
    keys: pa.Table | None = None
    # bad_value_policy=null: the values staging changed, counted per column and reason (their
    # records are the view ``StageBatchOp.changes_view``).
    changes: tuple[ChangeCount, ...] = ()


def decode_spec(op: StageBatchOp, type_texts: tuple[tuple[str, str], ...] = ()) -> DecodeSpec:
    return DecodeSpec(
        columns=op.columns,
        key=op.key,
        null_string=op.null_string,
        unmodified_string=op.unmodified_string,
        required=op.required,
        type_texts=type_texts,
        lenient=op.lenient,
        max_lengths=op.max_lengths,
    )


def decode_batch(
    op: StageBatchOp,
    *,
    keys: Mapping[str, bytes],
    params: FileParams,
    decoder: BatchFileDecoder = decode_csv_file,
    type_texts: tuple[tuple[str, str], ...] = (),
    records: list[pa.Table] | None = None,
) -> tuple[pa.Table, tuple[FileSpan, ...]]:
    """Every file of ``op`` as one typed Arrow table of the view's columns, in processing order.

    Raises (naming file, data row, column and type) on the first file with a value that does
    not fit, before any Spark work; with lenient columns (``bad_value_policy=null``) the
    records of the values changed instead are appended to ``records`` (``records_for``).
    """
    spec = decode_spec(op, type_texts)
    parts: list[pa.Table] = []
    spans: list[FileSpan] = []
    seq = 0
    for staged in op.files:
        key = keys.get(staged.path)
        changes: list[ColumnChanges] | None = [] if op.lenient else None
        typed = decoder(
            staged.path, key=key, params=params, spec=spec, kind=staged.kind, changes=changes
        )
        if changes and records is not None:
            records.append(records_for(op, spec, staged.path, typed, changes))
        rows = typed.num_rows
        log.info("decoded %d row(s) from %s", rows, os.path.basename(staged.path))
        typed = typed.append_column(
            pa.field(OP_COLUMN, pa.string(), nullable=False),
            pa.repeat(pa.scalar(ROW_OP[staged.kind].value, pa.string()), rows),
        )
        typed = typed.append_column(
            pa.field(SEQ_COLUMN, pa.int64(), nullable=False),
            pa.array(np.arange(seq, seq + rows, dtype=np.int64)),
        )
        parts.append(typed)
        spans.append(FileSpan(file=staged, first_seq=seq, rows=rows))
        seq += rows
    schema = spec.schema()
    schema = schema.append(pa.field(OP_COLUMN, pa.string(), nullable=False))
    schema = schema.append(pa.field(SEQ_COLUMN, pa.int64(), nullable=False))
    combined = pa.concat_tables(parts) if parts else schema.empty_table()
    dup = duplicate_mask(combined, op.key, among=op.repeats_among)
    combined = combined.append_column(pa.field(DUP_COLUMN, pa.bool_(), nullable=False), dup)
    return combined, tuple(spans)


def records_for(
    op: StageBatchOp, spec: DecodeSpec, path: str, typed: pa.Table, changes: list[ColumnChanges]
) -> pa.Table:
    """The records of one decoded file's changed values (the records view's rows)."""
    schema = spec.schema()
    synced = SYNCED if SYNCED in schema.names else None
    return file_records(
        path,
        typed,
        changes,
        key=op.changes_key,
        synced=synced,
        schema=records_schema(
            [schema.field(k).type for k in op.changes_key],
            schema.field(SYNCED).type if synced else pa.timestamp("us", tz="UTC"),
        ),
    )


def duplicate_mask(
    table: pa.Table, key: Sequence[str], *, among: Sequence[RowOp] = tuple(RowOp)
) -> pa.Array:
    """True on rows of the ``among`` operations whose (typed) key values occur on more than one
    of those rows.

    Fivetran normally sends each key once per batch, so usually nothing is marked and the MERGE
    skips the (sort-based, costly) fold; the destination tester does repeat keys.
    """
    rows = table.num_rows
    mask = np.zeros(rows, dtype=bool)
    if rows and key and among:
        index = "__sd_row"
        keyed, names = _key_columns(table, key)
        keyed = keyed.append_column(index, pa.array(np.arange(rows)))
        if set(among) != set(RowOp):
            ops = pa.array([o.value for o in among], pa.string())
            keyed = keyed.filter(pc.is_in(table.column(OP_COLUMN), value_set=ops))
        counts = keyed.group_by(names).aggregate([(index, "count")])
        repeated = counts.filter(pc.greater(counts[f"{index}_count"], 1)).select(names)
        if repeated.num_rows:
            hits = keyed.join(repeated, keys=names, join_type="inner")
            mask[hits.column(index).to_numpy()] = True
    return pa.array(mask, pa.bool_())


def distinct_keys(table: pa.Table, key: Sequence[str]) -> pa.Table:
    """``table``'s ``key`` columns, each (typed) key once. Only for a batch whose keys repeat
    (a group-by); otherwise the key columns are already distinct."""
    keyed, names = _key_columns(table, key)
    return keyed.group_by(names).aggregate([]).select(names).rename_columns(list(key))


def _key_columns(table: pa.Table, key: Sequence[str]) -> tuple[pa.Table, list[str]]:
    """The key columns under names of our own, and those names: Acero reads a name that
    starts with "." or "[" (a key column "../k" or ".x") as a path into nested fields, and
    fails."""
    names = [f"__sd_key_{i}" for i in range(len(key))]
    return table.select(list(key)).rename_columns(names), names


def choose_transport(session: SparkSession) -> Transport:
    master = session.sparkContext.master or ""
    if master.startswith("local") and staging_dir() is not None:
        return Transport.TMPFS_PARQUET
    return Transport.ARROW


class Stager:
    """Registers staged views on one session and removes them, and their files, afterwards."""

    def __init__(
        self,
        session: SparkSession,
        transport: Transport | None = None,
        decoder: BatchFileDecoder = decode_csv_file,
    ) -> None:
        self._session = session
        self._transport = transport or choose_transport(session)
        self._decoder = decoder
        self._views: list[str] = []
        self._dirs: list[Path] = []

    def stage(
        self,
        op: StageBatchOp,
        *,
        keys: Mapping[str, bytes],
        params: FileParams,
        type_texts: tuple[tuple[str, str], ...] = (),
    ) -> StagedBatch:
        records: list[pa.Table] = []
        started = time.perf_counter()
        table, spans = decode_batch(
            op,
            keys=keys,
            params=params,
            decoder=self._decoder,
            type_texts=type_texts,
            records=records,
        )
        decoded = time.perf_counter()
        changes = self._stage_records(op, records)
        frame = None
        transport = self._transport
        if transport is Transport.TMPFS_PARQUET:
            frame = self._stage_on_tmpfs(table)
        if frame is None:
            transport = Transport.ARROW
            frame = arrow_frame(self._session, table)
        frame.createOrReplaceTempView(op.view)
        self._views.append(op.view)
        # The step's time split (the executor logs the whole): decrypting, parsing and
        # checking in Python, then handing the typed rows to Spark.
        log.info(
            "staged %d row(s): decoded in %.2f s, handed to Spark (%s) in %.2f s",
            table.num_rows,
            decoded - started,
            transport.value,
            time.perf_counter() - decoded,
        )
        repeated = pc.sum(table.column(DUP_COLUMN)).as_py() or 0
        keys = distinct_keys(table, op.key) if repeated else table.select(list(op.key))
        masks = masked_columns(op.columns, op.key, op.unmodified_string)
        unmodified = any(pc.any(table.column(unmodified_column(c))).as_py() for c in masks)
        return StagedBatch(
            view=op.view,
            rows=table.num_rows,
            spans=spans,
            repeated_rows=repeated,
            unmodified_values=unmodified,
            keys=keys,
            changes=changes,
        )

    def _stage_records(self, op: StageBatchOp, records: list[pa.Table]) -> tuple[ChangeCount, ...]:
        """Register the records of the values staging changed as ``op.changes_view`` (a few
        rows, through Arrow); their counts. Nothing when no value changed."""
        if not records or op.changes_view is None:
            return ()
        table = pa.concat_tables(records)
        arrow_frame(self._session, table).createOrReplaceTempView(op.changes_view)
        self._views.append(op.changes_view)
        return count_changes(table)

    def _stage_on_tmpfs(self, table: pa.Table) -> DataFrame | None:
        """The batch as a Parquet file on the RAM-backed staging folder; None if it does not fit.

        Falling back to Arrow (never to another folder) keeps decrypted rows off persistent disk.
        """
        tmpfs = staging_dir()
        if tmpfs is None or not fits(tmpfs, table.nbytes):
            log.info(
                "staging %d rows (%d MiB) through Arrow: the staging folder %s has too little room",
                table.num_rows,
                table.nbytes >> 20,
                tmpfs,
            )
            return None
        folder = Path(tempfile.mkdtemp(prefix="staged-", dir=tmpfs))
        self._dirs.append(folder)

        def write(piece: tuple[int, pa.Table]) -> None:
            # Uncompressed, plain-encoded, without statistics: the file lives in RAM for
            # seconds and is read once, whole; dictionary encoding and min/max statistics cost
            # more than they save (1M bench rows: write 0.54 -> 0.18 s; write plus a full Spark
            # read 1.65 -> 0.99 s). Row groups of 64k rows and small read splits let every core
            # work on a large batch (one split per ~8 MiB instead of one per 128 MiB file).
            number, rows = piece
            pq.write_table(
                rows,
                folder / f"batch-{number}.parquet",
                compression="NONE",
                use_dictionary=False,
                write_statistics=False,
                row_group_size=_ROW_GROUP_ROWS,
            )

        try:
            # A big batch is written as one file per thread, side by side; Spark reads the
            # folder (the view's rows carry their own order, SEQ_COLUMN).
            for _ in in_parallel(write, enumerate(_pieces(table)), rows=table.num_rows):
                pass
        except OSError as exc:
            if not is_out_of_space(exc):
                raise
            shutil.rmtree(folder, ignore_errors=True)
            log.warning(
                "staging folder %s filled up while staging %d rows; staging through Arrow",
                tmpfs,
                table.num_rows,
            )
            return None
        self._session.conf.set("spark.sql.files.maxPartitionBytes", str(8 << 20))
        # pyarrow writes proleptic Gregorian dates: read year-0001 values as written (Spark
        # would otherwise refuse ancient dates from a file it did not write). The schema is
        # known: given, Spark skips the job that lists the folder and reads the file's footer
        # to infer it (~0.09 s of a small batch).
        reader = self._session.read.option("datetimeRebaseMode", "CORRECTED")
        return reader.schema(_spark_schema(table.schema)).parquet(str(folder))

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


# Rows per Arrow batch sent to the JVM: each batch becomes one partition of the staged frame.
_ARROW_BATCH_ROWS = 1 << 16
# Rows per row group of the staged Parquet file, and the fewest row groups worth a file (and a
# thread) of their own.
_ROW_GROUP_ROWS = 1 << 16
_ROW_GROUPS_PER_PIECE = 4


def _pieces(table: pa.Table) -> list[pa.Table]:
    """``table`` in consecutive slices (zero-copy), one per staging thread, each of at least
    ``_ROW_GROUPS_PER_PIECE`` row groups; a small batch stays whole."""
    count = min(WORKERS, table.num_rows // (_ROW_GROUP_ROWS * _ROW_GROUPS_PER_PIECE))
    if count < 2:
        return [table]
    size = -(-table.num_rows // count)
    return [table.slice(start, size) for start in range(0, table.num_rows, size)]


def arrow_frame(session: SparkSession, table: pa.Table) -> DataFrame:
    """A DataFrame of the typed ``table``, sent through the driver as Arrow record batches.

    This is what ``createDataFrame(pandas)`` does inside PySpark 3.5, minus pandas: pandas
    turns a nullable int64 column into float64 (losing precision) and cannot hold year-9999
    timestamps, and PySpark 3.5 takes no Arrow table. The staged Arrow types are exactly the
    ones Spark's Arrow reader expects for the schema, so no value is converted on the way.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer

    live: Any = session  # PySpark's own (private) Arrow route, as createDataFrame uses it
    jvm = live._jvm
    batches = table.to_batches(max_chunksize=_ARROW_BATCH_ROWS) or [
        pa.RecordBatch.from_pylist([], schema=table.schema)
    ]
    jiter = live._sc._serialize_to_jvm(
        batches,
        ArrowStreamSerializer(),
        lambda path: jvm.PythonSQLUtils.readArrowStreamFromFile(path),
        lambda: jvm.ArrowIteratorServer(),
    )
    schema = _spark_schema(table.schema)
    return DataFrame(
        jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), live._jsparkSession), session
    )


def _spark_schema(schema: pa.Schema) -> StructType:
    from pyspark.sql import types as T  # noqa: N812

    def spark_type(kind: pa.DataType) -> T.DataType:
        if pa.types.is_boolean(kind):
            return T.BooleanType()
        if kind == pa.int16():
            return T.ShortType()
        if kind == pa.int32():
            return T.IntegerType()
        if kind == pa.int64():
            return T.LongType()
        if pa.types.is_decimal(kind):
            return T.DecimalType(kind.precision, kind.scale)
        if kind == pa.float32():
            return T.FloatType()
        if kind == pa.float64():
            return T.DoubleType()
        if pa.types.is_date(kind):
            return T.DateType()
        if pa.types.is_timestamp(kind):
            return T.TimestampType() if kind.tz is not None else T.TimestampNTZType()
        if pa.types.is_binary(kind):
            return T.BinaryType()
        if pa.types.is_string(kind):
            return T.StringType()
        raise TypeError(f"no Spark type for staged Arrow type {kind}")

    return T.StructType(
        [T.StructField(f.name, spark_type(f.type), nullable=f.nullable) for f in schema]
    )
