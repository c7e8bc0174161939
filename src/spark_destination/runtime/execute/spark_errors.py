"""Spark's failures as one line the user and the logs may see: never a row value.

Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), and a
message that prints part of a plan can show bound keys as bare literals, so only the error class
and the first sentence are kept, with quoted text (and, where values were bound, every number)
masked.
"""

from __future__ import annotations

import re
from typing import Final

# A Spark setting's name is not a value: Spark quotes it in its advice ("This behavior can be
# adjusted by setting 'spark.sql.debug.maxToStringFields'"), so quoted setting names are kept.
# The JVM's log lines mask the same way: runtime/spark/log4j2.properties holds this pattern too
# (a test checks), written with [.] because a properties file eats backslashes.
SETTING_NAME: Final = r"spark(?:[.][A-Za-z0-9_-]+)+"
# At each position: a quoted setting name (kept), other quoted text (masked), or a number, date
# or time as Spark prints a literal unquoted (``42``, ``-1.5E3``, ``2024-01-31``).
_TOKEN = re.compile(rf"(?P<setting>'{SETTING_NAME}')|(?P<quoted>'[^']*')|(?P<number>\d[\w.:+\-]*)")


def mask_values(text: str, *, numbers: bool = False) -> str:
    """``text`` with quoted values (and, if asked, unquoted numbers) masked; setting names stay."""

    def masked(match: re.Match[str]) -> str:
        if match["setting"]:
            return match["setting"]
        if match["quoted"]:
            return "'…'"
        return "…" if numbers else match["number"]

    return _TOKEN.sub(masked, text)


def describe_spark_error(exc: BaseException, *, values_bound: bool = False) -> str:
    """A one-line, value-free account of a Spark failure.

    Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), so
    only the error class and Spark's first sentence with quoted literals masked are kept (quoted
    setting names stay: they are Spark's advice, not data). When
    the statement had values bound to it (a small batch's keys), a message that prints part of
    the plan could show them as unquoted literals: every number is masked too.
    """
    text = str(exc)
    if hasattr(exc, "java_exception"):
        text = str(exc.java_exception)  # a Py4JJavaError's str() includes the whole JVM trace
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return mask_values(first, numbers=values_bound)[:500]
