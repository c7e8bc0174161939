"""The big writes through a fresh ``serve`` process and in this process, same files.

An independent harness measured the connector slower out of process than ``bench.py`` does in
process, and a history batch 3.2x the upsert where ``bench.py`` says 1.6-2.7x. This script runs
one sequence of requests, the harness's, both ways on the same machine, one after the other:

* a fresh ``spark-destination serve`` (its own JVM; ``--prewarm`` or not), driven over gRPC
  as Fivetran drives it, no request repeated and no rollback: each write meets the table the
  previous ones left, as in a sync;
* the same requests through an ``Engine`` in this process (what ``bench.py`` measures, but
  without its uncounted first run and its rollbacks).

Sequence, N rows each: on a warm-up table the load, the upsert and the mixed batch (uncounted
unless ``--no-warm-up``), then on fresh tables: the N-row load, the N-row upsert (half the keys
new), the mixed batch (60 % replace, 25 % update with unmodified columns, 15 % delete); a
history table's N-version load and an N-version WriteHistoryBatch (an earliest-start file for
every key and one new version per key whose non-key cells are each unmodified with probability
0.5, as the harness wrote them); through ``serve``, the same two history requests again on a
second history table of the same columns (its MERGE's code is then compiled: the first
history batch of a fresh JVM pays the JIT, docs/benchmarks.md), then on a third of two fewer
columns (what of that compiled code serves a table of other columns). Per request: seconds seen by
the client, the server's peak RSS and, from the server's log, the staging and MERGE steps'
own seconds. Then the bare engine's floor for the upsert, the mixed batch and the history
batch: the same statement from the batch staged and cached, in this process's warm Spark, on
the server's tables rolled back to the state its request met (median of ``--floor-runs``
after one uncounted run). The floor's JVM is fresh and runs the history MERGE last, so its
uncounted first run is the bare engine's cold history MERGE, printed beside the server's first
history batch (both pay the JIT for that shape); then the history MERGE once more with Spark's
own merging of shuffle partitions (down to the local cores), which the connector replaces.
Prints figures; asserts nothing.

One run's ratios move with the floor, which moves 7-11 % between runs of the same statement on
this machine (docs/benchmarks.md): ``--repeat N`` runs the whole sequence N times, each in a
fresh process of this script (a fresh server and a fresh floor JVM), and prints each of the
target figures per run with their median and range beside the target.

Usage:
    .venv/bin/python benchmarks/out_of_process.py --rows 1000000 [--prewarm] [--format-version 3]
        [--layout plain] [--skip-in-process] [--floor-runs 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import bench  # benchmarks/bench.py, beside this script

from spark_destination.core.model import Table
from spark_destination.core.requests import (
    BatchFiles,
    CreateTableRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.engine.warm_up import WARM
from spark_destination.local_services.server_process import start_server
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.write import plan_write_batch
from spark_destination.replay.client import connect
from spark_destination.runtime.spark.session import (
    COALESCE_MIN_PARTITIONS_CONF,
    DRIVER_JAVA_OPTIONS,
)

# A step's line, with what of it the JVM spent compiling and collecting (runtime.execute.jvm_time).
STEP = re.compile(
    r"^(merge .*|stage view .*?): ([0-9.]+) s(?: \(JVM compiling ([0-9.]+) s, GC ([0-9.]+) s\))?$"
)
# Staging's own split of its step (runtime.batch.staging).
SPLIT = re.compile(
    r"^staged (\d+) row\(s\): decoded in ([0-9.]+) s, handed to Spark .* in ([0-9.]+) s$"
)
SMALL_SYNCS = 20
# The floor of the history batch with Spark's own merging of shuffle partitions.
SPARK_COALESCING = "history batch, Spark's default coalescing"
# A history table of other columns than bench.HISTORY (two fewer: a DOUBLE and a STRING).
OTHER_HISTORY = tuple(c for c in bench.HISTORY if c.name not in ("score", "note"))
# HotSpot's default, after the session's KEEP_HEAP_OPTION (an operator's option comes last).
BARE_HEAP_OPTION = "-XX:MaxHeapFreeRatio=70"
# The target figures, in the order ``--repeat`` prints them, with their targets ("" for none).
TARGETS = {
    "upsert ÷ floor": "≤ 1.3",
    "mixed ÷ floor": "≤ 1.3",
    "first history batch ÷ warm floor": "≤ 1.15",
    "first history batch ÷ the floor's cold run": "",
    "second history table ÷ floor": "≤ 1.15",
    "first history batch ÷ upsert": "≤ 2.0",
    "second history table ÷ upsert": "≤ 2.0",
    "peak RSS ÷ floor's: upsert": "≤ 1.15",
    "peak RSS ÷ floor's: mixed": "≤ 1.15",
    "peak RSS ÷ floor's: first history batch": "≤ 1.3",
    "peak RSS ÷ floor's: second history table": "≤ 1.3",
    "small syncs p50, client (s)": "",
    "upsert floor (s)": "",
    "history floor (s)": "",
}


def history_update_row(i: int, rng: random.Random, start: str) -> list[str]:
    """A new version of key ``i``: each non-key cell unmodified with probability 0.5."""
    full = bench.row(i, rng, bench.SYNCED2)[:-1]
    cells = [v if n == 0 or rng.random() < 0.5 else bench.UNMOD for n, v in enumerate(full)]
    return [*cells, start, bench.TMAX, "true"]


class Workload:
    """The requests of one sequence, written once and sent both ways."""

    def __init__(self, folder: Path, n: int) -> None:
        self.files = bench.Files(folder)
        rng = random.Random(11)
        write = self.files.write
        self.load = write([bench.row(i, rng) for i in range(n)])
        self.upsert = write([bench.row(i, rng) for i in range(n // 2, n + n // 2)])
        ids = list(range(n))
        rng.shuffle(ids)
        replace = [i if k % 2 else n + i for k, i in enumerate(ids[: n * 6 // 10])]
        self.mixed = {
            "replace": write([bench.row(i, rng) for i in replace]),
            "update": write([bench.update_row(i, rng) for i in ids[n * 6 // 10 : n * 85 // 100]]),
            "delete": write([bench.row(i, rng) for i in ids[n * 85 // 100 :]]),
        }
        header = [c.name for c in bench.HISTORY]
        start1, start2 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
        loads = [[*bench.row(i, rng)[:-1], start1, bench.TMAX, "true"] for i in range(n)]
        self.history_load = write(loads, header)
        # Small syncs on the aged table (the harness's 20): 100 upserts anywhere in twice the key
        # range, 10 updates (half the columns unmodified) and 10 deletes of keys the upsert
        # added and nothing later deleted.
        self.small = []
        for _ in range(SMALL_SYNCS):
            upserts = rng.sample(range(2 * n), 100)
            changed = rng.sample(range(n, n + n // 2), 20)
            self.small.append(
                {
                    "replace": write([bench.row(i, rng) for i in upserts]),
                    "update": write([bench.update_row(i, rng) for i in changed[:10]]),
                    "delete": write([bench.row(i, rng) for i in changed[10:]]),
                }
            )
        self.earliest = write([[str(i), start2] for i in range(n)], ["id", "_fivetran_start"])
        versions = [history_update_row(i, rng, start2) for i in range(n)]
        self.history_batch = write(versions, header)
        # The same rows for a history table of other columns (OTHER_HISTORY): its plans' code,
        # generated for its columns, is new to the server.
        other = [header.index(c.name) for c in OTHER_HISTORY]
        other_header = [header[k] for k in other]
        self.other_load = write([[r[k] for k in other] for r in loads], other_header)
        self.other_batch = write([[r[k] for k in other] for r in versions], other_header)

    def requests(
        self, suffix: str, *, history: bool = True, again: bool = False, small: bool = False
    ) -> list[tuple[str, object]]:
        """The sequence; with ``small``, the small syncs after the mixed batch; with ``again``,
        the history table's requests once more on a second history table (same columns: the
        server has compiled its MERGE's code once), then on a third of other columns."""
        table = Table(name=f"t_{suffix}", columns=bench.COLUMNS)
        keys, params = self.files.keys, bench.PARAMS

        def batch(**files: str) -> BatchFiles:
            named = {k: (v,) for k, v in files.items()}
            return BatchFiles(params=params, keys=keys, **named)  # type: ignore[arg-type]

        def write(**files: str) -> WriteBatchRequest:
            return WriteBatchRequest(schema=bench.SCHEMA, table=table, files=batch(**files))

        def history_requests(
            hist: Table, label: str, load: str, update: str
        ) -> list[tuple[str, object]]:
            return [
                (f"{label} create", CreateTableRequest(schema=bench.SCHEMA, table=hist)),
                (
                    f"{label} load",
                    WriteHistoryBatchRequest(
                        schema=bench.SCHEMA, table=hist, files=batch(replace=load)
                    ),
                ),
                (
                    f"{label} batch",
                    WriteHistoryBatchRequest(
                        schema=bench.SCHEMA,
                        table=hist,
                        earliest_start_files=(self.earliest,),
                        files=batch(update=update),
                    ),
                ),
            ]

        sequence: list[tuple[str, object]] = [
            ("create", CreateTableRequest(schema=bench.SCHEMA, table=table)),
            ("load", write(replace=self.load)),
            ("upsert", write(replace=self.upsert)),
            ("mixed", write(**self.mixed)),
        ]
        if small:
            sequence += [(f"small {k}", write(**f)) for k, f in enumerate(self.small, 1)]
        loads, updates = self.history_load, self.history_batch
        if history:
            first = Table(name=f"h_{suffix}", columns=bench.HISTORY)
            sequence += history_requests(first, "history", loads, updates)
        if history and again:
            second = Table(name=f"h2_{suffix}", columns=bench.HISTORY)
            sequence += history_requests(second, "history again", loads, updates)
            third = Table(name=f"h3_{suffix}", columns=OTHER_HISTORY)
            sequence += history_requests(
                third, "history other columns", self.other_load, self.other_batch
            )
        return sequence


