"""A typed client for the destination's gRPC service, building requests the way Fivetran does.

Every method takes plain Python values (the project's ``model.Table`` and ``FileParams``, strings,
datetimes) and returns the response protobuf unchanged, so callers can inspect exactly what the
destination answered. ``response_outcome`` condenses any response into a (kind, message) pair.

Request details copied from Fivetran and its destination tester (protocol reference §3, §10.6):
the configuration map rides on every request that has one; ``table`` is the full definition,
system columns included; ``keys`` is keyed by the exact path string listed in the file lists;
``utc_delete_before`` has millisecond precision; ``soft`` is set only for soft truncates (it is a
proto3 ``optional`` field, so its presence *is* the signal).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Final

import grpc
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from spark_destination.core.model import SYNCED, Compression, Encryption, FileParams, Table
from spark_destination.server.mapping import table_to_proto
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

__all__ = [
    "MAX_MESSAGE_BYTES",
    "PLAIN_TEXT_FILE_PARAMS",
    "TESTER_FILE_PARAMS",
    "TESTER_NULL_STRING",
    "TESTER_UNMODIFIED_STRING",
    "DestinationClient",
    "connect",
    "file_params_to_proto",
    "response_outcome",
    "timestamp_ms",
]

# The destination tester's sentinel constants (reference §6.2). Production values differ per
# sync, which is why destinations must read them from FileParams.
TESTER_NULL_STRING: Final = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
TESTER_UNMODIFIED_STRING: Final = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TESTER_FILE_PARAMS: Final = FileParams(
    compression=Compression.ZSTD,
    encryption=Encryption.AES,
    null_string=TESTER_NULL_STRING,
    unmodified_string=TESTER_UNMODIFIED_STRING,
)
# What the tester declares with --plain-text: no compression, no encryption, same sentinels.
PLAIN_TEXT_FILE_PARAMS: Final = replace(
    TESTER_FILE_PARAMS, compression=Compression.OFF, encryption=Encryption.NONE
)

# Fivetran's documented maximum message size, both directions (reference §1).
MAX_MESSAGE_BYTES: Final = 128 * 1024 * 1024
# The v1 tester's WriteBatch deadline; generous enough for every RPC of a local run.
DEFAULT_TIMEOUT_SECONDS: Final = 3600.0

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS: Final = timedelta(milliseconds=1)


def timestamp_ms(value: datetime) -> Timestamp:
    """A protobuf Timestamp truncated to milliseconds; a naive datetime is taken as UTC."""
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    # Integer arithmetic on timedeltas: floats would round some milliseconds the wrong way.
    millis = (utc - _EPOCH) // _ONE_MS
    seconds, rest = divmod(millis, 1000)
    return Timestamp(seconds=seconds, nanos=rest * 1_000_000)


def file_params_to_proto(params: FileParams) -> pb.FileParams:
    return pb.FileParams(
        # Enum names: the model's enums mirror the proto's, name for name.
        compression=params.compression.name,
        encryption=params.encryption.name,
        null_string=params.null_string,
        unmodified_string=params.unmodified_string,
    )


class DestinationClient:
    """One method per RPC of ``fivetran_sdk.v2.DestinationConnector``."""

    def __init__(
        self, channel: grpc.Channel, *, timeout: float | None = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self._channel = channel
        self._stub = pb_grpc.DestinationConnectorStub(channel)
        self._timeout = timeout

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> DestinationClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def configuration_form(self) -> common.ConfigurationFormResponse:
        return self._stub.ConfigurationForm(
            common.ConfigurationFormRequest(), timeout=self._timeout
        )

    def test(self, name: str, configuration: Mapping[str, str]) -> common.TestResponse:
        request = common.TestRequest(name=name, configuration=dict(configuration))
        return self._stub.Test(request, timeout=self._timeout)

    def capabilities(self) -> pb.CapabilitiesResponse:
        return self._stub.Capabilities(pb.CapabilitiesRequest(), timeout=self._timeout)

    def describe_table(
        self, table_name: str, *, configuration: Mapping[str, str], schema: str
    ) -> pb.DescribeTableResponse:
        request = pb.DescribeTableRequest(
            configuration=dict(configuration), schema_name=schema, table_name=table_name
        )
        return self._stub.DescribeTable(request, timeout=self._timeout)

    def create_table(
        self, table: Table, *, configuration: Mapping[str, str], schema: str
    ) -> pb.CreateTableResponse:
        request = pb.CreateTableRequest(
            configuration=dict(configuration), schema_name=schema, table=table_to_proto(table)
        )
        return self._stub.CreateTable(request, timeout=self._timeout)

    def alter_table(
        self,
        table: Table,
        *,
        configuration: Mapping[str, str],
        schema: str,
        drop_columns: bool = False,
    ) -> pb.AlterTableResponse:
        request = pb.AlterTableRequest(
            configuration=dict(configuration),
            schema_name=schema,
            table=table_to_proto(table),
            drop_columns=drop_columns,
        )
        return self._stub.AlterTable(request, timeout=self._timeout)

    def truncate(
        self,
        table_name: str,
        *,
        configuration: Mapping[str, str],
        schema: str,
        utc_delete_before: datetime,
        soft_deleted_column: str | None = None,
        synced_column: str = SYNCED,
    ) -> pb.TruncateResponse:
        request = pb.TruncateRequest(
            configuration=dict(configuration),
            schema_name=schema,
            table_name=table_name,
            synced_column=synced_column,
            utc_delete_before=timestamp_ms(utc_delete_before),
        )
        if soft_deleted_column is not None:
            # Presence of the optional field marks a soft truncate; never set it otherwise.
            request.soft.deleted_column = soft_deleted_column
        return self._stub.Truncate(request, timeout=self._timeout)

    def write_batch(
        self,
        table: Table,
        *,
        configuration: Mapping[str, str],
        schema: str,
        replace_files: Iterable[str] = (),
        update_files: Iterable[str] = (),
        delete_files: Iterable[str] = (),
        keys: Mapping[str, bytes] | None = None,
        file_params: FileParams = TESTER_FILE_PARAMS,
    ) -> pb.WriteBatchResponse:
        request = pb.WriteBatchRequest(
            configuration=dict(configuration),
            schema_name=schema,
            table=table_to_proto(table),
            keys=dict(keys or {}),
            replace_files=list(replace_files),
            update_files=list(update_files),
            delete_files=list(delete_files),
            file_params=file_params_to_proto(file_params),
        )
        return self._stub.WriteBatch(request, timeout=self._timeout)

    def write_history_batch(
        self,
        table: Table,
        *,
        configuration: Mapping[str, str],
        schema: str,
        earliest_start_files: Iterable[str] = (),
        replace_files: Iterable[str] = (),
        update_files: Iterable[str] = (),
        delete_files: Iterable[str] = (),
        keys: Mapping[str, bytes] | None = None,
        file_params: FileParams = TESTER_FILE_PARAMS,
    ) -> pb.WriteBatchResponse:
        request = pb.WriteHistoryBatchRequest(
            configuration=dict(configuration),
            schema_name=schema,
            table=table_to_proto(table),
            keys=dict(keys or {}),
            earliest_start_files=list(earliest_start_files),
            replace_files=list(replace_files),
            update_files=list(update_files),
            delete_files=list(delete_files),
            file_params=file_params_to_proto(file_params),
        )
        return self._stub.WriteHistoryBatch(request, timeout=self._timeout)

    def migrate(
        self, details: pb.MigrationDetails, *, configuration: Mapping[str, str]
    ) -> pb.MigrateResponse:
        request = pb.MigrateRequest(configuration=dict(configuration), details=details)
        return self._stub.Migrate(request, timeout=self._timeout)


def connect(address: str, *, timeout: float | None = DEFAULT_TIMEOUT_SECONDS) -> DestinationClient:
    """An insecure channel to ``host:port`` with Fivetran's 128 MiB message limits."""
    channel = grpc.insecure_channel(
        address,
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    return DestinationClient(channel, timeout=timeout)


def _describe_columns(table: common.Table) -> str:
    parts = []
    for column in table.columns:
        text = f"{column.name} {common.DataType.Name(column.type)}"
        if column.HasField("params") and column.params.WhichOneof("params") == "decimal":
            text += f"({column.params.decimal.precision},{column.params.decimal.scale})"
        if column.primary_key:
            text += " PK"
        parts.append(text)
    return f"{table.name}({', '.join(parts)})"


def response_outcome(resp: Message) -> tuple[str, str]:
    """(kind, message) for any response.

    kind is ``success``, ``warning``, ``task``, ``not_found``, ``table`` or ``unsupported``, and
    ``failure`` for what is none of those: a Test failure, a ``success=false`` answer (legal on
    the wire, used by the official example for errors) or a response with no member set.
    Responses without a ``response`` oneof (ConfigurationForm, Capabilities) are ``success``.
    """
    if "response" not in resp.DESCRIPTOR.oneofs_by_name:
        return "success", ""
    which = resp.WhichOneof("response")
    match which:
        case None:
            return "failure", "the response has no member set"
        case "success":
            ok = bool(resp.success)  # type: ignore[attr-defined]
            return ("success", "") if ok else ("failure", "success=false")
        case "warning" | "task":
            return which, str(getattr(resp, which).message)
        case "failure":
            return "failure", str(resp.failure)  # type: ignore[attr-defined]
        case "table":
            return "table", _describe_columns(resp.table)  # type: ignore[attr-defined]
        case _:
            # not_found / unsupported: boolean members whose presence is the answer.
            return which, ""
