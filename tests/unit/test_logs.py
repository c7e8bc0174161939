"""Logs are Fivetran partner JSON lines: level INFO/WARNING/SEVERE, message, message-origin."""

from __future__ import annotations

import io
import json
import logging

import pytest

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


def test_fivetran_account_and_group_prefix_every_message_when_set() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    environ = {"FIVETRAN_ACCOUNT_NAME": "acme", "FIVETRAN_GROUP_NAME": "", "OTHER": "x"}
    try:
        logs.configure(stream=stream, environ=environ)
        logging.getLogger("spark_destination.test").info("hello")
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
    assert json.loads(stream.getvalue())["message"] == "[account=acme] hello"
    assert logs.context_prefix({}) == ""
    both = {"FIVETRAN_ACCOUNT_NAME": "a", "FIVETRAN_GROUP_NAME": "g"}
    assert logs.context_prefix(both) == "[account=a group=g] "


def test_the_default_handler_follows_sys_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress display swaps sys.stdout; log lines must go to the current one."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    first, second = io.StringIO(), io.StringIO()
    try:
        monkeypatch.setattr("sys.stdout", first)
        logs.configure(environ={})
        monkeypatch.setattr("sys.stdout", second)
        logging.getLogger("spark_destination.test").info("where")
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
    assert first.getvalue() == ""
    assert json.loads(second.getvalue())["message"] == "where"


def test_jvm_log_config_maps_levels_and_hides_values_and_traces() -> None:
    from pathlib import Path

    from spark_destination.runtime.spark.session import log4j_option

    option = log4j_option()
    assert option.startswith("-Dlog4j2.configurationFile=file:")
    assert " " not in option
    text = Path(option.split("=", 1)[1].removeprefix("file:")).read_text(encoding="utf-8")
    assert "appender.json.target = SYSTEM_OUT" in text
    assert "alwaysWriteExceptions = false" in text
    assert "WARN=WARNING" in text and "ERROR=SEVERE" in text and "FATAL=SEVERE" in text


ADVICE = (
    "The value 'secret-1' of the type \"STRING\" cannot be cast; this behavior can be adjusted "
    "by setting 'spark.sql.debug.maxToStringFields' or 'spark.sql.parquet.int96RebaseModeInRead'"
    " (see 'spark.secret value' and 'spark.' and 'x.spark.a') 42"
)
KEPT = "'spark.sql.debug.maxToStringFields' or 'spark.sql.parquet.int96RebaseModeInRead'"


def test_quoted_values_are_masked_but_spark_setting_names_are_kept() -> None:
    from spark_destination.runtime.execute.spark_errors import mask_values

    masked = mask_values(ADVICE)
    assert "secret" not in masked and "x.spark.a" not in masked
    assert f"adjusted by setting {KEPT}" in masked
    assert masked.endswith("(see '…' and '…' and '…') 42")
    # Where values were bound every number goes, but not the digits of a kept setting name.
    numbers = mask_values(ADVICE, numbers=True)
    assert KEPT in numbers and numbers.endswith(") …")


def test_the_jvm_log_pattern_masks_as_the_python_side_does() -> None:
    """The log4j %replace pattern, applied here with Python's re (the syntax is common)."""
    import re
    from pathlib import Path

    from spark_destination.runtime.execute.spark_errors import SETTING_NAME
    from spark_destination.runtime.spark.session import log4j_option

    path = Path(log4j_option().split("=", 1)[1].removeprefix("file:"))
    layout = next(
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("appender.json.layout.pattern")
    )
    pattern = re.search(r"%replace\{%m\}\{(.*?)\}\{'\*\*\*'\}", layout)
    assert pattern is not None and SETTING_NAME in pattern.group(1)
    masked = re.sub(pattern.group(1), "'***'", ADVICE + " isn't X'0A'")
    assert f"adjusted by setting {KEPT}" in masked
    assert "secret" not in masked and "x.spark.a" not in masked
    assert masked.endswith("isn't X'***'")