def over_grpc(address: str, configuration: dict[str, str]) -> Callable[[object], None]:
    client = connect(address, timeout=3600)

    def send(request: object) -> None:
        match request:
            case CreateTableRequest():
                response: object = client.create_table(
                    request.table, configuration=configuration, schema=request.schema
                )
            case WriteHistoryBatchRequest():
                files = request.files
                response = client.write_history_batch(
                    request.table,
                    configuration=configuration,
                    schema=request.schema,
                    earliest_start_files=request.earliest_start_files,
                    replace_files=files.replace,
                    update_files=files.update,
                    delete_files=files.delete,
                    keys=files.keys,
                    file_params=files.params,
                )
            case WriteBatchRequest():
                files = request.files
                response = client.write_batch(
                    request.table,
                    configuration=configuration,
                    schema=request.schema,
                    replace_files=files.replace,
                    update_files=files.update,
                    delete_files=files.delete,
                    keys=files.keys,
                    file_params=files.params,
                )
            case _:
                raise TypeError(type(request).__name__)
        kind = response.WhichOneof("response")  # type: ignore[attr-defined]
        if kind != "success":
            raise RuntimeError(f"{type(request).__name__}: {kind}: {response}")

    return send


def in_process(engine: Engine, configuration: dict[str, str]) -> Callable[[object], None]:
    def send(request: object) -> None:
        engine.apply(configuration, request)  # type: ignore[arg-type]

    return send


