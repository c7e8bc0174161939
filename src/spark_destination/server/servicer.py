"""The ``fivetran_sdk.v2.DestinationConnector`` service.

Each RPC maps its request into plain dataclasses, calls the engine, and answers with exactly one
member of the response ``oneof``. A failure the user can act on becomes a ``task`` whose message
says what was wrong and where; one Fivetran should retry (a service down, the JVM lost, a commit
race lost after the destination's own retries) a gRPC status UNAVAILABLE, and a bug INTERNAL,
as the SDK's guide asks (``Answer``). Either way the server keeps serving.
"""

from __future__ import annotations

import enum
import logging
import time
import traceback
from collections.abc import Callable
from typing import TypeVar, assert_never

import grpc

from spark_destination.core.config import BatchFileFormat
from spark_destination.core.errors import (
    DestinationError,
    RenderError,
    RetryableError,
    UnsupportedOperationError,
)
from spark_destination.engine.engine import Engine
from spark_destination.server import form, mapping
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

log = logging.getLogger("spark_destination.server")

R = TypeVar("R")
Done = TypeVar(
    "Done",
    pb.CreateTableResponse,
    pb.AlterTableResponse,
    pb.TruncateResponse,
    pb.WriteBatchResponse,
)


def failure_message(exc: BaseException) -> str:
    if isinstance(exc, DestinationError):
        return str(exc)
    # Unexpected: name the type only, since library messages may quote data.
    return f"internal error ({type(exc).__name__}); see the destination's logs"


class Answer(enum.Enum):
    """How a failed RPC is answered (docs/operations.md, "Errors")."""

    TASK = "task"  # the user must fix something: a task stops the sync and says what
    UNAVAILABLE = "UNAVAILABLE"  # a service down, a JVM lost, a race lost: Fivetran retries
    INTERNAL = "INTERNAL"  # a bug in the destination


def answer_for(exc: BaseException) -> Answer:
    if isinstance(exc, RetryableError):
        return Answer.UNAVAILABLE
    if isinstance(exc, RenderError) or not isinstance(exc, DestinationError):
        return Answer.INTERNAL
    return Answer.TASK


