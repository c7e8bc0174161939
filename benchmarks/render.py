"""Benchmark: how long rendering takes, per statement, without Spark.

Prints figures; asserts nothing. For the bench's batch MERGE (``bench.COLUMNS``, key ``id``,
upserts, sentinels, every form: fold, unique keys, key filter) and for every golden case, the
median of N renders, as wall time and as this process's CPU time (prefer CPU time on a shared
machine), in two conditions:

- ``cold``: the parsed-skeleton cache emptied before each render (the first table of a shape);
- ``warm``: skeletons already parsed (every later table of that shape, the steady state).

Any other cache a version of the renderer keeps (the older whole-statement LRU cache) is
emptied before each render in both conditions, so the figures compare across versions.

Usage:
    .venv/bin/python benchmarks/render.py              # N = 21
    .venv/bin/python benchmarks/render.py --runs 51 --only merge
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench import COLUMNS, NULL, UNMOD  # noqa: E402
from spark_destination.dialects import render as render_module  # noqa: E402
from spark_destination.dialects.registry import DIALECTS  # noqa: E402
from spark_destination.planner.ir import MergeBatchOp, Op, TableRef  # noqa: E402


def _clear_statement_caches() -> None:
    cached = getattr(render_module, "_merge_statement", None)
    if cached is not None:
        cached.cache_clear()


def _clear_skeleton_cache() -> None:
    try:
        from spark_destination.dialects import edge
    except ImportError:  # a renderer without skeletons parses every statement anyway
        return
    edge._parsed.cache_clear()


def _median(work: Callable[[], object], runs: int, *, cold: bool) -> tuple[float, float]:
    """Median wall and CPU seconds of ``work`` (a warm-up run first)."""
    work()
    walls, cpus = [], []
    for _ in range(runs):
        _clear_statement_caches()
        if cold:
            _clear_skeleton_cache()
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _bench_merge() -> MergeBatchOp:
    return MergeBatchOp(
        table=TableRef(catalog="lake", schema="bench", name="upsert"),
        view="sd_batch",
        columns=COLUMNS,
        key=("id",),
        null_string=NULL,
        unmodified_string=UNMOD,
        has_upserts=True,
        filter_key=("id",),
    )


def _golden_cases() -> dict[str, Callable[[str], object]]:
    """Every golden case as a function of the dialect name (what its golden file renders)."""
    from spark_destination.dialects.render import render, render_plan
    from spark_destination.engine.preview import plan_for
    from spark_destination.engine.request_json import parse_request
    from spark_destination.planner.maintenance import plan_maintenance
    from tests.sql import (
        test_golden_alter_sql,
        test_golden_history_sql,
        test_golden_maintenance_sql,
        test_golden_migrate_sql,
        test_golden_sql,
    )

    ops: dict[str, Op] = {
        **test_golden_sql.CASES,
        **test_golden_alter_sql.CASES,
        **test_golden_history_sql.CASES,
    }
    cases: dict[str, Callable[[str], object]] = {
        name: (lambda dialect, op=op: render(op, DIALECTS[dialect])) for name, op in ops.items()
    }
    for name, request in test_golden_migrate_sql.CASES.items():
        parsed = parse_request(request)

        def migrate(dialect: str, parsed: object = parsed) -> object:
            chosen = DIALECTS[dialect]
            return render_plan(plan_for(parsed, chosen), chosen)  # type: ignore[arg-type]

        cases[name] = migrate
    maintenance = test_golden_maintenance_sql

    def maintain(dialect: str) -> object:
        chosen = DIALECTS[dialect]
        table = getattr(maintenance, "TABLES", {}).get(dialect, maintenance.ODD_TABLE)
        try:
            plan = plan_maintenance(
                table, maintenance.POLICY, now=maintenance.NOW, target=chosen, key=("id",)
            )
        except TypeError:  # a planner from before maintenance asked the target
            plan = plan_maintenance(table, maintenance.POLICY, now=maintenance.NOW)
        return render_plan(plan, chosen)

    cases["maintain"] = maintain
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="renders per figure (median)")
    parser.add_argument("--only", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"median of {args.runs}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'case':<58} {'dialect':<17} {'cold wall':>10} {'cold cpu':>9} {'warm wall':>10} "
          f"{'warm cpu':>9}")  # fmt: skip
    merge = _bench_merge()
    rows: list[tuple[str, str, Callable[[], object]]] = []
    if not args.only or args.only in "bench merge_batch":
        for dialect in DIALECTS:
            chosen = DIALECTS[dialect]
            rows.append(
                (
                    f"bench merge_batch, {len(COLUMNS)} columns, all forms",
                    dialect,
                    lambda chosen=chosen: render_module.render(merge, chosen),
                )
            )
    for name, case in _golden_cases().items():
        if args.only and args.only not in name:
            continue
        for dialect in DIALECTS:
            rows.append((name, dialect, lambda case=case, dialect=dialect: case(dialect)))
    for name, dialect, work in rows:
        try:
            cold = _median(work, args.runs, cold=True)
            warm = _median(work, args.runs, cold=False)
        except Exception as exc:  # noqa: BLE001 - a case a dialect refuses is reported, not fatal
            print(f"{name:<58} {dialect:<17} refused: {type(exc).__name__}")
            continue
        print(
            f"{name:<58} {dialect:<17} {cold[0] * 1e3:>8.2f}ms {cold[1] * 1e3:>7.2f}ms "
            f"{warm[0] * 1e3:>8.2f}ms {warm[1] * 1e3:>7.2f}ms"
        )


if __name__ == "__main__":
    main()
