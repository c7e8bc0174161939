"""Java collections read through py4j as Python values, each fetched as one array.

py4j iterates a Java collection through its iterator until ``next`` throws, and PySpark
converts that exception, asking the JVM about its class many times: reading a table's
properties or identifier fields so took 15-19 ms each, against ~0.5 ms through an array
(docs/benchmarks.md, issue 33, seventeenth session). Every request reads them.
"""

from __future__ import annotations

from typing import Any


def java_list(values: Any) -> list[Any]:
    """The elements of a Java collection."""
    return list(values.toArray())


def java_map(values: Any) -> dict[str, str]:
    """A Java map's entries as text."""
    return {str(key): str(values.get(key)) for key in values.keySet().toArray()}
