"""Protocol-independent request dataclasses: what the planner, preview and runtime receive.

The gRPC server maps protobuf messages into these; ``preview`` and ``replay`` build them from
JSON. Nothing below this line knows about protobuf.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from spark_destination.core.model import DataType, FileParams, Table


@dataclass(frozen=True, slots=True, kw_only=True)
class TableName:
    schema: str
    table: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeTableRequest:
    target: TableName


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTableRequest:
    schema: str
    table: Table


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterTableRequest:
    schema: str
    table: Table
    drop_columns: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftTruncate:
    deleted_column: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateRequest:
    target: TableName
    synced_column: str
    utc_delete_before: datetime
    soft: SoftTruncate | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchFiles:
    """The files of a WriteBatch or WriteHistoryBatch, by kind, and how to read them."""

    replace: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    params: FileParams = field(default_factory=FileParams)
    # Never printed: a repr that showed keys would leak them into logs and tracebacks.
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteBatchRequest:
    schema: str
    table: Table
    files: BatchFiles = field(default_factory=BatchFiles)


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteHistoryBatchRequest:
    schema: str
    table: Table
    files: BatchFiles = field(default_factory=BatchFiles)
    # History mode's own kind of file (its keys are in ``files.keys``).
    earliest_start_files: tuple[str, ...] = ()


# --- Migrate (MigrationDetails): one frozen dataclass per operation, a closed union ----------


class SyncModeMigrationType(enum.Enum):
    """``fivetran_sdk.v2.TableSyncModeMigrationType`` (values are the proto numbers)."""

    SOFT_DELETE_TO_LIVE = 0
    SOFT_DELETE_TO_HISTORY = 1
    HISTORY_TO_SOFT_DELETE = 2
    HISTORY_TO_LIVE = 3
    LIVE_TO_SOFT_DELETE = 4
    LIVE_TO_HISTORY = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class DropTable:
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class DropColumnInHistoryMode:
    column: str
    operation_timestamp: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyTable:
    from_table: str
    to_table: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyColumn:
    from_column: str
    to_column: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyTableToHistoryMode:
    from_table: str
    to_table: str
    # Empty: no soft-delete column (every row is active).
    soft_deleted_column: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameTable:
    from_table: str
    to_table: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameColumn:
    from_column: str
    to_column: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddColumnWithDefaultValue:
    column: str
    column_type: DataType
    default_value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddColumnInHistoryMode:
    column: str
    column_type: DataType
    default_value: str
    operation_timestamp: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateColumnValue:
    column: str
    # Untyped text; ``"NULL"`` and ``""`` mean NULL (reference §9, §10.4).
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSyncModeMigration:
    type: SyncModeMigrationType
    soft_deleted_column: str = ""
    keep_deleted_rows: bool = False


MigrationOperation = (
    DropTable
    | DropColumnInHistoryMode
    | CopyTable
    | CopyColumn
    | CopyTableToHistoryMode
    | RenameTable
    | RenameColumn
    | AddColumnWithDefaultValue
    | AddColumnInHistoryMode
    | UpdateColumnValue
    | TableSyncModeMigration
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrateRequest:
    schema: str
    table: str
    operation: MigrationOperation


# The requests that change one table, planned against that table's current state.
TableChange = (
    CreateTableRequest
    | AlterTableRequest
    | TruncateRequest
    | WriteBatchRequest
    | WriteHistoryBatchRequest
)


def target_of(request: TableChange | DescribeTableRequest) -> TableName:
    """The table a request names."""
    match request:
        case TruncateRequest() | DescribeTableRequest():
            return request.target
        case _:
            return TableName(schema=request.schema, table=request.table.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushRequest:
    """Not a Fivetran RPC: merge a table's pending batches (deferred write mode) into it now
    (``spark-destination flush``; ``preview`` shows its statements)."""

    schema: str
    table: str


Request = (
    DescribeTableRequest
    | CreateTableRequest
    | AlterTableRequest
    | TruncateRequest
    | WriteBatchRequest
    | WriteHistoryBatchRequest
    | MigrateRequest
    | FlushRequest
)
