"""One stand-in for a SparkSession, for pure tests of the runtime (no JVM).

It records every statement run (text and bound values) with the SQL settings in force at
that moment, and answers each with the rows given (none by default).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any


class FakeResult:
    def __init__(
        self, rows: Sequence[tuple[Any, ...]] = (), columns: Sequence[str] | None = None
    ) -> None:
        self._rows = list(rows)
        width = len(self._rows[0]) if self._rows else 0
        self.columns = list(columns) if columns is not None else [f"c{i}" for i in range(width)]

    def collect(self) -> list[tuple[Any, ...]]:
        return self._rows


class FakeConf:
    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)

    def getAll(self) -> list[tuple[str, str]]:  # noqa: N802 - PySpark's name
        return list(self.values.items())


class FakeContext:
    """A Spark application of its own per stand-in session: what one has run, another has not
    (``statement_runs``)."""

    _numbers = itertools.count(1)

    def __init__(self, startup: Mapping[str, str] | None = None) -> None:
        self.applicationId = f"fake-application-{next(self._numbers)}"  # noqa: N815 - PySpark's name
        self._startup = FakeConf(startup)

    def getConf(self) -> FakeConf:  # noqa: N802 - PySpark's name
        """The application's start-up settings (a copy, as PySpark's)."""
        return FakeConf(self._startup.values)


class FakeSession:
    def __init__(
        self, conf: Mapping[str, str] | None = None, rows: Sequence[tuple[Any, ...]] = ()
    ) -> None:
        self.sparkContext = FakeContext()  # noqa: N815 - PySpark's name
        self.conf = FakeConf(conf)
        self._rows = rows
        self.ran: list[tuple[str, dict[str, object] | None]] = []  # (SQL, bound values)
        self.conf_when_ran: list[dict[str, str]] = []

    def sql(self, text: str, args: dict[str, object] | None = None) -> FakeResult:
        self.ran.append((text, args))
        self.conf_when_ran.append(dict(self.conf.values))
        return FakeResult(self._rows)
