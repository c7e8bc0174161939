"""The batch and history MERGEs run with settings of their own on a real session, and only
they: whole-stage code generation off (``executor.MERGE_SETTINGS``; docs/benchmarks.md, issue
33) and, for the history MERGE, Iceberg's write distribution ``none``. Every other statement
runs on the session's own settings, and nothing is left set after the request. (The operator's
settings winning is tested on a stand-in session: tests/unit/test_history_merge_runtime.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from spark_destination.runtime.execute.executor import (
    DISTRIBUTION_MODE_CONF,
    WHOLE_STAGE_CODEGEN_CONF,
    Executor,
)
from tests.spark.test_history_grpc import TMAX, history_columns, ok, write_history
from tests.support.destination import Destination, Lake, column

# Merge mode: deferred mode's batches are MERGEd by a flush, which keeps Spark's defaults.
pytestmark = [pytest.mark.spark, pytest.mark.parametrize("dest", ["merge"], indirect=True)]

SETTINGS = (WHOLE_STAGE_CODEGEN_CONF, DISTRIBUTION_MODE_CONF)


def test_only_the_merges_run_without_whole_stage_codegen(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, tuple[str | None, ...]]] = []
    run = Executor.sql

    def recording(self: Executor, text: str, *, what: str, **kwargs: Any) -> Any:
        seen.append((what, tuple(self.session.conf.get(key, None) for key in SETTINGS)))
        return run(self, text, what=what, **kwargs)

    monkeypatch.setattr(Executor, "sql", recording)
    columns = [column("id", "LONG", pk=True), column("note", "STRING")]
    ok(dest.create("settings", columns))
    batch = dest.write_file(["id", "note"], [["1", "a"], ["2", "b"]])
    ok(dest.write("settings", columns, replace=[batch]))
    history = history_columns(column("v", "STRING"))
    ok(dest.create("hist_settings", history))
    rows = [["1", "a", "2024-01-01T00:00:00Z", TMAX, "true", "2024-01-02T00:00:00Z"]]
    batch = dest.write_file([c.name for c in history], rows)
    ok(write_history(dest, "hist_settings", history, replace=[batch]))

    def ran(prefix: str) -> list[tuple[str | None, ...]]:
        return [settings for what, settings in seen if what.startswith(prefix)]

    assert ran("merge batch") == [("false", None)], seen
    assert ran("merge history") == [("false", "none")], seen
    # Every other statement ran on the session's own settings (neither is set there).
    others = [settings for what, settings in seen if not what.startswith("merge ")]
    assert others and all(settings == (None, None) for settings in others), seen
    assert lake.session.conf.get(WHOLE_STAGE_CODEGEN_CONF) == "true"  # Spark's default
