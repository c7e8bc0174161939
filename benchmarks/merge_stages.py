"""Where a warm history MERGE's time goes, Spark stage by Spark stage (prints figures).

One process: a local Spark with the connector's settings loads an N-version history table
through the connector (``out_of_process.Workload``'s load), stages the N-version history batch
(an earliest-start file and an update file, half of the cells unmodified) and caches it, then
runs the history MERGE the runtime picks for it (the FILLED_VERSIONS form) ``--warm`` times
uncounted and once more, each from the loaded snapshot. For that last run it prints each Spark
stage of the statement from Spark's status store: when it started and ended (seconds after the
statement started), its tasks, its executors' run time (CPU and waits, summed over tasks), the
bytes it read (table files and cached batch) and wrote or read through the shuffle, what it
spilled to disk; then the statement's wall time and its tasks' run time ÷ (wall × cores), how
busy the cores were. Stages Spark skipped (a shuffle another stage already wrote) are counted,
not shown.

Both ways the statement runs: ``--codegen connector`` (default) as the runtime runs a big
batch of a statement that has not switched to generated code (whole-stage code generation off,
``statement_runs.COLD_MERGE_SETTINGS``), ``--codegen on`` as the floor in
``bench.py`` and ``out_of_process.py`` runs it, and the runtime once the statement switched.
Both with Iceberg's write distribution ``none``, as the runtime sets it for a history MERGE.

Usage: .venv/bin/python -u benchmarks/merge_stages.py [--rows 1000000] [--warm 3]
       [--codegen connector|on]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench  # benchmarks/bench.py, beside this script
import out_of_process

from spark_destination.core.requests import WriteHistoryBatchRequest
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.ir import MergeHistoryOp, StageBatchOp
from spark_destination.runtime.batch.staging import Stager
from spark_destination.runtime.execute.executor import (
    DISTRIBUTION_MODE_CONF,
    Executor,
)
from spark_destination.runtime.execute.statement_runs import COLD_MERGE_SETTINGS

MIB = 2**20


@dataclass(frozen=True)
class Stage:
    """One Spark stage of the statement, times in seconds after it started."""

    stage_id: int
    start: float
    end: float
    tasks: int
    run_s: float
    input_mib: float
    shuffle_read_mib: float
    shuffle_write_mib: float
    spilled_mib: float


def stage_list(session: Any) -> list[Any]:
    """Every stage Spark's status store holds (py4j: its Scala defaults spelled out)."""
    context = session.sparkContext
    jvm = context._jvm
    stages = (
        context._jsc.sc()
        .statusStore()
        .stageList(
            None, False, False, context._gateway.new_array(jvm.double, 0), jvm.java.util.ArrayList()
        )
    )
    return [stages.apply(i) for i in range(stages.size())]


def stages_of(work: Callable[[], object], session: Any) -> tuple[float, list[Stage], int]:
    """Run ``work``; its wall time, the stages it ran and how many it skipped."""
    before = {s.stageId() for s in stage_list(session)}
    started = time.time()
    work()
    wall = time.time() - started
    ran, skipped = [], 0
    for s in stage_list(session):
        if s.stageId() in before:
            continue
        submitted, completed = s.submissionTime(), s.completionTime()
        if not (submitted.isDefined() and completed.isDefined()):
            skipped += 1
            continue
        ran.append(
            Stage(
                stage_id=s.stageId(),
                start=submitted.get().getTime() / 1000 - started,
                end=completed.get().getTime() / 1000 - started,
                tasks=s.numTasks(),
                run_s=s.executorRunTime() / 1000,
                input_mib=s.inputBytes() / MIB,
                shuffle_read_mib=s.shuffleReadBytes() / MIB,
                shuffle_write_mib=s.shuffleWriteBytes() / MIB,
                spilled_mib=s.diskBytesSpilled() / MIB,
            )
        )
    return wall, sorted(ran, key=lambda s: (s.start, s.stage_id)), skipped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--warm", type=int, default=3, help="uncounted runs before the one shown")
    parser.add_argument("--codegen", choices=("connector", "on"), default="connector")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="merge-stages-") as tmp:
        measure(Path(tmp), args.rows, args.warm, args.codegen)


def measure(folder: Path, rows: int, warm: int, codegen: str) -> None:
    """Load, stage, run ``warm`` times uncounted, then once more stage by stage (the top)."""
    work = out_of_process.Workload(folder, rows)
    b = bench.Bench(folder)
    b.files = work.files
    requests = dict(work.requests("stages"))
    for name in ("history create", "history load"):
        b.csv.apply({}, requests[name])
    history = requests["history batch"]
    assert isinstance(history, WriteHistoryBatchRequest)
    loaded = b.snapshot(history.table)
    plan = plan_write_history_batch(
        history, history.table, catalog=b.config.catalog, target=SPARK_ICEBERG
    )
    stage = next(op for op in plan.ops if isinstance(op, StageBatchOp))
    merge = next(op for op in plan.ops if isinstance(op, MergeHistoryOp))
    (statement,) = render(merge, SPARK_ICEBERG)
    sql = statement.form(Form.FILLED_VERSIONS)
    assert sql is not None
    session = b.csv.sessions.for_request(b.config)
    settings = {DISTRIBUTION_MODE_CONF: "none"}
    if codegen == "connector":
        settings.update(COLD_MERGE_SETTINGS)
    for key, value in settings.items():
        session.conf.set(key, value)
    stager = Stager(session)
    executor = Executor(session)

    def run() -> None:
        executor.sql(sql, what="history MERGE")

    try:
        stager.stage(stage, keys=b.files.keys, params=bench.PARAMS)
        session.table(stage.view).cache().count()
        for k in range(warm):
            started = time.perf_counter()
            run()
            print(f"uncounted run {k + 1}: {time.perf_counter() - started:.2f} s", flush=True)
            b.rollback(history.table, loaded, session)
        wall, stages, skipped = stages_of(run, session)
    finally:  # the decrypted batch leaves the scratch space now, not at the JVM's exit
        session.catalog.clearCache()
        stager.cleanup()
    cores = os.cpu_count() or 1
    print(f"\nhistory MERGE, {rows} versions, codegen {codegen}: {wall:.2f} s")
    print("  start    end  stage tasks  task time (s)  input  shuffle read  write  spilled (MiB)")
    for s in stages:
        print(
            f"  {s.start:5.2f}  {s.end:5.2f}  {s.stage_id:5d} {s.tasks:5d}  {s.run_s:13.2f}"
            f"  {s.input_mib:5.1f}  {s.shuffle_read_mib:12.1f}  {s.shuffle_write_mib:5.1f}"
            f"  {s.spilled_mib:7.1f}"
        )
    busy = sum(s.run_s for s in stages)
    print(
        f"  {len(stages)} stages ran, {skipped} skipped; tasks' run time {busy:.1f} s = "
        f"{busy / (wall * cores):.0%} of {cores} cores × {wall:.2f} s"
    )


if __name__ == "__main__":
    main()
