"""The batch and history MERGEs run with settings of their own on a real session, and only
they: whole-stage code generation off until the statement has run once in this JVM and a small
batch of it switches it on (``statement_runs``; docs/benchmarks.md) and, for the
history MERGE, Iceberg's write distribution ``none``. Every other statement runs on the
session's own settings, and nothing is left set after the request. (The operator's settings
winning is tested on a stand-in session: tests/unit/test_history_merge_runtime.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from spark_destination.runtime.execute.executor import (
    DISTRIBUTION_MODE_CONF,
    Executor,
)
from spark_destination.runtime.execute.statement_runs import WHOLE_STAGE_CODEGEN_CONF
from tests.spark.test_history_grpc import TMAX, history_columns, ok, write_history
from tests.support.destination import Destination, Lake, column

# Merge mode: deferred mode's batches are MERGEd by a flush, which keeps Spark's defaults.
pytestmark = [pytest.mark.spark, pytest.mark.parametrize("dest", ["merge"], indirect=True)]

SETTINGS = (WHOLE_STAGE_CODEGEN_CONF, DISTRIBUTION_MODE_CONF)


def test_a_merge_runs_without_whole_stage_codegen_until_a_small_batch_ran_it_again(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, tuple[str | None, ...]]] = []
    run = Executor.sql

    def recording(self: Executor, text: str, *, what: str, **kwargs: Any) -> Any:
        seen.append((what, tuple(self.session.conf.get(key, None) for key in SETTINGS)))
        return run(self, text, what=what, **kwargs)

    monkeypatch.setattr(Executor, "sql", recording)
    columns = [column("id", "LONG", pk=True), column("note", "STRING")]
    ok(dest.create("codegen_settings", columns))
    for rows in ([["1", "a"], ["2", "b"]], [["1", "c"], ["3", "d"]], [["2", "e"], ["4", "f"]]):
        batch = dest.write_file(["id", "note"], rows)
        ok(dest.write("codegen_settings", columns, replace=[batch]))
    history = history_columns(column("v", "STRING"))
    ok(dest.create("hist_codegen_settings", history))
    for day in ("01", "02"):
        start = f"2024-01-{day}T00:00:00Z"
        rows = [["1", day, start, TMAX, "true", "2024-01-03T00:00:00Z"]]
        batch = dest.write_file([c.name for c in history], rows)
        ok(write_history(dest, "hist_codegen_settings", history, replace=[batch]))

    def ran(prefix: str) -> list[tuple[str | None, ...]]:
        return [settings for what, settings in seen if what.startswith(prefix)]

    # The same statement each time (two keys: the key-filter form): its first run without
    # generated code, then Spark's default (the setting unset).
    assert ran("merge batch") == [("false", None), (None, None), (None, None)], seen
    assert ran("merge history") == [("false", "none"), (None, "none")], seen
    # Every other statement ran on the session's own settings (neither is set there).
    others = [settings for what, settings in seen if not what.startswith("merge ")]
    assert others and all(settings == (None, None) for settings in others), seen
    assert lake.session.conf.get(WHOLE_STAGE_CODEGEN_CONF) == "true"  # Spark's default