def run(
    send: Callable[[object], None],
    sequence: list[tuple[str, object]],
    peaks: dict[str, float] | None = None,
    pid: int | None = None,
) -> dict[str, float]:
    """Each request's seconds; with ``peaks``, also the peak RSS (GiB) of the process tree
    under ``pid`` (the server's) during each request."""
    seconds = {}
    for name, request in sequence:
        if peaks is not None:
            bench.reset_peak(pid)
        started = time.perf_counter()
        send(request)
        seconds[name] = time.perf_counter() - started
        peak = ""
        if peaks is not None:
            peaks[name] = bench.peak_gib(pid)
            peak = f", peak RSS {peaks[name]:.2f} GiB"
        print(f"  {name}: {seconds[name]:.2f} s{peak}", flush=True)
    return seconds


def small_syncs(seconds: dict[str, float], steps: list[tuple[str, float]]) -> float | None:
    """The small syncs' p50 as the client saw them (returned), and their staging and MERGE
    steps' p50 from the server's log (the measured table's 4th to 23rd batch: load, upsert,
    mixed first)."""
    client = [v for k, v in seconds.items() if k.startswith("small ")]
    mine = [(n, s) for n, s in steps if "'t_measured'" in n or n.startswith("stage view")]
    merges = [i for i, (n, _) in enumerate(mine) if "'t_measured'" in n][3 : 3 + SMALL_SYNCS]
    staged = [mine[i - 1][1] for i in merges if i > 0 and mine[i - 1][0].startswith("stage")]
    merged = [mine[i][1] for i in merges]
    if client and merged:
        print(
            f"  {len(client)} small syncs: p50 {median(client):.2f} s as the client saw them; "
            f"server's staging p50 {median(staged):.3f} s, MERGE p50 {median(merged):.2f} s"
        )
    return median(client) if client else None


