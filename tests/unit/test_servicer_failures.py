"""Failures are answered by their class: a task for what the user must fix, gRPC UNAVAILABLE for
what Fivetran should retry, INTERNAL for a bug; the logs get the value-free text."""

from __future__ import annotations

import logging

import grpc
import pytest

from spark_destination.core.errors import (
    CommitRaceLostError,
    ConfigurationError,
    ExecutionError,
    InvalidRequestError,
    RenderError,
    ServiceUnavailableError,
    SparkLostError,
    ValueConversionError,
)
from spark_destination.server.servicer import DestinationServicer


class _Aborted(Exception):
    pass


class _Context:
    """What grpc gives a handler: ``abort`` ends the call with a status (by raising)."""

    def __init__(self) -> None:
        self.status: tuple[grpc.StatusCode, str] | None = None

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.status = (code, details)
        raise _Aborted


class _FailingEngine:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def apply(self, *_args: object) -> None:
        raise self.error

    def explain_failure(self, exc: Exception) -> Exception:
        return exc  # the JVM is alive


def _create(error: Exception, context: _Context | None = None):  # type: ignore[no-untyped-def]
    from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

    servicer = DestinationServicer(_FailingEngine(error))  # type: ignore[arg-type]
    request = pb.CreateTableRequest(schema_name="s", table=common.Table(name="t"))
    return servicer.CreateTable(request, context or _Context())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "error",
    [
        InvalidRequestError("column 'x' is not a column of the table"),
        ValueConversionError("column 'd' cannot change"),
        ConfigurationError("unknown configuration key(s) 'x'"),
        ExecutionError("merge into 't' failed: [X] reason"),
    ],
)
def test_what_the_user_must_fix_is_a_task(error: Exception) -> None:
    context = _Context()
    response = _create(error, context)
    assert response.WhichOneof("response") == "task"
    assert response.task.message == str(error)
    assert context.status is None


@pytest.mark.parametrize(
    "error",
    [
        ServiceUnavailableError("reading table 't' failed (the catalog did not answer)"),
        CommitRaceLostError("merge into 't' failed: other writers committed (5 retries)"),
        SparkLostError("the Spark JVM stopped while the request ran"),
    ],
)
def test_what_fivetran_should_retry_is_unavailable(error: Exception) -> None:
    context = _Context()
    with pytest.raises(_Aborted):
        _create(error, context)
    assert context.status == (grpc.StatusCode.UNAVAILABLE, f"CreateTable 's'.'t': {error}")


@pytest.mark.parametrize("error", [RuntimeError("row value secret-7"), RenderError("bad")])
def test_a_bug_is_internal_and_names_only_its_type(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    context = _Context()
    with pytest.raises(_Aborted):
        _create(error, context)
    assert context.status is not None
    code, details = context.status
    assert code == grpc.StatusCode.INTERNAL
    assert "secret-7" not in details and "secret-7" not in caplog.text


def test_a_setup_test_answers_every_failure_as_a_failure() -> None:
    """The ConfigurationForm's tests show every failure to the user setting up, as a failure."""
    from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common

    class _Engine(_FailingEngine):
        def config(self, *_args: object) -> None:
            raise self.error

    error = ServiceUnavailableError("the catalog did not answer")
    servicer = DestinationServicer(_Engine(error))  # type: ignore[arg-type]
    request = common.TestRequest(name="settings_are_valid")
    response = servicer.Test(request, _Context())  # type: ignore[arg-type]
    assert response.WhichOneof("response") == "failure" and response.failure == str(error)


def test_a_quoted_value_reaches_the_user_but_not_the_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    error = ValueConversionError(
        "column 'd' cannot change: the first is 'secret-2.5'",
        loggable="column 'd' cannot change",
    )
    response = _create(error)
    assert response.WhichOneof("response") == "task"
    assert "secret-2.5" in response.task.message
    assert "column 'd' cannot change" in caplog.text
    assert "secret-2.5" not in caplog.text


def test_project_errors_are_passed_on_verbatim() -> None:
    response = _create(ExecutionError("merge into 't' failed: [X] reason"))
    assert response.task.message == "merge into 't' failed: [X] reason"
