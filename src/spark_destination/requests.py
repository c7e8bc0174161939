"""Protocol-independent request dataclasses: what the planner, preview and runtime receive.

The gRPC server maps protobuf messages into these; ``preview`` and ``replay`` build them from
JSON. Nothing below this line knows about protobuf.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from spark_destination.model import FileParams, Table


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
class WriteBatchRequest:
    schema: str
    table: Table
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    file_params: FileParams = field(default_factory=FileParams)
    # Never printed: a repr that showed keys would leak them into logs and tracebacks.
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteHistoryBatchRequest:
    schema: str
    table: Table
    earliest_start_files: tuple[str, ...] = ()
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    file_params: FileParams = field(default_factory=FileParams)
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)


Request = (
    DescribeTableRequest
    | CreateTableRequest
    | AlterTableRequest
    | TruncateRequest
    | WriteBatchRequest
    | WriteHistoryBatchRequest
)