def floors(folder: Path, work: Workload, runs: int) -> dict[str, tuple[bench.Comparison, float]]:
    """The bare engine on the server's tables, after the server has stopped: per big write,
    the same MERGE statement the server ran, from its batch staged and cached in a warm Spark
    in this process, on the table state the server's request met (rolled back to it before
    every run); one uncounted run, then ``runs``. Also each floor run's peak RSS."""
    # Its warehouse, folder / "warehouse", is the server's. The JVM's own heap policy, as a
    # bare Spark has it: the session's KEEP_HEAP_OPTION is the connector's, not the engine's.
    b = bench.Bench(folder, layout={"spark_conf": f"{DRIVER_JAVA_OPTIONS}={BARE_HEAP_OPTION}"})
    b.files = work.files
    result = {}
    try:
        measured = dict(work.requests("measured"))
        upsert, mixed = measured["upsert"], measured["mixed"]
        history = measured["history batch"]
        assert isinstance(upsert, WriteBatchRequest) and isinstance(mixed, WriteBatchRequest)
        assert isinstance(history, WriteHistoryBatchRequest)
        # The load's, the upsert's, the mixed batch's (then the small syncs').
        writes = b.snapshots(upsert.table)
        versions = b.snapshots(history.table)  # the history load's, the history batch's
        if len(writes) < 3 or len(versions) != 2:
            raise RuntimeError(f"unexpected commits: {len(writes)} and {len(versions)}")
        catalog = b.config.catalog
        # Newest state of a table first: a rollback goes to an ancestor of the current
        # snapshot. The history MERGE last, as in the server: its uncounted first run is then
        # this JVM's first statement of that shape after batch MERGEs, the server's cold case.
        # Last, the history MERGE once more with adaptive execution merging shuffle
        # partitions as Spark does by default, down to the local cores (the connector keeps
        # a big batch's partitions: COALESCE_MIN_PARTITIONS_CONF).
        for name, request, snapshot, form, spark_defaults in (
            ("mixed", mixed, writes[1], Form.UNIQUE_KEYS, ()),
            ("upsert", upsert, writes[0], Form.UNIQUE_KEYS, ()),
            ("history batch", history, versions[0], Form.FILLED_VERSIONS, ()),
            (
                SPARK_COALESCING,
                history,
                versions[0],
                Form.FILLED_VERSIONS,
                (COALESCE_MIN_PARTITIONS_CONF,),
            ),
        ):
            b.rollback(request.table, snapshot)
            if isinstance(request, WriteHistoryBatchRequest):
                plan = plan_write_history_batch(
                    request, request.table, catalog=catalog, target=SPARK_ICEBERG
                )
            else:
                plan = plan_write_batch(
                    request, request.table, catalog=catalog, target=SPARK_ICEBERG
                )
            both = b.compare(
                None, plan, runs, request.table, snapshot, form=form, spark_defaults=spark_defaults
            )
            result[name] = (both, median(both.floor))
            runs_shown = zip(both.floor, both.floor_compiling, strict=True)
            shown = ", ".join(f"{s:.2f} (compiling {c:.2f})" for s, c in runs_shown)
            print(
                f"  floor {name}: {shown} s (median {result[name][1]:.2f}; uncounted first run "
                f"{both.first:.2f}, compiling {both.first_compiling:.2f})",
                flush=True,
            )
    finally:
        b.csv.sessions.stop()
    return result


