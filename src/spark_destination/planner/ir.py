"""The operation IR: what a request will do, before any SQL text exists.

Every node is a frozen, slotted, keyword-only dataclass; ``Op`` is the closed union the renderer
and the runtime dispatch on with ``match`` + ``assert_never``. Collections are tuples so a plan is
hashable and compares by value in tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from spark_destination.model import Column, FileKind


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRef:
    """A fully qualified Iceberg table: ``catalog.schema.name``."""

    catalog: str
    schema: str
    name: str


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


# Names of the bookkeeping columns the runtime adds to every staged batch view. They start with
# two underscores and a project prefix so they cannot collide with Fivetran columns.
OP_COLUMN = "__sd_op"
SEQ_COLUMN = "__sd_seq"
# True on rows whose key occurs more than once in the staged batch: only those need folding.
DUP_COLUMN = "__sd_dup"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNamespaceOp:
    catalog: str
    schema: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTableOp:
    """Create an Iceberg table; key columns are declared NOT NULL (identifier fields need it)."""

    table: TableRef
    columns: tuple[Column, ...]
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetIdentifierFieldsOp:
    table: TableRef
    columns: tuple[str, ...]


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
    """Runtime directive: decode ``files`` into one all-string temp view named ``view``.

    The view has exactly ``columns`` (a file lacking a column gets the sentinel its kind implies:
    null for replace files, unmodified for update files) plus ``OP_COLUMN``, ``SEQ_COLUMN`` (in
    processing order: files in ``files`` order, rows in file order) and ``DUP_COLUMN`` (the
    row's raw ``key`` values occur on more than one staged row).
    """

    view: str
    files: tuple[StagedFile, ...]
    columns: tuple[str, ...]
    key: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckValuesOp:
    """A query over the staged view returning, per checked column, the first row that cannot be
    stored (uncastable value, or NULL in a key column). The runtime fails the request on any hit.
    """

    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    # None when the producer set no sentinel: then no value is special.
    null_string: str | None
    unmodified_string: str | None
    # Columns that must hold a real value (neither sentinel) on rows of the given operations,
    # e.g. ``_fivetran_start`` on history upsert/update/earliest rows (delete rows carry NULL).
    required: tuple[tuple[str, tuple[RowOp, ...]], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeBatchOp:
    """Apply a whole WriteBatch with one MERGE (one Iceberg commit).

    The staged rows of each key are first folded, in ``SEQ_COLUMN`` order, into one source row:
    per column the last value that is not the unmodified sentinel; the op is delete if any row
    deletes, else upsert if any row upserts, else update.
    """

    table: TableRef
    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    null_string: str | None
    unmodified_string: str | None
    has_upserts: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeHistoryOp:
    """Apply a whole WriteHistoryBatch (SCD type 2) with one MERGE (one Iceberg commit).

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
    """

    table: TableRef
    view: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    start: str
    end: str
    active: str
    null_string: str | None
    unmodified_string: str | None


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


Op = (
    CreateNamespaceOp
    | CreateTableOp
    | SetIdentifierFieldsOp
    | AddColumnsOp
    | SetPropertiesOp
    | StageBatchOp
    | CheckValuesOp
    | MergeBatchOp
    | MergeHistoryOp
    | TruncateOp
    | DescribeOp
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The operations of one request, in execution order."""

    ops: tuple[Op, ...]
    # True when the request needs nothing done (e.g. Truncate of a missing table).
    noop_reason: str | None = None
