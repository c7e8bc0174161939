"""The operation IR: what a request will do, before any SQL exists. Nodes are frozen, slotted,
keyword-only dataclasses; ``Op`` is the closed union matched with ``assert_never``."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from spark_destination.core.model import Column, FileKind
from spark_destination.core.names import check_path_name


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRef:
    """A fully qualified table: ``catalog.schema.name``. Schema and name are each one plain
    path component (``names.path_problem``): a path-based catalog keeps the table in
    ``<warehouse>/<schema>/<name>/`` and nowhere else."""

    catalog: str
    schema: str
    name: str

    def __post_init__(self) -> None:
        check_path_name("schema", self.schema)
        check_path_name("table", self.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedFile:
    kind: FileKind
    path: str


class RowOp(enum.Enum):
    """The per-row operation tag carried by the staged batch view (column ``OP_COLUMN``)."""

    UPSERT = "upsert"
    UPDATE = "update"
    DELETE = "delete"
    EARLIEST_START = "earliest_start"


# Bookkeeping columns of every staged batch view (the prefix cannot clash with Fivetran's).
OP_COLUMN = "__sd_op"
SEQ_COLUMN = "__sd_seq"
DUP_COLUMN = "__sd_dup"  # true on rows whose key repeats in the batch (only those are folded)
UNMODIFIED_PREFIX = "__sd_unmodified_"  # staged mask: true where a column is "unmodified"


# The intermediate table of deferred mode also keeps the WriteBatch each row came from; its
# ``SEQ_COLUMN`` orders every row of the table across batches (the staged order plus a base).
BATCH_COLUMN = "__sd_batch"
# Parameter markers the runtime binds to deferred mode's counters (never row values).
SEQ_BASE_MARKER = "sd_seq_base"  # the counter of a batch's first row
BATCH_MARKER = "sd_batch_number"  # the batch's number
HIGH_MARKER = "sd_flush_high"  # the highest counter a flush folds


def unmodified_column(name: str) -> str:
    """The staged mask column telling which rows leave column ``name`` unmodified."""
    return UNMODIFIED_PREFIX + name


@dataclass(frozen=True, slots=True, kw_only=True)
class TableLayout:
    """How a table's rows sit in its data files (format-neutral; the dialect renders what its
    table format can: ``Target.lays_out_tables``). The point is a small batch's key filter:
    it skips row groups whose min/max or bloom filter rule out every key, and partitions
    whose bucket holds none (``docs/architecture.md``, "Lake-scale layout")."""

    format_version: int
    row_group_bytes: int
    # Rows ordered by these columns within every file written; compaction sorts by them.
    sort_by: tuple[str, ...] = ()
    # Columns with a Parquet bloom filter of ``bloom_filter_bytes`` per row group.
    bloom_filter: tuple[str, ...] = ()
    bloom_filter_bytes: int = 0
    # ``bucket(buckets, bucket_by)`` partitions (None: unpartitioned).
    bucket_by: str | None = None
    buckets: int = 0
    # What read planning charges for each file a read task opens, in bytes, when it packs
    # files and row-group splits into tasks (None: the table format's default). It only
    # changes how later reads are planned: no file is rewritten for it.
    read_open_file_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNamespaceOp:
    catalog: str
    schema: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTableOp:
    """Create a table; key columns are declared NOT NULL (a primary key needs it).

    ``properties`` are the destination's own (Fivetran metadata); the dialect adds its table
    format's properties when it renders the statement.
    """

    table: TableRef
    columns: tuple[Column, ...]
    properties: tuple[tuple[str, str], ...]
    # None: the table format's defaults (the plain layout tables had before layouts).
    layout: TableLayout | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SetLayoutOp:
    """Give an existing table ``layout`` (it has ``current``): properties, write order and
    partitioning change for later writes; files already written keep theirs until compaction
    rewrites them. Only what differs is changed; the format version is only ever raised."""

    table: TableRef
    layout: TableLayout
    current: TableLayout


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPrimaryKeyOp:
    """Make ``columns`` the table's primary key, replacing any other. Where the table format
    cannot make a column NOT NULL in place (``Target.changes_key_in_place`` false) they are
    NOT NULL already and never empty; elsewhere setting the key makes them NOT NULL."""

    table: TableRef
    columns: tuple[str, ...]
    # The write order that goes with the new key under the configured layout (``with_layouts``;
    # empty: unordered), set right after it: a later drop of a column the old order sorted by
    # would otherwise fail. None: the write order is left as it is.
    write_order: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AddColumnsOp:
    table: TableRef
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPropertiesOp:
    table: TableRef
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageBatchOp:
    """Runtime directive: decode ``files`` into one typed temp view named ``view``; decoding
    is the value check (a value that does not fit, a sentinel in a ``key`` column or in a
    ``required`` column on rows of the given operations fails, naming file, row, column, type).

    The view has ``columns`` as the table stores them (null sentinel: NULL; a column a file
    lacks: NULL, "unmodified" in update files), a mask ``unmodified_column(name)`` per
    ``masked_columns`` (true where "unmodified"; the value is then NULL), ``OP_COLUMN``,
    ``SEQ_COLUMN`` (processing order) and ``DUP_COLUMN`` (the typed ``key`` occurs on more than
    one of the rows whose operation is in ``repeats_among``; false on the other rows).
    """

    view: str
    files: tuple[StagedFile, ...]
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    # None when the producer set no sentinel: then no value is special.
    null_string: str | None = None
    unmodified_string: str | None = None
    # Columns that must hold a real value (neither sentinel) on rows of the given operations,
    # e.g. ``_fivetran_start`` on history upsert/update/earliest rows (delete rows carry NULL).
    required: tuple[tuple[str, tuple[RowOp, ...]], ...] = ()
    repeats_among: tuple[RowOp, ...] = tuple(RowOp)
    # bad_value_policy=null (``planner.bad_values``): a value of these columns that does not
    # fit becomes NULL (a too long one is cut to ``max_lengths``) instead of failing, and each
    # change is staged as a row of the view ``changes_view`` (registered only when there is
    # one). Empty: every value that does not fit fails, as does one longer than its length.
    lenient: tuple[str, ...] = ()
    max_lengths: tuple[tuple[str, int], ...] = ()
    changes_view: str | None = None
    # The columns that identify a row in its records: the table's primary key (a history
    # table's includes ``_fivetran_start``).
    changes_key: tuple[str, ...] = ()


def masked_columns(
    columns: tuple[Column, ...], key: tuple[str, ...], unmodified_string: str | None
) -> tuple[str, ...]:
    """Every non-key column has an unmodified mask when the producer set the sentinel."""
    return () if unmodified_string is None else tuple(c.name for c in columns if c.name not in key)


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeBatchOp:
    """Apply a whole WriteBatch with one MERGE (one commit). The staged rows of a repeated key
    (``DUP_COLUMN``) are folded, in ``SEQ_COLUMN`` order, into one source row: per column the
    last value that is not the unmodified sentinel; delete if any row deletes, else upsert if
    any upserts, else update; no key repeats (usual): a form without the fold. Values of the
    ``filter_key`` columns may also bind as a scan filter (small batches read fewer files)."""

    table: TableRef
    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    null_string: str | None
    unmodified_string: str | None
    has_upserts: bool
    filter_key: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendPendingOp:
    """Deferred WriteBatch: append every row of the staged ``view`` to ``pending``, the
    intermediate table of ``table``, in one INSERT (one commit); ``table`` is not read.

    A pending row holds ``columns`` (every column of ``table``; those the request does not name,
    i.e. not in ``staged``, are NULL), a mask ``unmodified_column(name)`` per non-key column
    (the staged mask for ``masked`` columns, true for columns not in ``staged``: merge mode
    leaves them as they are, false otherwise), ``OP_COLUMN``, ``SEQ_COLUMN`` = the staged
    order plus the bound ``SEQ_BASE_MARKER`` and ``BATCH_COLUMN`` = the bound ``BATCH_MARKER``.
    """

    table: TableRef
    pending: TableRef
    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    staged: tuple[str, ...]
    masked: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingStatsOp:
    """Read-only: one row of the intermediate table ``pending`` of ``table``: the lowest and
    highest ``SEQ_COLUMN``, the row count, the batch count and the highest ``BATCH_COLUMN``."""

    table: TableRef
    pending: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingKeysOp:
    """Read-only: the distinct values of the ``key`` columns (a flush's ``filter_key``) over
    the rows of ``pending`` a flush folds (``SEQ_COLUMN`` at most the bound ``HIGH_MARKER``),
    at most ``limit`` of them (one more than the flush's key filter binds: the runtime then
    knows they do not fit)."""

    table: TableRef
    pending: TableRef
    key: tuple[str, ...]
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushPendingOp:
    """The merge flush: fold the rows of ``pending`` whose ``SEQ_COLUMN`` is at most the bound
    ``HIGH_MARKER`` into ``table`` with one MERGE (one commit), as if each row were applied in
    counter order: a delete makes the key absent, an upsert makes it present with the row's
    values (NULL where unmodified when absent before), an update overlays its values and is
    ignored while the key is absent (``dialects.lowering.deferred`` says how, and why a
    re-run is safe). ``columns`` are every column of ``table``. Up to ``filter_slots``
    distinct values of the ``filter_key`` columns may bind as a filter on the table's scan, as
    in ``MergeBatchOp``: without it the MERGE's join moves every row of the table; with it,
    only the rows of the pending keys."""

    table: TableRef
    pending: TableRef
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    filter_key: tuple[str, ...] = ()
    filter_slots: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ClearPendingOp:
    """Delete the rows a flush folded (``SEQ_COLUMN`` at most the bound ``HIGH_MARKER``) from
    ``pending``, the intermediate table of ``table``, in one commit."""

    table: TableRef
    pending: TableRef


# Deferred write mode's statements (``planner.deferred``).
PendingOp = AppendPendingOp | PendingStatsOp | PendingKeysOp | FlushPendingOp | ClearPendingOp


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeHistoryOp:
    """Apply a whole WriteHistoryBatch (SCD type 2) with one MERGE (one commit).

    ``key`` is the source primary key *without* ``start``. The MERGE source is computed from
    the staged view and the table as it was before the request (one snapshot), so the "before"
    rows are captured by construction:

    * per key, ``earliest`` = the least of the earliest-start rows' start and the start of every
      update/upsert row of the key; ``deleted_at`` = the latest delete row's ``end``;
    * existing versions with ``start >= earliest`` are deleted;
    * surviving versions (``start < earliest``) that are active, or the newest surviving one
      when its ``end`` reaches past ``earliest``, are closed at ``earliest - 1 ms``;
    * update/upsert rows are inserted as new versions (deduplicated on key + start, the later
      staged row wins); unmodified columns carry forward, in ``start`` order, the last value of
      an earlier version of the batch, else of the newest surviving version, else NULL;
    * a delete closes the key's active version (a new one if the batch inserts one, else the
      existing one) at ``deleted_at``: ``active = false``, ``end = deleted_at``.
    ``filter_key`` as in ``MergeBatchOp`` (both reads of the table are filtered)."""

    table: TableRef
    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    start: str
    end: str
    active: str
    null_string: str | None
    unmodified_string: str | None
    filter_key: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordChangesOp:
    """bad_value_policy=null: create the schema's changes table ``changes`` if missing and
    add the values staging of ``view`` changed (the staged view ``records``) with the row's
    ``key`` columns as a JSON object and its ``_fivetran_synced`` (when ``synced``), keyed by
    table, file, data row, column and ``_fivetran_synced`` (a retried request adds nothing
    twice). Runs before the MERGE into ``table``, and only when staging changed a value."""

    table: TableRef
    changes: TableRef
    view: str
    records: str
    key: tuple[str, ...]
    synced: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateOp:
    """Delete (or soft-delete) the rows synced before ``before`` (millisecond precision)."""

    table: TableRef
    synced_column: str
    before: datetime
    soft_deleted_column: str | None
    # History tables: a soft truncate closes the active versions instead (``(end, active)``
    # columns): ``end = before``, ``active = false``; no row or column is added or removed.
    history_close: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeOp:
    """Runtime directive: read the table's schema and Fivetran metadata."""

    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class ListNamespacesOp:
    """Read-only: list a catalog's namespaces (proves the catalog loads and its warehouse reads)."""

    catalog: str


