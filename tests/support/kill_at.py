"""``python -m tests.support.kill_at CLI-ARGS…``: the destination's CLI in a process that
SIGKILLs itself (its process group: the JVM too) when a request reaches the step boundary named
by ``SD_TEST_KILL_AT`` (``faults.Boundary.name``, e.g. ``before 1:ClearPendingOp``, or a named
point such as ``faults.FLUSH_RECORDED``).

``SD_TEST_KILL_JVM_AT`` instead SIGKILLs only the JVM there, and waits until it is gone: the
request's next statement finds it dead, and the server lives on.

``SD_TEST_KILL_IN_MERGE=1`` SIGKILLs the process group inside a batch MERGE instead, while
its Spark tasks run: no step boundary falls inside a statement, so a watcher thread polls
Spark's status tracker for the MERGE's jobs (tagged with a job group of their own) and kills
as soon as one of their stages has a task running. The commit comes only after the last task,
so the kill lands before it. Just before the kill it writes ``<SD_TEST_ARMED>.fired``, naming
the job and stage it saw, so the test knows where the kill landed.

With ``SD_TEST_ARMED`` (a file name) each fires only once that file exists, and removes it:
the test creates it when the request to hit is next, so requests before it (and the retry
after it) get through.

For crash tests that must stop at an exact point, such as between a flush's MERGE commit and
its clean-up, which no timing from outside can hit reliably. Tests only: nothing in the
package kills itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from spark_destination.cli.main import main
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.executor import Executor

KILL_AT = "SD_TEST_KILL_AT"
KILL_JVM_AT = "SD_TEST_KILL_JVM_AT"
KILL_IN_MERGE = "SD_TEST_KILL_IN_MERGE"
ARMED = "SD_TEST_ARMED"
# The job group the armed MERGE's Spark jobs run in (a local property of the request thread).
MERGE_JOB_GROUP = "sd-test-kill-in-merge"
# Where the watcher notes the job and stage it saw running, just before it kills.
FIRED_SUFFIX = ".fired"


def _disarm() -> bool:
    """Whether the armed file existed (it is removed: fire once); True when none is set."""
    armed = os.environ.get(ARMED)
    if not armed:
        return True
    try:
        Path(armed).unlink()
    except FileNotFoundError:
        return False  # not armed (yet, or any more)
    return True


def _reached(name: str) -> None:
    kill_all, kill_jvm = os.environ.get(KILL_AT), os.environ.get(KILL_JVM_AT)
    if name not in (kill_all, kill_jvm) or not _disarm():
        return
    if name == kill_all:
        os.killpg(os.getpgid(0), signal.SIGKILL)
    for jvm in _java_children():
        os.kill(jvm, signal.SIGKILL)
        # SIGKILL is delivered asynchronously: wait for the process to be dead (a zombie until
        # py4j's Popen reaps it), so the next statement cannot still reach it.
        while _alive(jvm):
            time.sleep(0.01)


def _java_children() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if parent == os.getpid() and name == "java":
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _running_task(tracker: Any) -> str | None:
    """A job of ``MERGE_JOB_GROUP`` with a stage whose tasks are running, or None."""
    for job_id in tracker.getJobIdsForGroup(MERGE_JOB_GROUP):
        job = tracker.getJobInfo(job_id)
        if job is None or job.status != "RUNNING":
            continue
        for stage_id in job.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None and stage.numActiveTasks > 0:
                return (
                    f"job {job_id}, stage {stage_id} ({stage.name}): {stage.numActiveTasks} running"
                )
    return None


def _kill_while_running(tracker: Any, done: threading.Event) -> None:
    while not done.is_set():
        seen = _running_task(tracker)
        if seen is not None:
            Path(os.environ[ARMED] + FIRED_SUFFIX).write_text(seen + "\n")
            os.killpg(os.getpgid(0), signal.SIGKILL)
        time.sleep(0.005)


def _merge_batch_then_kill(merge_batch: Any) -> Any:
    """``Executor._merge_batch``, which, when armed, runs under a watcher that kills the
    process while the MERGE's tasks run."""

    def run(executor: Executor, *args: Any, **kwargs: Any) -> Any:
        if not _disarm():
            return merge_batch(executor, *args, **kwargs)
        context = executor.session.sparkContext
        context.setJobGroup(MERGE_JOB_GROUP, "the MERGE a crash test kills")
        done = threading.Event()
        watcher = threading.Thread(
            target=_kill_while_running, args=(context.statusTracker(), done), daemon=True
        )
        watcher.start()
        try:
            return merge_batch(executor, *args, **kwargs)
        finally:  # only reached when the kill never came: the test then fails
            done.set()
            watcher.join()
            context.setLocalProperty("spark.jobGroup.id", None)

    return run


def _boundary(point: faults.Boundary) -> None:
    _reached(point.name)


def _point(name: str, _table: str) -> None:
    _reached(name)


if __name__ == "__main__":
    if os.environ.get(KILL_IN_MERGE) == "1":
        Executor._merge_batch = _merge_batch_then_kill(Executor._merge_batch)
    with faults.installed(_boundary), faults.at_points(_point):
        raise SystemExit(main(sys.argv[1:]))
