"""Failures become a task for the user; the logs get the value-free text."""

from __future__ import annotations

import logging

import pytest

from spark_destination.core.errors import ExecutionError, ValueConversionError
from spark_destination.server.servicer import DestinationServicer, failure_message


class _FailingEngine:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def apply(self, *_args: object) -> None:
        raise self.error

    def explain_failure(self, exc: Exception) -> Exception:
        return exc  # the JVM is alive


def _create(error: Exception):  # type: ignore[no-untyped-def]
    from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

    servicer = DestinationServicer(_FailingEngine(error))  # type: ignore[arg-type]
    request = pb.CreateTableRequest(schema_name="s", table=common.Table(name="t"))
    return servicer.CreateTable(request, None)  # type: ignore[arg-type]


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


def test_unexpected_errors_name_only_their_type(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    response = _create(RuntimeError("row value secret-7"))
    assert response.task.message == failure_message(RuntimeError())
    assert "RuntimeError" in response.task.message
    assert "secret-7" not in response.task.message and "secret-7" not in caplog.text


def test_project_errors_are_passed_on_verbatim() -> None:
    response = _create(ExecutionError("merge into 't' failed: [X] reason"))
    assert response.task.message == "merge into 't' failed: [X] reason"