class DestinationServicer(pb_grpc.DestinationConnectorServicer):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def _call(
        self,
        rpc: str,
        what: str,
        action: Callable[[], R],
        on_failure: Callable[[str], R],
        context: grpc.ServicerContext | None,
    ) -> R:
        """``action()``'s response; on a failure, the answer its class calls for (``Answer``):
        a task (``on_failure``), or a gRPC status through ``context`` (None: always
        ``on_failure``, as the setup tests answer)."""
        started = time.perf_counter()
        try:
            response = action()
        except Exception as raised:
            exc = self._engine.explain_failure(raised)
            message = failure_message(exc)
            answer = answer_for(exc)
            if isinstance(exc, DestinationError):
                log.warning("%s %s failed (%s): %s", rpc, what, answer.value, exc.loggable)
            else:
                # The type and where it was raised, never the exception's text (library
                # messages may quote data).
                frames = traceback.extract_tb(exc.__traceback__)
                where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
                log.error("%s %s failed unexpectedly: %s%s", rpc, what, type(exc).__name__, where)
            match answer:
                case Answer.TASK:
                    return on_failure(message)
                case Answer.UNAVAILABLE | Answer.INTERNAL if context is None:
                    return on_failure(message)
                case Answer.UNAVAILABLE:
                    context.abort(grpc.StatusCode.UNAVAILABLE, f"{rpc} {what}: {message}")
                case Answer.INTERNAL:
                    context.abort(grpc.StatusCode.INTERNAL, f"{rpc} {what}: {message}")
                case _:
                    assert_never(answer)
            raise AssertionError("context.abort returned") from None  # it raises
        log.info("%s %s done in %.3f s", rpc, what, time.perf_counter() - started)
        return response

    def ConfigurationForm(  # noqa: N802 - gRPC method names
        self, request: common.ConfigurationFormRequest, context: grpc.ServicerContext
    ) -> common.ConfigurationFormResponse:
        return form.configuration_form()

    def Capabilities(  # noqa: N802
        self, request: pb.CapabilitiesRequest, context: grpc.ServicerContext
    ) -> pb.CapabilitiesResponse:
        # The request carries no configuration: the server's defaults (``serve`` flags) decide.
        parquet = self._engine.config({}).batch_file_format is BatchFileFormat.PARQUET
        return pb.CapabilitiesResponse(batch_file_format=pb.PARQUET if parquet else pb.CSV)

    def Test(  # noqa: N802
        self, request: common.TestRequest, context: grpc.ServicerContext
    ) -> common.TestResponse:
        def run() -> common.TestResponse:
            if request.name == form.TEST_SETTINGS:
                self._engine.config(request.configuration)  # raises on a bad value
            elif request.name == form.TEST_WAREHOUSE:
                self._engine.check_warehouse(request.configuration)
            elif request.name == form.TEST_CATALOG:
                self._engine.probe_catalog(request.configuration)
            else:
                return common.TestResponse(failure=f"unknown test {request.name!r}")
            return common.TestResponse(success=True)

        return self._call(
            "Test", repr(request.name), run, lambda m: common.TestResponse(failure=m), None
        )

    def DescribeTable(  # noqa: N802
        self, request: pb.DescribeTableRequest, context: grpc.ServicerContext
    ) -> pb.DescribeTableResponse:
        def run() -> pb.DescribeTableResponse:
            table = self._engine.describe_table(
                request.configuration, mapping.describe_from_proto(request)
            )
            if table is None:
                return pb.DescribeTableResponse(not_found=True)
            return pb.DescribeTableResponse(table=mapping.table_to_proto(table))

        return self._call(
            "DescribeTable",
            mapping.name_of(request),
            run,
            lambda m: pb.DescribeTableResponse(task=common.Task(message=m)),
            context,
        )

    def _change(
        self,
        rpc: str,
        request: mapping.ChangeMessage,
        answer: type[Done],
        context: grpc.ServicerContext,
    ) -> Done:
        """An RPC that changes one table: success, a warning (it succeeded, changing values
        bad_value_policy=null allows it to), or a task saying why not."""

        def run() -> Done:
            result = self._engine.apply(request.configuration, mapping.change_from_proto(request))
            if result.warning is not None:
                # The sync continues; the values changed are in the changes table.
                return answer(warning=common.Warning(message=result.warning))
            return answer(success=True)

        return self._call(
            rpc,
            mapping.name_of(request),
            run,
            lambda m: answer(task=common.Task(message=m)),
            context,
        )

    def CreateTable(  # noqa: N802 - gRPC method names
        self, request: pb.CreateTableRequest, context: grpc.ServicerContext
    ) -> pb.CreateTableResponse:
        return self._change("CreateTable", request, pb.CreateTableResponse, context)

    def AlterTable(  # noqa: N802
        self, request: pb.AlterTableRequest, context: grpc.ServicerContext
    ) -> pb.AlterTableResponse:
        return self._change("AlterTable", request, pb.AlterTableResponse, context)

    def Truncate(  # noqa: N802
        self, request: pb.TruncateRequest, context: grpc.ServicerContext
    ) -> pb.TruncateResponse:
        return self._change("Truncate", request, pb.TruncateResponse, context)

    def WriteBatch(  # noqa: N802
        self, request: pb.WriteBatchRequest, context: grpc.ServicerContext
    ) -> pb.WriteBatchResponse:
        return self._change("WriteBatch", request, pb.WriteBatchResponse, context)

    def WriteHistoryBatch(  # noqa: N802
        self, request: pb.WriteHistoryBatchRequest, context: grpc.ServicerContext
    ) -> pb.WriteBatchResponse:
        return self._change("WriteHistoryBatch", request, pb.WriteBatchResponse, context)

    def Migrate(  # noqa: N802
        self, request: pb.MigrateRequest, context: grpc.ServicerContext
    ) -> pb.MigrateResponse:
        name = f"{request.details.schema!r}.{request.details.table!r}"

        def run() -> pb.MigrateResponse:
            try:
                migration = mapping.migrate_from_proto(request)
                self._engine.migrate(request.configuration, migration)
            except UnsupportedOperationError as exc:
                log.info("Migrate %s answered unsupported: %s", name, exc)
                return pb.MigrateResponse(unsupported=True)
            return pb.MigrateResponse(success=True)

        return self._call(
            "Migrate",
            name,
            run,
            lambda m: pb.MigrateResponse(task=common.Task(message=m)),
            context,
        )