# --- Migrate ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DropTableOp:
    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckLiteralOp:
    """A one-row query, true when the request's ``value`` cannot be stored in ``column``.

    Runs before any change, so a value that does not convert leaves the table untouched; the
    runtime then fails the request naming the column and the value (a request parameter, not
    row data).
    """

    column: Column
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckHistoryStartOp:
    """A query returning the latest ``start`` of an active version after ``operation_timestamp``
    (NULL when there is none); the runtime fails the request on a hit."""

    table: TableRef
    start: str
    active: str
    operation_timestamp: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameColumnOp:
    table: TableRef
    from_column: str
    to_column: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DropColumnsOp:
    table: TableRef
    columns: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetColumnValueOp:
    """``UPDATE`` every row (one commit): ``column`` = ``value`` typed from the column (None is
    NULL), or = the row's ``from_column`` when that is set."""

    table: TableRef
    column: Column
    value: str | None = None
    from_column: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyRowsOp:
    """Replace every row of ``target`` with ``columns`` of every row of ``source`` (one
    ``INSERT OVERWRITE``, one commit: a repeated copy gives the same table)."""

    source: TableRef
    target: TableRef
    columns: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyRowsToHistoryOp:
    """Replace every row of the history table ``target`` with the rows of the soft-delete table
    ``source`` as first versions (one ``INSERT OVERWRITE``).

    Rows with ``deleted`` true get ``active = false`` and ``start = end =`` the minimum
    timestamp; the others (every row when ``deleted`` is None) ``active = true``, ``start`` =
    the source's latest ``synced`` (now when ``synced`` is None) and ``end`` = the maximum
    timestamp. ``columns`` are copied as they are and come first, in target order.
    """

    source: TableRef
    target: TableRef
    columns: tuple[str, ...]
    deleted: str | None
    synced: str | None
    start: str
    end: str
    active: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryColumnChangeOp:
    """Record a column change (add with a default, or drop) as new history versions, in one
    MERGE (one commit):

    * each active version with ``start < operation_timestamp`` (and, when ``only_non_null``,
      a non-NULL ``column``) is copied with ``start = operation_timestamp`` and ``column`` =
      ``value`` (None is NULL), and closed: ``end = operation_timestamp - 1 ms``,
      ``active = false``;
    * versions that already start at ``operation_timestamp`` get ``column = value`` (a
      repeated or combined operation with the same timestamp is idempotent).
    """

    table: TableRef
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    start: str
    end: str
    active: str
    column: Column
    value: str | None
    operation_timestamp: datetime
    only_non_null: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepLatestVersionsOp:
    """History -> soft delete, in one MERGE: per ``key`` keep only the version with the latest
    ``start`` (active or not) and set its ``deleted`` to ``NOT active``. Idempotent."""

    table: TableRef
    key: tuple[str, ...]
    start: str
    active: str
    deleted: str