def target_figures(
    served: dict[str, float],
    peaks: dict[str, float],
    floor: dict[str, tuple[bench.Comparison, float]],
    small_p50: float | None,
) -> dict[str, float]:
    """One run's value of each of ``TARGETS``'s figures (those the run measured)."""
    upsert, upsert_floor = floor["upsert"]
    mixed, mixed_floor = floor["mixed"]
    history, history_floor = floor["history batch"]
    first, second = served["history batch"], served["history again batch"]
    values = {
        "upsert ÷ floor": served["upsert"] / upsert_floor,
        "mixed ÷ floor": served["mixed"] / mixed_floor,
        "first history batch ÷ warm floor": first / history_floor,
        "second history table ÷ floor": second / history_floor,
        "first history batch ÷ upsert": first / served["upsert"],
        "second history table ÷ upsert": second / served["upsert"],
        "peak RSS ÷ floor's: upsert": peaks["upsert"] / max(upsert.floor_memory),
        "peak RSS ÷ floor's: mixed": peaks["mixed"] / max(mixed.floor_memory),
        "peak RSS ÷ floor's: first history batch": (
            peaks["history batch"] / max(history.floor_memory)
        ),
        "peak RSS ÷ floor's: second history table": (
            peaks["history again batch"] / max(history.floor_memory)
        ),
        "upsert floor (s)": upsert_floor,
        "history floor (s)": history_floor,
    }
    if history.first is not None:
        values["first history batch ÷ the floor's cold run"] = first / history.first
    if small_p50 is not None:
        values["small syncs p50, client (s)"] = small_p50
    return values


def repeat(times: int, argv: list[str]) -> None:
    """Run this script ``times`` times, each in a fresh process with ``argv`` (which must not
    hold ``--repeat``), then print each figure per run, its median and range, and its target."""
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="sd-oop-runs-") as tmp:
        for n in range(1, times + 1):
            out = Path(tmp) / f"run{n}.json"
            started = time.strftime("%H:%M:%S", time.gmtime())
            print(f"=== run {n} of {times} (started {started} UTC)", flush=True)
            subprocess.run([sys.executable, __file__, *argv, "--json", str(out)], check=True)
            runs.append(json.loads(out.read_text()))
    columns = " | ".join(f"run {n}" for n in range(1, times + 1))
    print()
    print(f"=== the target figures over {times} runs")
    print(f"figure | {columns} | median | range | target")
    print("---|" + "---|" * times + "---|---|---")
    for name, target in TARGETS.items():
        values = [run[name] for run in runs if name in run]
        if not values:
            continue
        cells = " | ".join(f"{run[name]:.2f}" if name in run else "–" for run in runs)
        spread = f"{min(values):.2f}–{max(values):.2f}"
        print(f"{name} | {cells} | {median(values):.2f} | {spread} | {target}")


def wait_for(log: Path, text: str, *, timeout: float) -> None:
    """Until the server's log holds ``text`` (the warm-up's end), so it is not measured."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {text!r} in the server's log")
        time.sleep(1)
    print(f"  ({text})")


def log_messages(log: Path) -> list[str]:
    """The messages of the server's JSON log lines, in order."""
    messages = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            messages.append(str(json.loads(line).get("message", "")))
        except ValueError:
            continue
    return messages


