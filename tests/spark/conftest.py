"""One SparkSession for the whole test run: a JVM costs 5-10 s to start, and a process can
hold only one (``build_session`` refuses a second)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from spark_destination.runtime.session import SparkSettings, build_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MARKER = "spark: needs a JVM and a local Spark session (slow start-up, shared across the run)"


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml registers the marker; register it here only when run without that file
    # (``--strict-markers`` would otherwise reject it).
    registered = (line.split(":", 1)[0].strip() for line in config.getini("markers"))
    if "spark" not in registered:
        config.addinivalue_line("markers", _MARKER)


@pytest.fixture(scope="session")
def spark_settings(tmp_path_factory: pytest.TempPathFactory) -> SparkSettings:
    """The settings of the shared session; the warehouse lives in a per-run temp folder.

    The relocated Jackson jar uses the default cache (``$SPARK_DESTINATION_CACHE`` or
    ``~/.cache/spark-destination``), as in production, so it is built once per machine.
    """
    return SparkSettings(warehouse=str(tmp_path_factory.mktemp("warehouse")))


@pytest.fixture(scope="session")
def spark(spark_settings: SparkSettings) -> Iterator[SparkSession]:
    session = build_session(spark_settings)
    try:
        yield session
    finally:
        session.stop()
