"""Fivetran's partner log format: one JSON object per line on stdout.

Only INFO, WARNING and SEVERE are accepted levels. Messages must never contain keys or row
values; the code logs names, counts and timings only.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Final, TextIO

ORIGIN: Final = "sdk_destination"


def fivetran_level(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "SEVERE"
    if levelno >= logging.WARNING:
        return "WARNING"
    return "INFO"


class JsonLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[0] is not None:
            # The exception type only: exception text from libraries may quote data.
            message = f"{message} ({record.exc_info[0].__name__})"
        return json.dumps(
            {"level": fivetran_level(record.levelno), "message": message, "message-origin": ORIGIN}
        )


def configure(stream: TextIO | None = None, level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # py4j logs every JVM call at INFO; sqlglot warns on Iceberg DDL it renders as commands.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
