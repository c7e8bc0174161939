"""Spark's failures as one line the user and the logs may see: never a row value.

Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), and a
message that prints part of a plan can show bound keys as bare literals, so only the error class
and the first sentence are kept, with quoted text (and, where values were bound, every number)
masked.
"""

from __future__ import annotations

import re

# A number, date or time as Spark prints a literal unquoted (``42``, ``-1.5E3``, ``2024-01-31``).
_UNQUOTED_LITERAL = re.compile(r"\d[\w.:+\-]*")


def describe_spark_error(exc: BaseException, *, values_bound: bool = False) -> str:
    """A one-line, value-free account of a Spark failure.

    Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), so
    only the error class and Spark's first sentence with quoted literals masked are kept. When
    the statement had values bound to it (a small batch's keys), a message that prints part of
    the plan could show them as unquoted literals: every number is masked too.
    """
    text = str(exc)
    if hasattr(exc, "java_exception"):
        text = str(exc.java_exception)  # a Py4JJavaError's str() includes the whole JVM trace
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    masked = re.sub(r"'[^']*'", "'…'", first)
    if values_bound:
        masked = _UNQUOTED_LITERAL.sub("…", masked)
    return masked[:500]
