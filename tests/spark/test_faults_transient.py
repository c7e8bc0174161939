"""Transient failures (an Iceberg commit conflict, a lost shuffle block, a service that does not
answer) are retried inside the request within its retry budget, each retry logged; when the
budget is spent the answer is gRPC UNAVAILABLE (Fivetran retries); permanent ones are a task at
once. The failures are real Java exception objects thrown at the statement that commits the
batch (the MERGE; in deferred write mode the append to the intermediate table), classified by
their Java class (and its superclasses)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from spark_destination.runtime.execute import executor, faults
from tests.support.destination import CATALOGS, Destination, Lake, column
from tests.support.retries import short_retries

pytestmark = pytest.mark.spark

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING")]
HEADER = [c.name for c in COLUMNS]


def java_error(spark: SparkSession, cls: str, *, wrapped: bool = True) -> Py4JJavaError:
    jvm, gateway = spark._jvm, spark.sparkContext._gateway
    assert jvm is not None and gateway is not None
    args = gateway.new_array(jvm.java.lang.Object, 0)
    parts = cls.split(".")
    target: Any = jvm
    for part in parts:
        target = getattr(target, part)
    # Iceberg's exceptions take a format and its arguments; Java's own take a message.
    cause = target("injected") if cls.startswith("java.") else target("injected", args)
    thrown = jvm.org.apache.spark.SparkException("job aborted", cause) if wrapped else cause
    return Py4JJavaError("An error occurred while calling o1.sql.\n", thrown)


def committing(dest: Destination) -> str:
    """The first word of the statement that commits ``dest``'s WriteBatch: its MERGE, or in
    deferred mode its INSERT into the intermediate table (the flush merges later)."""
    return "INSERT" if dest.deferred else "MERGE"


def failing_commits(
    monkeypatch: pytest.MonkeyPatch,
    error: Callable[[], Py4JJavaError],
    times: int,
    *,
    statement: str,
) -> list[str]:
    """Make the next ``times`` statements starting with ``statement`` raise ``error()``;
    returns the attempts.

    Both ways the executor runs a statement fail: ``SparkSession.sql`` and, for a statement
    with bound values (a small batch's key filter), ``runtime.execute.bound_sql``."""
    original_sql, original_bound = SparkSession.sql, executor.bound_sql
    attempts: list[str] = []

    def attempt(text: str) -> None:
        if text.lstrip().upper().startswith(statement):
            attempts.append(text[: len(statement)])
            if len(attempts) <= times:
                raise error()

    def sql(self: SparkSession, text: str, *args: Any, **kwargs: Any) -> Any:
        attempt(text)
        return original_sql(self, text, *args, **kwargs)

    def bound(session: SparkSession, text: str, args: Any) -> Any:
        attempt(text)
        return original_bound(session, text, args)

    monkeypatch.setattr(SparkSession, "sql", sql)
    monkeypatch.setattr(executor, "bound_sql", bound)
    return attempts


def seeded(dest: Destination, lake: Lake) -> tuple[Any, ...]:
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    first = dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["1", "a"]])])
    assert first.WhichOneof("response") == "success"
    return (lake.rows(dest.schema, "t", order_by="id"), lake.snapshot_count(dest.schema, "t"))


@pytest.mark.parametrize(
    "cls",
    [
        "org.apache.iceberg.exceptions.CommitFailedException",
        "org.apache.spark.shuffle.MetadataFetchFailedException",
    ],
)
def test_a_transient_failure_is_retried_and_logged(
    cls: str,
    dest: Destination,
    lake: Lake,
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows, snapshots = seeded(dest, lake)
    short_retries(monkeypatch)
    if cls.endswith("MetadataFetchFailedException"):
        # (shuffleId, reduceId, message): built directly, no varargs.
        def error() -> Py4JJavaError:
            jvm = spark._jvm
            assert jvm is not None
            lost = jvm.org.apache.spark.shuffle.MetadataFetchFailedException(0, 0, "injected")
            return Py4JJavaError("lost", jvm.org.apache.spark.SparkException("aborted", lost))
    else:

        def error() -> Py4JJavaError:
            return java_error(spark, cls)

    retries = 3
    attempts = failing_commits(monkeypatch, error, times=retries, statement=committing(dest))
    batch = dest.write_file(HEADER, [["2", "b"]])
    logger = "spark_destination.runtime.execute.retry_policy"
    with caplog.at_level(logging.WARNING, logger=logger):
        response = dest.write("t", COLUMNS, replace=[batch])
    assert response.WhichOneof("response") == "success", response
    assert len(attempts) == retries + 1
    logged = [r.getMessage() for r in caplog.records if r.name == logger]
    assert len(logged) == retries and all("lost a commit race" in m for m in logged)
    assert cls in caplog.text
    assert lake.rows(dest.schema, "t", order_by="id") == [*rows, {"id": 2, "v": "b"}]
    assert lake.snapshot_count(dest.schema, "t") == snapshots + 1


def unavailable(call: Callable[[], Any]) -> grpc.RpcError:
    """The gRPC error ``call`` ends with: what Fivetran retries."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    error = info.value
    assert isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.UNAVAILABLE, error
    return error


@pytest.mark.parametrize(
    ("cls", "said"),
    [
        ("org.apache.iceberg.exceptions.CommitFailedException", "commit race lost"),
        ("java.net.ConnectException", "did not answer"),
        # Matched through its superclass (SocketException), as HTTP clients' own subclasses.
        ("java.net.PortUnreachableException", "did not answer"),
    ],
)
def test_retries_stop_when_the_budget_is_spent_and_fivetran_is_told_to_retry(
    cls: str,
    said: str,
    dest: Destination,
    lake: Lake,
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = seeded(dest, lake)
    policy = short_retries(monkeypatch)
    attempts = failing_commits(
        monkeypatch, lambda: java_error(spark, cls), times=1000, statement=committing(dest)
    )
    batch = dest.write_file(HEADER, [["2", "b"]])
    started = time.monotonic()
    error = unavailable(lambda: dest.write("t", COLUMNS, replace=[batch]))
    seconds = time.monotonic() - started
    assert said in error.details() and "'t'" in error.details(), error.details()
    # Retried with growing pauses until the budget was spent, not for ever.
    assert 3 < len(attempts) < 40, len(attempts)
    assert seconds < policy.race_seconds + 30, seconds
    after = (lake.rows(dest.schema, "t", order_by="id"), lake.snapshot_count(dest.schema, "t"))
    assert after == before
    # The server keeps serving: the same batch, the fault gone, succeeds.
    monkeypatch.undo()
    assert dest.write("t", COLUMNS, replace=[batch]).WhichOneof("response") == "success"


def test_a_validation_failure_without_another_writer_is_not_retried(
    dest: Destination, lake: Lake, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``ValidationException`` is a lost race only when the table moved meanwhile; here
    nothing else wrote it, so it is a real failure: one attempt, a task, the table as it was."""
    before = seeded(dest, lake)
    cls = "org.apache.iceberg.exceptions.ValidationException"
    attempts = failing_commits(
        monkeypatch, lambda: java_error(spark, cls), times=100, statement=committing(dest)
    )
    response = dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["2", "b"]])])
    assert response.WhichOneof("response") == "task"
    assert len(attempts) == 1
    after = (lake.rows(dest.schema, "t", order_by="id"), lake.snapshot_count(dest.schema, "t"))
    assert after == before


