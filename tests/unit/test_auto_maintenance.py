"""The automatic-maintenance scheduler: when a job is queued, one per table at a time."""

from __future__ import annotations

import threading

from spark_destination.core.config import DestinationConfig, parse_config
from spark_destination.engine.auto_maintenance import MaintenanceScheduler
from spark_destination.planner.ir import TableRef

TABLE = TableRef(catalog="lake", schema="s", name="t")
KEY = ("wh", "lake", "s", "t")


def _scheduler() -> tuple[MaintenanceScheduler, list[bool]]:
    runs: list[bool] = []
    return MaintenanceScheduler(lambda _config, _table, due: runs.append(due)), runs


def test_off_by_default() -> None:
    scheduler, runs = _scheduler()
    for _ in range(10):
        scheduler.committed(parse_config({}), TABLE, KEY)
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
