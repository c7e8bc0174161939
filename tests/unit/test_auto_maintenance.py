"""The automatic-maintenance scheduler: when a job is queued, one per table at a time."""

from __future__ import annotations

import dataclasses
import threading

from spark_destination.core.config import DestinationConfig, parse_config
from spark_destination.engine.auto_maintenance import (
    OFF,
    MaintenanceScheduler,
    enabled,
    folded_too_much,
)
from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.commits import DeleteFolding

TABLE = TableRef(catalog="lake", schema="s", name="t")
KEY = ("wh", "lake", "s", "t")


def _scheduler() -> tuple[MaintenanceScheduler, list[bool]]:
    runs: list[bool] = []
    return MaintenanceScheduler(lambda _config, _table, due: runs.append(due)), runs


def test_by_default_a_table_is_maintained_at_its_hundredth_commit() -> None:
    every = parse_config({}).maintenance_every_commits
    assert every == 100
    scheduler, runs = _scheduler()
    for _ in range(every - 1):
        scheduler.committed(parse_config({}), TABLE, KEY)
    scheduler.wait_idle()
    assert runs == []
    scheduler.committed(parse_config({}), TABLE, KEY)
    scheduler.wait_idle()
    assert runs == [True]


def test_off_turns_every_trigger_off() -> None:
    # Every maintenance key is a trigger: one that OFF does not name stays on.
    keys = {f.name for f in dataclasses.fields(DestinationConfig)}
    assert set(OFF) == {key for key in keys if key.startswith("maintenance_")}
    config = parse_config(OFF)
    assert not enabled(config)
    assert not folded_too_much(config, _folding(1_349_949, 101, 1_350_050, 2_850_110))
    scheduler, runs = _scheduler()
    for _ in range(2 * parse_config({}).maintenance_every_commits):
        scheduler.committed(config, TABLE, KEY)
    scheduler.wait_idle()
    assert runs == []


def test_every_n_commits() -> None:
    scheduler, runs = _scheduler()
    config = parse_config({"maintenance_every_commits": "3"})
    for _ in range(7):
        scheduler.committed(config, TABLE, KEY)
        scheduler.wait_idle()
    assert runs == [True, True]  # after commits 3 and 6


def test_the_delete_file_threshold_asks_the_job_to_check_after_every_commit() -> None:
    scheduler, runs = _scheduler()
    config = parse_config({"maintenance_delete_files": "5"})
    for _ in range(2):
        scheduler.committed(config, TABLE, KEY)
        scheduler.wait_idle()
    assert runs == [False, False]  # not due by count: the job checks the table's files


def test_one_job_per_table_is_queued_at_a_time() -> None:
    release = threading.Event()
    started: list[TableRef] = []

    def job(_config: DestinationConfig, table: TableRef, _due: bool) -> None:
        started.append(table)
        release.wait(10)

    scheduler = MaintenanceScheduler(job)
    config = parse_config({"maintenance_every_commits": "1"})
    for _ in range(5):
        scheduler.committed(config, TABLE, KEY)
    release.set()
    scheduler.wait_idle()
    assert started == [TABLE]


def test_a_failing_job_is_logged_and_the_next_one_still_runs() -> None:
    calls: list[int] = []

    def job(_config: DestinationConfig, _table: TableRef, _due: bool) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")

    scheduler = MaintenanceScheduler(job)
    config = parse_config({"maintenance_every_commits": "1"})
    scheduler.committed(config, TABLE, KEY)
    scheduler.wait_idle()
    scheduler.committed(config, TABLE, KEY)
    scheduler.wait_idle()
    assert len(calls) == 2


def _folding(rewritten: int, new: int, total_deletes: int, total_records: int) -> DeleteFolding:
    return DeleteFolding(
        rewritten=rewritten,
        added=rewritten + new,
        total_deletes=total_deletes,
        total_records=total_records,
    )


def test_a_small_write_that_rewrites_a_big_writes_deletes_calls_for_maintenance() -> None:
    config = parse_config({})
    # The out-of-process bench's first small sync after the 1M upsert and mixed batch.
    sync = _folding(1_349_949, 101, 1_350_050, 2_850_110)
    assert folded_too_much(config, sync)
    # The mixed batch itself: it rewrote the upsert's 500,000 beside 849,949 of its own.
    assert not folded_too_much(config, _folding(500_000, 849_949, 1_349_949, 2_850_000))
    # Under the threshold, or the feature off.
    assert not folded_too_much(config, _folding(99_999, 1, 99_999, 100_000))
    assert not folded_too_much(parse_config({"maintenance_rewritten_deletes": "0"}), sync)
    # Deletes under the share compaction removes: a run would leave them, and come again.
    assert not folded_too_much(config, _folding(1_349_949, 101, 1_350_050, 4_600_000))


def test_a_commit_that_folded_too_much_queues_maintenance_at_once() -> None:
    scheduler, runs = _scheduler()
    config = parse_config({"maintenance_every_commits": "0"})
    scheduler.committed(config, TABLE, KEY)
    scheduler.committed(config, TABLE, KEY, folded=True)
    scheduler.wait_idle()
    assert runs == [True]