def merge_steps(log: Path) -> list[tuple[str, float]]:
    """The server's MERGE and staging step timings, in order."""
    matches = (STEP.match(message) for message in log_messages(log))
    return [(m.group(1)[:40], float(m.group(2))) for m in matches if m]


def jvm_time_of_big_steps(log: Path) -> list[str]:
    """Each step of a second or more: its seconds, and the JVM's compiling and GC seconds."""
    matches = (STEP.match(message) for message in log_messages(log))
    return [
        f"{m.group(1)[:30]}: {m.group(2)} s (compiling {m.group(3)}, GC {m.group(4)})"
        for m in matches
        if m and m.group(3) is not None and float(m.group(2)) >= 1.0
    ]


def staging_splits(log: Path) -> list[str]:
    """Each big staging step's split (rows: decode s + hand-off s), in order."""
    matches = (SPLIT.match(message) for message in log_messages(log))
    return [
        f"{int(m.group(1)):,} rows: {m.group(2)} + {m.group(3)} s"
        for m in matches
        if m and int(m.group(1)) >= 100_000
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--prewarm", action="store_true")
    parser.add_argument("--no-warm-up", action="store_true", help="no uncounted warm-up writes")
    parser.add_argument("--format-version", default="2")
    parser.add_argument("--layout", default="sorted", help="table_layout: sorted, plain, bucketed")
    parser.add_argument("--skip-in-process", action="store_true")
    parser.add_argument("--no-warm-writes", action="store_true", help="serve --no-warm-writes")
    parser.add_argument("--spark-conf", default="", help="serve --spark-conf, e.g. JVM options")
    parser.add_argument(
        "--floor-runs",
        type=int,
        default=3,
        help="with --skip-in-process, the bare engine's runs per big write after the server "
        "(0: none)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="run the sequence this many times, each in a fresh process, and print the target "
        "figures per run with their median and range (needs --skip-in-process)",
    )
    parser.add_argument("--json", type=Path, help="write the target figures of this run here")
    args = parser.parse_args()
    if args.repeat:
        if not args.skip_in_process or not args.floor_runs:
            parser.error("--repeat needs --skip-in-process and floors (--floor-runs > 0)")
        repeat(args.repeat, _without_repeat(sys.argv[1:]))
        return
    configuration = {"format_version": args.format_version, "table_layout": args.layout}
    with tempfile.TemporaryDirectory(prefix="sd-oop-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        work = Workload(folder, args.rows)
        took = time.perf_counter() - started
        print(f"{args.rows:,} rows per write; files written in {took:.0f} s")
        results: dict[str, dict[str, float]] = {}
        peaks: dict[str, float] = {}
        log = folder / "serve.log"
        flags = ["--warehouse", str(folder / "warehouse")]  # Bench(folder)'s, for the floors
        if args.no_warm_writes:
            flags.append("--no-warm-writes")
        if args.spark_conf:
            flags += ["--spark-conf", args.spark_conf]
        launched = time.perf_counter()
        server = start_server(log_file=log, flags=flags, prewarm=args.prewarm)
        try:
            if args.prewarm and not args.no_warm_writes:
                wait_for(log, WARM, timeout=900)
                warmed = next(m for m in log_messages(log) if WARM in m)
                since = time.perf_counter() - launched
                print(f"serve --prewarm: {warmed}, {since:.1f} s after launch")
            send = over_grpc(server.address, configuration)
            if not args.no_warm_up:
                print("serve: warm-up (not counted)")
                run(send, work.requests("warm", history=False))
            print("serve" + (" --prewarm" if args.prewarm else ""))
            measured = work.requests("measured", again=True, small=True)
            results["serve"] = run(send, measured, peaks, server.pid)
        finally:
            server.stop()
        steps = merge_steps(log)
        print("  server's steps: " + "; ".join(f"{n}: {s:.2f}" for n, s in steps))
        print("  server's big stagings (decode + hand-off): " + "; ".join(staging_splits(log)))
        big = jvm_time_of_big_steps(log)
        print("  server's steps of 1 s or more, JVM's time: " + "; ".join(big))
        small_p50 = small_syncs(results["serve"], steps)
        for message in log_messages(log):
            # The report, and the orphan check's line when it left that step out.
            if message.startswith("maintenance of "):
                print(f"  server's {message}")
        floor = {}
        if args.floor_runs and args.skip_in_process:
            runs = args.floor_runs
            print(f"the bare engine on the server's tables (one uncounted run, then {runs})")
            floor = floors(folder, work, args.floor_runs)
        elif args.floor_runs:
            # One JVM per process, and a catalog's warehouse is fixed once registered: the
            # floors (the server's warehouse) and the in-process run (its own) cannot share it.
            print("(no floors: they need --skip-in-process)")
        if not args.skip_in_process:
            engine = Engine(
                SessionProvider.embedded(), defaults={"warehouse": str(folder / "wh-local")}
            )
            send = in_process(engine, configuration)
            if not args.no_warm_up:
                print("in process: warm-up (not counted)")
                run(send, work.requests("warm", history=False))
            print("in process")
            results["in process"] = run(send, work.requests("measured", again=True, small=True))
            engine.sessions.stop()
        print()
        print("request | " + " | ".join(results) + " | ratio")
        print("---|" + "---|" * len(results) + "---")
        names = list(next(iter(results.values())))
        for name in names:
            values = [results[k][name] for k in results]
            ratio = f"{values[0] / values[1]:.2f}" if len(values) == 2 else ""
            print(f"{name} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {ratio}")
        for key, seconds in results.items():
            print(
                f"{key}: history batch ÷ upsert = "
                f"{seconds['history batch'] / seconds['upsert']:.2f}"
            )
            if "history again batch" in seconds:
                upsert = seconds["upsert"]
                print(
                    f"{key}: the second history table's batch ÷ upsert = "
                    f"{seconds['history again batch'] / seconds['upsert']:.2f}; the third's "
                    f"(other columns) {seconds['history other columns batch'] / upsert:.2f}"
                )
        if floor:
            print()
            print(
                "serve ÷ the bare engine | serve s | floor s (median) | ratio | "
                "serve peak RSS GiB | floor's | ratio"
            )
            print("---|---|---|---|---|---|---")
            for name in ("upsert", "mixed", "history batch", "history again batch"):
                both, seconds = floor[name.replace(" again", "")]
                served = results["serve"][name]
                memory = max(both.floor_memory)
                print(
                    f"{name} | {served:.2f} | {seconds:.2f} | {served / seconds:.2f} | "
                    f"{peaks[name]:.2f} | {memory:.2f} | {peaks[name] / memory:.2f}"
                )
            _, seconds = floor[SPARK_COALESCING]
            for name in ("history batch", "history again batch"):
                served = results["serve"][name]
                print(
                    f"{name} ÷ the floor with Spark's default coalescing | {served:.2f} | "
                    f"{seconds:.2f} | {served / seconds:.2f} | | |"
                )
            # Both cold: the server's first history batch and the floor's first history MERGE
            # each pay the JIT for that statement's shape (docs/benchmarks.md).
            both, _ = floor["history batch"]
            if both.first is not None:
                served = results["serve"]["history batch"]
                print(
                    f"history batch, first run each (cold) | {served:.2f} | {both.first:.2f} | "
                    f"{served / both.first:.2f} | | |"
                )
            if args.json:
                figures = target_figures(results["serve"], peaks, floor, small_p50)
                args.json.write_text(json.dumps(figures))


def _without_repeat(argv: list[str]) -> list[str]:
    """``argv`` without its ``--repeat N`` (or ``--repeat=N``)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--repeat":
            skip = True
        elif not arg.startswith("--repeat="):
            kept.append(arg)
    return kept


if __name__ == "__main__":
    main()
