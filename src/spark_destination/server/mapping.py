"""Protobuf messages <-> the project's plain dataclasses."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from spark_destination.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.requests import (
    AlterTableRequest,
    CreateTableRequest,
    DescribeTableRequest,
    SoftTruncate,
    TableName,
    TruncateRequest,
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


def write_batch_from_proto(request: pb.WriteBatchRequest) -> WriteBatchRequest:
    return WriteBatchRequest(
        schema=request.schema_name,
        table=table_from_proto(request.table),
        replace_files=tuple(request.replace_files),
        update_files=tuple(request.update_files),
        delete_files=tuple(request.delete_files),
        file_params=file_params_from_proto(request.file_params),
        keys=dict(request.keys),
    )


def write_history_from_proto(request: pb.WriteHistoryBatchRequest) -> WriteHistoryBatchRequest:
    return WriteHistoryBatchRequest(
        schema=request.schema_name,
        table=table_from_proto(request.table),
        earliest_start_files=tuple(request.earliest_start_files),
        replace_files=tuple(request.replace_files),
        update_files=tuple(request.update_files),
        delete_files=tuple(request.delete_files),
        file_params=file_params_from_proto(request.file_params),
        keys=dict(request.keys),
    )
