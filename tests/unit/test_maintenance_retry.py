"""Maintenance runs its statements through ``Executor.sql``, the path of every other
statement: a procedure whose commit lost a race with another writer is retried, and its result
row reaches the report."""

from __future__ import annotations

from typing import Any

import pytest

from spark_destination.dialects.render import render
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.ir import RewriteDataFilesOp, TableHealthOp, TableRef
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.maintenance import run_maintenance, table_health
from tests.support.fake_spark import FakeResult, FakeSession
from tests.support.retries import short_retries

TABLE = TableRef(catalog="lake", schema="s", name="t")


class _JavaClass:
    def __init__(self, name: str) -> None:
        self._name = name

    def getName(self) -> str:  # noqa: N802 - the Java API's name
        return self._name


class _JavaException:
    def __init__(self, name: str) -> None:
        self._class = _JavaClass(name)

    def getClass(self) -> _JavaClass:  # noqa: N802
        return self._class

    def getCause(self) -> None:  # noqa: N802
        return None


class _JavaError(Exception):
    """What py4j raises, as far as ``transient`` reads it: the Java exception's class."""

    def __init__(self, name: str) -> None:
        super().__init__("An error occurred while calling o1.sql")
        self.java_exception = _JavaException(name)


class _FailingCalls(FakeSession):
    """Each ``CALL`` fails first with each of ``errors``, then runs."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(rows=[(1, 0, 1)])
        self._errors = errors

    def sql(self, text: str, args: dict[str, object] | None = None) -> FakeResult:
        if text.startswith("CALL") and self._errors:
            self.ran.append((text, args))
            raise _JavaError(self._errors.pop(0))
        if not text.startswith("CALL"):  # the health query's one row
            self.ran.append((text, args))
            return FakeResult([(1, 0, 1, 1_700_000_000_000, 0)])
        return super().sql(text, args)


def _maintain(session: FakeSession) -> Any:
    (compact,) = render(RewriteDataFilesOp(table=TABLE), SPARK_ICEBERG)
    (health,) = render(TableHealthOp(table=TABLE), SPARK_ICEBERG)
    executor = Executor(session)  # type: ignore[arg-type]
    return run_maintenance(executor, TABLE, (compact,), health, table_health(executor, health))


def test_a_procedure_whose_commit_lost_a_race_is_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    short_retries(monkeypatch)
    session = _FailingCalls(["org.apache.iceberg.exceptions.CommitFailedException"])
    report = _maintain(session)
    calls = [text for text, _ in session.ran if text.startswith("CALL")]
    assert len(calls) == 2  # the failed attempt and the retry
    [(summary, _, result)] = report.steps
    assert summary.startswith("compact data files")
    assert result == (("c0", 1), ("c1", 0), ("c2", 1))
    assert "result c0=1, c1=0, c2=1" in report.text()


def test_a_procedure_that_fails_for_good_is_not_retried() -> None:
    session = _FailingCalls(["java.lang.IllegalArgumentException"])
    with pytest.raises(_JavaError):
        _maintain(session)
    assert len([text for text, _ in session.ran if text.startswith("CALL")]) == 1
