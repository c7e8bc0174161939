"""Fivetran's partner log format: one JSON object per line on stdout.

Only INFO, WARNING and SEVERE are accepted levels. Messages must never contain keys or row
values; the code logs names, counts and timings only. Spark's own (JVM) log lines are written
in the same format by the log4j configuration in ``runtime/spark/log4j2.properties``.

When Fivetran sets ``FIVETRAN_ACCOUNT_NAME`` / ``FIVETRAN_GROUP_NAME`` (reference §1), every
message starts with them, so a line copied out of a shared log still says whose sync it was.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from typing import Final, TextIO

ORIGIN: Final = "sdk_destination"
# How the context prefix reaches the JVM's log lines (runtime/spark/log4j2.properties reads it).
JVM_PREFIX_VARIABLE: Final = "SPARK_DESTINATION_LOG_PREFIX"
# Environment variable -> the name it goes by in the context prefix.
CONTEXT_VARIABLES: Final = (
    ("FIVETRAN_ACCOUNT_NAME", "account"),
    ("FIVETRAN_GROUP_NAME", "group"),
)


def fivetran_level(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "SEVERE"
    if levelno >= logging.WARNING:
        return "WARNING"
    return "INFO"


def context_prefix(environ: Mapping[str, str]) -> str:
    """``[account=a group=g] `` from the variables that are set; empty when none is."""
    parts = [f"{name}={environ[var]}" for var, name in CONTEXT_VARIABLES if environ.get(var)]
    return f"[{' '.join(parts)}] " if parts else ""


class JsonLineFormatter(logging.Formatter):
    def __init__(self, prefix: str = "") -> None:
        super().__init__()
        self._prefix = prefix

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[0] is not None:
            # The exception type only: exception text from libraries may quote data.
            message = f"{message} ({record.exc_info[0].__name__})"
        return json.dumps(
            {
                "level": fivetran_level(record.levelno),
                "message": self._prefix + message,
                "message-origin": ORIGIN,
            }
        )


class _CurrentStdoutHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stdout`` is at the time of each record.

    A terminal progress display (``replay``) swaps ``sys.stdout`` for a proxy that prints
    above the bar; a handler holding the original stream would tear the display.
    """

    def __init__(self) -> None:
        super().__init__(sys.stdout)

    @property
    def stream(self) -> TextIO:
        return sys.stdout

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def configure(
    stream: TextIO | None = None,
    level: int = logging.INFO,
    environ: Mapping[str, str] | None = None,
) -> None:
    handler = logging.StreamHandler(stream) if stream is not None else _CurrentStdoutHandler()
    prefix = context_prefix(os.environ if environ is None else environ)
    handler.setFormatter(JsonLineFormatter(prefix))
    if environ is None:
        # Inherited by the Spark JVM started later in this process.
        os.environ[JVM_PREFIX_VARIABLE] = prefix
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # py4j logs every JVM call at INFO; sqlglot warns on Iceberg DDL it renders as commands.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
