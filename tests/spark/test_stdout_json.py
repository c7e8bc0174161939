"""Under Fivetran every stdout line must be a partner JSON log line, the JVM's included.

A replay runs as its own process (its own JVM, with the destination's log4j configuration), as
``demo`` does; people read its report on stderr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_destination.runtime.spark.session import COALESCE_MIN_PARTITIONS_CONF

pytestmark = pytest.mark.spark

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "spark_destination" / "samples"


def test_replay_stdout_is_only_fivetran_json_with_context_and_progress(tmp_path: Path) -> None:
    env = {**os.environ, "FIVETRAN_ACCOUNT_NAME": "acme", "FIVETRAN_GROUP_NAME": "lake"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_destination.cli",
            "replay",
            str(SAMPLES / "01_basic.json"),
            "--warehouse",
            str(tmp_path / "warehouse"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(set(line) == {"level", "message", "message-origin"} for line in lines)
    assert {line["level"] for line in lines} <= {"INFO", "WARNING", "SEVERE"}
    # Python's lines and the JVM's (log4j) lines alike carry the account/group context.
    assert all(line["message"].startswith("[account=acme group=lake] ") for line in lines)
    messages = "\n".join(line["message"] for line in lines)
    assert "starting Spark" in messages
    assert "decoded " in messages  # rows decoded per batch file
    assert "replay: [01_basic.json] WriteBatch all_types" in messages
    # The connector's own setting is not reported as deprecated on every session.
    assert "minPartitionNum' has been deprecated" not in messages
    # The human report (and the tables) go to stderr, and nothing else does: each step once,
    # no gRPC start-up noise, and last where the tables are and how other engines read them.
    human = result.stderr
    assert "\nOK\n" in human
    assert human.count("] WriteBatch all_types (replace 1, update 1, delete 1) -> success") == 1
    assert human.count("Test spark_reaches_warehouse -> success") == 1
    assert "absl" not in human and "fork_posix" not in human and "gRPC" not in human
    warehouse = tmp_path / "warehouse"
    table = warehouse / "tester" / "all_types"
    last = human.rstrip("\n").splitlines()[-7:]
    assert last[0].startswith(f"Warehouse: {warehouse} ")
    assert f"spark.sql.catalog.lake.warehouse={warehouse}" in last[1]
    metadata = re.search(r"from_metadata\('([^']+)'\)", last[2])
    assert metadata is not None and Path(metadata.group(1)).parent == table / "metadata"
    assert Path(metadata.group(1)).is_file()
    assert "SET autoinstall_known_extensions = FALSE; LOAD iceberg;" in last[5]
    assert last[6].strip() == f"SELECT * FROM iceberg_scan('{table}');"


# The logger of Spark's SQL settings, which warns about deprecated ones.
SQL_CONF_LOGGER = "org.apache.spark.sql.internal.SQLConf"


def _warning(log4j: Any, logger: str, message: str) -> Any:
    """A WARN event of ``logger`` as log4j builds one (to run through its configuration)."""
    return (
        log4j.core.impl.Log4jLogEvent.newBuilder()
        .setLoggerName(logger)
        .setLevel(log4j.Level.WARN)
        .setMessage(log4j.message.SimpleMessage(message))
        .build()
    )


def test_the_jvm_log_masks_quoted_values_but_not_apostrophes_or_setting_names(
    spark: SparkSession,
) -> None:
    jvm: Any = spark._jvm  # noqa: SLF001 - log4j's own objects, as Spark's classes use them
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    layout = context.getConfiguration().getAppender("json").getLayout()
    message = (
        "the value 'secret-1' isn't valid; X'0A0B' doesn't fit (col='secret-2'); adjusted by "
        "setting 'spark.sql.debug.maxToStringFields'"
    )
    line = json.loads(layout.toSerializable(_warning(log4j, "sd.masking", message)))
    assert line["message"].endswith(
        "the value '***' isn't valid; X'***' doesn't fit (col='***'); adjusted by setting "
        "'spark.sql.debug.maxToStringFields'"
    ), line["message"]


def test_the_jvm_log_names_an_exceptions_class_but_never_its_message(spark: SparkSession) -> None:
    """A fatal error in a task thread is logged as "Uncaught exception in thread ...": its
    class says what happened; its message may hold a value, so it is cut."""
    jvm: Any = spark._jvm  # noqa: SLF001 - log4j's own objects, as Spark's classes use them
    log4j = jvm.org.apache.logging.log4j
    layout = log4j.LogManager.getContext(False).getConfiguration().getAppender("json").getLayout()

    def logged(thrown: Any) -> str:
        builder = (
            log4j.core.impl.Log4jLogEvent.newBuilder()
            .setLoggerName("sd.thrown")
            .setLevel(log4j.Level.ERROR)
            .setMessage(log4j.message.SimpleMessage("Uncaught exception in thread worker"))
        )
        if thrown is not None:
            builder = builder.setThrown(thrown)
        return str(json.loads(layout.toSerializable(builder.build()))["message"])

    with_value = logged(jvm.java.lang.NumberFormatException('For input string: "secret-3"'))
    assert with_value.endswith("worker (java.lang.NumberFormatException)"), with_value
    assert "secret" not in with_value and "input" not in with_value
    assert logged(jvm.java.lang.StackOverflowError()).endswith("(java.lang.StackOverflowError)")
    assert logged(None).endswith("Uncaught exception in thread worker")


def test_the_jvm_log_drops_only_the_warning_about_the_connectors_own_deprecated_setting(
    spark: SparkSession,
) -> None:
    """Spark calls ``COALESCE_MIN_PARTITIONS_CONF`` deprecated each time a session's settings
    are built; the connector sets it on purpose, so that warning is dropped, not others."""
    jvm: Any = spark._jvm  # noqa: SLF001 - log4j's own objects, as Spark's classes use them
    log4j = jvm.org.apache.logging.log4j
    configuration = log4j.LogManager.getContext(False).getConfiguration()
    logger = configuration.getLoggerConfig(SQL_CONF_LOGGER)
    assert logger.getName() == SQL_CONF_LOGGER  # its own configuration, not the root's

    def dropped(setting: str) -> bool:
        # Spark 3.5's text (SQLConf.logDeprecationWarning).
        message = (
            f"The SQL config '{setting}' has been deprecated in Spark v3.2 and may be removed "
            "in the future. Use 'spark.sql.x' instead."
        )
        return bool(logger.isFiltered(_warning(log4j, logger.getName(), message)))

    assert dropped(COALESCE_MIN_PARTITIONS_CONF)
    assert not dropped("spark.sql.hive.verifyPartitionPath")
    assert logger.getLevel().toString() == "WARN"