def unknown_state(spark: SparkSession) -> Py4JJavaError:
    """What a catalog raises when it may have applied a commit but could not confirm it."""
    jvm = spark._jvm
    assert jvm is not None
    # Its constructor takes the cause (a Throwable), not a format string.
    unknown = jvm.org.apache.iceberg.exceptions.CommitStateUnknownException(
        jvm.java.lang.RuntimeException("injected")
    )
    return Py4JJavaError("unknown", unknown)


@pytest.mark.parametrize("catalog_kind", CATALOGS, indirect=True)
def test_an_unconfirmed_commit_that_did_not_land_is_run_again_once(
    dest: Destination, lake: Lake, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalog answers "state unknown" before anything was applied: the table has not
    changed and no snapshot carries the statement's identity, so it runs again, once."""
    rows, snapshots = seeded(dest, lake)
    short_retries(monkeypatch)
    attempts = failing_commits(
        monkeypatch, lambda: unknown_state(spark), times=1, statement=committing(dest)
    )
    response = dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["2", "b"]])])
    assert response.WhichOneof("response") == "success", response
    assert len(attempts) == 2
    assert lake.rows(dest.schema, "t", order_by="id") == [*rows, {"id": 2, "v": "b"}]
    assert lake.snapshot_count(dest.schema, "t") == snapshots + 1


@pytest.mark.parametrize("catalog_kind", CATALOGS, indirect=True)
def test_an_unconfirmed_commit_that_landed_is_a_success_applied_once(
    dest: Destination, lake: Lake, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit applied, then the catalog's answer was lost (``CommitStateUnknownException``
    raised after the commit, before the executor took it as done): the executor finds the
    statement's snapshot by the request's identity and answers success, without running it
    again (an append run twice would add the rows twice)."""
    rows, snapshots = seeded(dest, lake)
    short_retries(monkeypatch)
    raised: list[int] = []

    def lose_the_answer(index: int, table: str) -> None:
        if not raised and (table == "t" or table.endswith("_t")):
            raised.append(index)
            raise unknown_state(spark)

    batch = dest.write_file(HEADER, [["2", "b"], ["3", "c"]])
    with faults.after_commit(lose_the_answer):
        response = dest.write("t", COLUMNS, replace=[batch])
    assert response.WhichOneof("response") == "success", response
    assert len(raised) == 1
    assert lake.rows(dest.schema, "t", order_by="id") == [
        *rows,
        {"id": 2, "v": "b"},
        {"id": 3, "v": "c"},
    ]
    # One commit for the batch (deferred mode: the append, then the flush's MERGE).
    assert lake.snapshot_count(dest.schema, "t") == snapshots + 1


def test_an_unconfirmed_commit_that_never_lands_fails_cleanly(
    dest: Destination, lake: Lake, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = seeded(dest, lake)
    short_retries(monkeypatch)
    attempts = failing_commits(
        monkeypatch, lambda: unknown_state(spark), times=100, statement=committing(dest)
    )
    batch = dest.write_file(HEADER, [["2", "b"]])
    unavailable(lambda: dest.write("t", COLUMNS, replace=[batch]))
    assert 3 < len(attempts) < 40, len(attempts)
    after = (lake.rows(dest.schema, "t", order_by="id"), lake.snapshot_count(dest.schema, "t"))
    assert after == before
