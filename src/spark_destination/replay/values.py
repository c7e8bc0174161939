"""Tester input JSON values as the CSV text the tester writes, and its instants.

Numbers keep their source text (``JsonNumber``), so ``100.45`` is never a float on the way;
instants have millisecond precision and print like Java's ``Instant.toString``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from spark_destination.core.errors import DestinationError

# The open end of a history version (reference §6.2).
TMAX: Final = "9999-12-31T23:59:59.999Z"
# Consumed by the tester for history tables; never written as a column.
OP_TIME: Final = "op_time"

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS: Final = timedelta(milliseconds=1)


class TesterInputError(DestinationError, ValueError):
    """A tester input file or data folder does not follow the tester's format.

    Under the project's root, so the command line reports it as it reports every other error.
    """


class JsonNumber(str):
    """A JSON number kept as its source text, so ``100.45`` stays ``100.45`` (no float trip)."""

    __slots__ = ()


def load_input(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(
            path.read_text(encoding="utf-8"), parse_int=JsonNumber, parse_float=JsonNumber
        )
    except json.JSONDecodeError as exc:
        raise TesterInputError(f"{path.name} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TesterInputError(f"{path.name}: the top level must be a JSON object")
    return data


def _json_text(value: Any) -> str:
    """Compact JSON, writing numbers with their original text."""
    if isinstance(value, JsonNumber):
        return str(value)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k))}:{_json_text(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v) for v in value) + "]"
    return json.dumps(value)


def csv_value(value: Any, null_string: str) -> str:
    """The CSV text the tester writes for one JSON value."""
    if value is None:
        return null_string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # JsonNumber included: its text as written
        return str(value)
    if isinstance(value, Mapping | list):
        return _json_text(value)
    if isinstance(value, int | float):  # hand-built rows that bypassed load_input
        return str(value)
    raise TesterInputError(f"unsupported JSON value of type {type(value).__name__}")


def parse_instant(text: str) -> int:
    """Epoch milliseconds of an ISO-8601 instant; no offset means UTC."""
    try:
        value = datetime.fromisoformat(str(text))
    except ValueError:
        raise TesterInputError(f"{text!r} is not an ISO-8601 instant") from None
    value = value if value.tzinfo else value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _ONE_MS


def format_instant(millis: int) -> str:
    """``2025-11-21T14:59:47.315Z``, or ``2005-05-23T20:57:00Z`` when there are no millis."""
    value = _EPOCH + timedelta(milliseconds=millis)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = millis % 1000
    return f"{text}.{fraction:03d}Z" if fraction else f"{text}Z"


def instant_datetime(millis: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=millis)