# --- AlterTable (schema evolution) ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnChange:
    """One column of an altered table: ``target`` is what it becomes; its values come from the
    stored column ``source`` (same name, or the old one of a rename), converted to ``target``'s
    type, or are NULL when the column is new (``source`` None)."""

    source: Column | None
    target: Column


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterColumnTypeOp:
    """Widen a column in place (where the target's ``widens_in_place`` allows it)."""

    table: TableRef
    column: Column


@dataclass(frozen=True, slots=True, kw_only=True)
class DropNotNullOp:
    """Make a column that left the primary key nullable again (idempotent)."""

    table: TableRef
    column: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckConversionsOp:
    """Read-only: per conversion, how many stored non-NULL values do not convert and the least
    of them (as text); per ``not_null`` column (joining the key), how many rows hold NULL in it.
    The runtime fails the request on any hit, before any change."""

    table: TableRef
    conversions: tuple[ColumnChange, ...]
    not_null: tuple[ColumnChange, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckUniqueKeyOp:
    """Read-only: how many values of the new key (converted) occur on more than one row."""

    table: TableRef
    key: tuple[ColumnChange, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteTableOp:
    """Rewrite the table with ``columns`` (conversions applied, key columns NOT NULL) in one
    atomic commit: ``CREATE OR REPLACE TABLE t ... AS SELECT ... FROM t`` (the dialect adds its
    table format's properties).

    The table keeps its other properties and its history, and loses its primary key (set it
    again afterwards). The runtime runs it in a session whose catalog keeps the query's
    nullability (``use-nullable-query-schema = false``).
    """

    table: TableRef
    columns: tuple[ColumnChange, ...]
    # The layout the rewritten table gets (None: the table format's defaults).
    layout: TableLayout | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteToHistoryOp:
    """Switch a soft-delete table to history mode in one atomic rewrite, as ``RewriteTableOp``
    does: ``columns`` (as they are), then ``start`` (NOT NULL), ``end`` and ``active`` with the
    values of ``CopyRowsToHistoryOp`` computed from the table's own rows; ``deleted`` goes. The
    primary key is lost (set it again); ``end`` and ``active`` come out NOT NULL (the runtime
    keeps the query's nullability), so the plan relaxes them afterwards."""

    table: TableRef
    columns: tuple[Column, ...]
    deleted: str | None
    synced: str | None
    start: str
    end: str
    active: str
    layout: TableLayout | None = None


# --- Table maintenance (Iceberg's ``CALL <catalog>.system.*`` procedures) ----------------------


# Compaction rewrites the files with at least this share of their rows deleted.
COMPACT_DELETE_RATIO: Final = 0.3


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteDataFilesOp:
    """Compact small data files; files carrying at least ``delete_file_threshold`` delete files
    are rewritten with their deletes applied (merge-on-read leaves one per batch)."""

    table: TableRef
    delete_file_threshold: int = 1
    # Rewrite with the sort strategy (the table's sort order) rather than bin-packing.
    sort: bool = False
    # Every file, not only those the size and delete thresholds pick (a new layout).
    rewrite_all: bool = False
    # Lake scale (``planner.layout``): only files smaller than this, or with at least
    # ``delete_ratio`` of their rows deleted, are rewritten; None: every file with
    # ``delete_file_threshold`` delete files too (the cost then grows with the table).
    small_file_bytes: int | None = None
    delete_ratio: float = COMPACT_DELETE_RATIO


@dataclass(frozen=True, slots=True, kw_only=True)
class RewritePositionDeletesOp:
    """Compact the position-delete files that remain, dropping those that no longer apply."""

    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpireSnapshotsOp:
    """Forget snapshots older than ``older_than`` (keeping ``retain_last``) and delete the
    files only they referenced."""

    table: TableRef
    older_than: datetime
    retain_last: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveOrphanFilesOp:
    """Delete files under the table's location that no snapshot references (failed writes).

    ``prefix_listing``: list the location through the table's FileIO (object storage: no
    Hadoop file system serves ``s3://`` in the destination); Iceberg lists ``location/``, so
    a sibling table whose name starts with this one's is never listed."""

    table: TableRef
    older_than: datetime
    prefix_listing: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OptimizeOp:
    """Compact the table's data files, clustering rows by ``cluster_by`` (the key: a small
    batch's MERGE then reads few files); rows marked deleted leave the files rewritten."""

    table: TableRef
    cluster_by: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VacuumOp:
    """Delete the files no table version of the last ``retain_hours`` hours references, and
    files under the table's location it never referenced (failed writes)."""

    table: TableRef
    retain_hours: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealthOp:
    """Read-only: the table's file counts (Iceberg: one row of data files, delete files and
    snapshots; Delta: its ``DESCRIBE DETAIL`` row)."""

    table: TableRef


MaintenanceOp = (
    RewriteDataFilesOp
    | RewritePositionDeletesOp
    | ExpireSnapshotsOp
    | RemoveOrphanFilesOp
    | OptimizeOp
    | VacuumOp
    | TableHealthOp
)


Op = (
    CreateNamespaceOp
    | CreateTableOp
    | SetPrimaryKeyOp
    | AddColumnsOp
    | SetPropertiesOp
    | StageBatchOp
    | MergeBatchOp
    | MergeHistoryOp
    | RecordChangesOp
    | TruncateOp
    | DescribeOp
    | ListNamespacesOp
    | DropTableOp
    | CheckLiteralOp
    | CheckHistoryStartOp
    | RenameColumnOp
    | DropColumnsOp
    | SetColumnValueOp
    | CopyRowsOp
    | CopyRowsToHistoryOp
    | HistoryColumnChangeOp
    | KeepLatestVersionsOp
    | AlterColumnTypeOp
    | DropNotNullOp
    | CheckConversionsOp
    | CheckUniqueKeyOp
    | RewriteTableOp
    | RewriteToHistoryOp
    | MaintenanceOp
    | SetLayoutOp
    | PendingOp
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The operations of one request, in execution order."""

    ops: tuple[Op, ...]
    # True when the request needs nothing done (e.g. Truncate of a missing table).
    noop_reason: str | None = None
