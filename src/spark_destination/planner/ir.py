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
    null for replace files, unmodified for update files) plus ``OP_COLUMN`` and ``SEQ_COLUMN``,
    the latter increasing in processing order: files in ``files`` order, rows in file order.
    """

    view: str
    files: tuple[StagedFile, ...]
    columns: tuple[str, ...]


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
class TruncateOp:
    """Delete (or soft-delete) the rows synced before ``before`` (millisecond precision)."""

    table: TableRef
    synced_column: str
    before: datetime
    soft_deleted_column: str | None


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
    | TruncateOp
    | DescribeOp
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The operations of one request, in execution order."""

    ops: tuple[Op, ...]
    # True when the request needs nothing done (e.g. Truncate of a missing table).
    noop_reason: str | None = None
