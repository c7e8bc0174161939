"""``serve --prewarm`` warms the write path (``engine.warm_up``): small batches of every kind
run through the engine on throwaway tables in a temporary warehouse, which is gone afterwards;
the user's warehouse is untouched."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from spark_destination.engine import warm_up
from spark_destination.engine.engine import Engine
from spark_destination.runtime.spark.session import SparkSettings

pytestmark = pytest.mark.spark


def test_the_warm_up_writes_every_batch_kind_and_leaves_nothing_behind(
    engine: Engine,
    spark_settings: SparkSettings,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(warm_up.scratch, "process_dir", lambda: tmp_path)
    warehouses: list[str] = []
    apply = engine.apply

    def recording(configuration: dict[str, str], request: Any) -> Any:
        warehouses.append(configuration["warehouse"])
        return apply(configuration, request)

    monkeypatch.setattr(engine, "apply", recording)
    before = sorted(Path(spark_settings.warehouse).iterdir())
    with caplog.at_level(logging.INFO, logger=warm_up.__name__):
        warm_up.warm_write_path(engine)
    # Every request succeeded (a failure is logged as a warning instead).
    assert [r.message for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert any(warm_up.WARM in r.message for r in caplog.records)
    assert sorted(Path(spark_settings.warehouse).iterdir()) == before
    assert list(tmp_path.iterdir()) == []
    # It ran in the process's scratch folder, not in /tmp.
    assert warehouses
    assert all(Path(w).is_relative_to(tmp_path) for w in warehouses)
