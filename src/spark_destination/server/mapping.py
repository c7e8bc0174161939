"""Protobuf messages <-> the project's plain dataclasses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import assert_never

from google.protobuf.timestamp_pb2 import Timestamp

from spark_destination.core.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.core.requests import (
    AddColumnInHistoryMode,
    AddColumnWithDefaultValue,
    AlterTableRequest,
    BatchFiles,
    CopyColumn,
    CopyTable,
    CopyTableToHistoryMode,
    CreateTableRequest,
    DescribeTableRequest,
    DropColumnInHistoryMode,
    DropTable,
    MigrateRequest,
    MigrationOperation,
    RenameColumn,
    RenameTable,
    SoftTruncate,
    SyncModeMigrationType,
    TableChange,
    TableName,
    TableSyncModeMigration,
    TruncateRequest,
    UpdateColumnValue,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb


def column_from_proto(column: common.Column) -> Column:
    decimal = None
    byte_length = None
    if column.HasField("params"):
        which = column.params.WhichOneof("params")
        if which == "decimal":
            decimal = DecimalParams(
                precision=column.params.decimal.precision, scale=column.params.decimal.scale
            )
        elif which == "string_byte_length":
            byte_length = column.params.string_byte_length
    return Column(
        name=column.name,
        type=DataType(column.type),
        primary_key=column.primary_key,
        decimal=decimal,
        string_byte_length=byte_length,
    )


def table_from_proto(table: common.Table) -> Table:
    return Table(name=table.name, columns=tuple(column_from_proto(c) for c in table.columns))


def table_to_proto(table: Table) -> common.Table:
    message = common.Table(name=table.name)
    for column in table.columns:
        out = message.columns.add(
            name=column.name, type=column.type.value, primary_key=column.primary_key
        )
        if column.decimal is not None:
            out.params.decimal.precision = column.decimal.precision
            out.params.decimal.scale = column.decimal.scale
        elif column.string_byte_length is not None:
            out.params.string_byte_length = column.string_byte_length
    return message


def file_params_from_proto(params: pb.FileParams) -> FileParams:
    return FileParams(
        compression=Compression(params.compression),
        encryption=Encryption(params.encryption),
        null_string=params.null_string,
        unmodified_string=params.unmodified_string,
    )


def timestamp_to_datetime(value: Timestamp) -> datetime:
    return datetime.fromtimestamp(value.seconds, tz=UTC).replace(microsecond=value.nanos // 1000)


def describe_from_proto(request: pb.DescribeTableRequest) -> DescribeTableRequest:
    return DescribeTableRequest(
        target=TableName(schema=request.schema_name, table=request.table_name)
    )


def create_from_proto(request: pb.CreateTableRequest) -> CreateTableRequest:
    return CreateTableRequest(schema=request.schema_name, table=table_from_proto(request.table))


def alter_from_proto(request: pb.AlterTableRequest) -> AlterTableRequest:
    return AlterTableRequest(
        schema=request.schema_name,
        table=table_from_proto(request.table),
        drop_columns=request.drop_columns,
    )


def truncate_from_proto(request: pb.TruncateRequest) -> TruncateRequest:
    return TruncateRequest(
        target=TableName(schema=request.schema_name, table=request.table_name),
        synced_column=request.synced_column,
        utc_delete_before=timestamp_to_datetime(request.utc_delete_before),
        # proto3 presence: a soft truncate is signalled by the field being set at all.
        soft=SoftTruncate(deleted_column=request.soft.deleted_column)
        if request.HasField("soft")
        else None,
    )


def batch_files_from_proto(
    request: pb.WriteBatchRequest | pb.WriteHistoryBatchRequest,
) -> BatchFiles:
    return BatchFiles(
        replace=tuple(request.replace_files),
        update=tuple(request.update_files),
        delete=tuple(request.delete_files),
        params=file_params_from_proto(request.file_params),
        keys=dict(request.keys),
    )


def write_batch_from_proto(request: pb.WriteBatchRequest) -> WriteBatchRequest:
    return WriteBatchRequest(
        schema=request.schema_name,
        table=table_from_proto(request.table),
        files=batch_files_from_proto(request),
    )


def write_history_from_proto(request: pb.WriteHistoryBatchRequest) -> WriteHistoryBatchRequest:
    return WriteHistoryBatchRequest(
        schema=request.schema_name,
        table=table_from_proto(request.table),
        files=batch_files_from_proto(request),
        earliest_start_files=tuple(request.earliest_start_files),
    )


ChangeMessage = (
    pb.CreateTableRequest
    | pb.AlterTableRequest
    | pb.TruncateRequest
    | pb.WriteBatchRequest
    | pb.WriteHistoryBatchRequest
)


def change_from_proto(request: ChangeMessage) -> TableChange:
    """A request that changes one table, as its dataclass."""
    match request:
        case pb.CreateTableRequest():
            return create_from_proto(request)
        case pb.AlterTableRequest():
            return alter_from_proto(request)
        case pb.TruncateRequest():
            return truncate_from_proto(request)
        case pb.WriteBatchRequest():
            return write_batch_from_proto(request)
        case pb.WriteHistoryBatchRequest():
            return write_history_from_proto(request)
        case _:
            assert_never(request)


def name_of(request: ChangeMessage | pb.DescribeTableRequest) -> str:
    """``'schema'.'table'`` of a request, for log lines (read before anything is parsed)."""
    match request:
        case pb.TruncateRequest() | pb.DescribeTableRequest():
            table = request.table_name
        case _:
            table = request.table.name
    return f"{request.schema_name!r}.{table!r}"


def migrate_from_proto(request: pb.MigrateRequest) -> MigrateRequest:
    """``MigrationDetails`` -> one operation dataclass; an operation or sync-mode type this
    version does not know (an empty oneof) is unsupported."""
    details = request.details
    operation: MigrationOperation
    which = details.WhichOneof("operation")
    has_entity = which in ("drop", "copy", "rename", "add")
    entity = getattr(details, which).WhichOneof("entity") if has_entity else None
    match which, entity:
        case "drop", "drop_table":
            operation = DropTable()
        case "drop", "drop_column_in_history_mode":
            drop = details.drop.drop_column_in_history_mode
            operation = DropColumnInHistoryMode(
                column=drop.column, operation_timestamp=drop.operation_timestamp
            )
        case "copy", "copy_table":
            copy = details.copy.copy_table
            operation = CopyTable(from_table=copy.from_table, to_table=copy.to_table)
        case "copy", "copy_column":
            column = details.copy.copy_column
            operation = CopyColumn(from_column=column.from_column, to_column=column.to_column)
        case "copy", "copy_table_to_history_mode":
            history = details.copy.copy_table_to_history_mode
            operation = CopyTableToHistoryMode(
                from_table=history.from_table,
                to_table=history.to_table,
                soft_deleted_column=history.soft_deleted_column,
            )
        case "rename", "rename_table":
            table = details.rename.rename_table
            operation = RenameTable(from_table=table.from_table, to_table=table.to_table)
        case "rename", "rename_column":
            renamed = details.rename.rename_column
            operation = RenameColumn(from_column=renamed.from_column, to_column=renamed.to_column)
        case "add", "add_column_with_default_value":
            add = details.add.add_column_with_default_value
            operation = AddColumnWithDefaultValue(
                column=add.column,
                column_type=_data_type(add.column_type),
                default_value=add.default_value,
            )
        case "add", "add_column_in_history_mode":
            added = details.add.add_column_in_history_mode
            operation = AddColumnInHistoryMode(
                column=added.column,
                column_type=_data_type(added.column_type),
                default_value=added.default_value,
                operation_timestamp=added.operation_timestamp,
            )
        case "update_column_value", _:
            update = details.update_column_value
            operation = UpdateColumnValue(column=update.column, value=update.value)
        case "table_sync_mode_migration", _:
            sync = details.table_sync_mode_migration
            try:
                kind = SyncModeMigrationType(sync.type)
            except ValueError:
                raise UnsupportedOperationError(
                    f"table_sync_mode_migration type {sync.type} is not known"
                ) from None
            operation = TableSyncModeMigration(
                type=kind,
                soft_deleted_column=sync.soft_deleted_column,
                keep_deleted_rows=sync.keep_deleted_rows,
            )
        case _:
            # Nothing this proto version knows: a newer Fivetran's operation decodes this way,
            # so the answer is "unsupported" (Fivetran then falls back), not a failure.
            raise UnsupportedOperationError(
                f"Migrate of {details.schema!r}.{details.table!r} carries no known operation"
                + (f" ({which} without a known entity)" if which else "")
            )
    return MigrateRequest(schema=details.schema, table=details.table, operation=operation)


def _data_type(value: int) -> DataType:
    try:
        return DataType(value)
    except ValueError:
        raise InvalidRequestError(f"unknown column type number {value}") from None
