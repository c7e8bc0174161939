"""Logs are Fivetran partner JSON lines: level INFO/WARNING/SEVERE, message, message-origin."""

from __future__ import annotations

import io
import json
import logging

from spark_destination.server import logs


def test_log_lines_are_fivetran_json_with_mapped_levels() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    try:
        logs.configure(stream=stream)
        _emit()
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
    _check(stream.getvalue())


def _emit() -> None:
    log = logging.getLogger("spark_destination.test")
    log.debug("below the configured level: not written")
    log.info("hello %s", "world")
    log.warning("careful")
    try:
        raise ValueError("secret row value")
    except ValueError as exc:
        log.error("failed", exc_info=exc)


def _check(text: str) -> None:
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["level"] for line in lines] == ["INFO", "WARNING", "SEVERE"]
    assert lines[0] == {
        "level": "INFO",
        "message": "hello world",
        "message-origin": "sdk_destination",
    }
    # Exception text can quote data: only the type is logged.
    assert lines[2]["message"] == "failed (ValueError)"
    assert "secret" not in text
