"""The first big batches of a fresh server against the bare engine's first MERGE.

A fresh JVM runs its first MERGE of a shape on cold, interpreted code: an independent harness
measured the bare engine's first 1M-row MERGE at 12.4 s against a warm median of 6.7 s, and the
connector's 1M upsert (the second big write of a fresh ``serve``) at 16.1 s. ``serve --prewarm``
runs small writes of every kind on throwaway tables once Spark is up (``warm_up.py``); this
script measures what that buys, each case in a JVM of its own, one after the other:

* **bare**: a fresh process starts Spark with the connector's settings, creates the table
  through the connector, loads N rows with Spark's own writer (no MERGE), stages the N-row
  upsert batch (half new keys) and caches it, then times the plan's MERGE: its first run in
  that JVM, then ``--runs`` more, each from the loaded snapshot (their median is the warm floor);
* **serve, JVM only**: ``serve --prewarm --no-warm-writes`` (Spark started, nothing run), then
  CreateTable, the N-row load and the N-row upsert over gRPC, as Fivetran sends them;
* **serve, warmed**: ``serve --prewarm`` with its warm writes; the requests are sent once the
  warm-up has logged its end (when it ends after readiness, the time between is printed).

Prints seconds and ratios; asserts nothing. One run per case: compare within a run.

Usage: .venv/bin/python -u benchmarks/first_batch.py [--rows 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench  # benchmarks/bench.py, beside this script
import out_of_process

from spark_destination.core.model import Table
from spark_destination.core.requests import BatchFiles, CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.warm_up import WARM
from spark_destination.local_services.server_process import start_server
from spark_destination.planner.ir import MergeBatchOp, StageBatchOp
from spark_destination.planner.write import plan_write_batch
from spark_destination.runtime.batch.staging import Stager
from spark_destination.runtime.execute.executor import Executor


def write_files(folder: Path, n: int) -> tuple[bench.Files, str, str]:
    files = bench.Files(folder)
    rng = random.Random(5)
    load = files.write([bench.row(i, rng) for i in range(n)])
    upsert = files.write([bench.row(i, rng) for i in range(n // 2, n + n // 2)])
    return files, load, upsert


def bare(folder: Path, n: int, runs: int, upsert: str, keys: dict[str, bytes]) -> dict[str, float]:
    """In this (fresh) process: the bare engine's first and warm MERGE of the upsert."""
    started = time.perf_counter()
    b = bench.Bench(folder)
    b.files.keys.update(keys)
    seconds = {"spark start": time.perf_counter() - started}
    table = b.table("bare")
    bench.load_rows(b, table, n)
    snapshot = b.snapshot(table)
    request = b.request(table, replace=[upsert])
    plan = plan_write_batch(request, table, catalog=b.config.catalog, target=SPARK_ICEBERG)
    stage = next(op for op in plan.ops if isinstance(op, StageBatchOp))
    merge = next(op for op in plan.ops if isinstance(op, MergeBatchOp))
    (statement,) = render(merge, SPARK_ICEBERG)
    sql = statement.form(Form.UNIQUE_KEYS) or statement.sql
    assert sql is not None
    session = b.csv.sessions.for_request(b.config)
    stager = Stager(session)
    stager.stage(stage, keys=b.files.keys, params=bench.PARAMS)
    session.table(stage.view).cache().count()
    executor = Executor(session)
    times = []
    for _ in range(1 + runs):
        times.append(bench.timed(lambda: executor.sql(sql, what="floor")))
        b.rollback(table, snapshot, session)
    seconds["first MERGE"] = times[0]
    seconds["warm MERGE median"] = bench.median(times[1:])
    return seconds


def served(
    folder: Path, files: bench.Files, load: str, upsert: str, *, warm: bool
) -> dict[str, float]:
    log = folder / f"serve-{'warm' if warm else 'jvm'}.log"
    flags = ["--warehouse", str(folder / f"wh-{'warm' if warm else 'jvm'}")]
    if not warm:
        flags.append("--no-warm-writes")
    started = time.perf_counter()
    server = start_server(log_file=log, flags=flags, prewarm=True)
    seconds = {"ready (gRPC and Spark)": time.perf_counter() - started}
    try:
        if warm:
            out_of_process.wait_for(log, WARM, timeout=900)
            seconds["warm-up done, after start"] = time.perf_counter() - started
        send = out_of_process.over_grpc(server.address, {})
        table = Table(name="served", columns=bench.COLUMNS)
        batch = lambda path: WriteBatchRequest(  # noqa: E731
            schema=bench.SCHEMA,
            table=table,
            files=BatchFiles(replace=(path,), params=bench.PARAMS, keys=files.keys),
        )
        send(CreateTableRequest(schema=bench.SCHEMA, table=table))
        seconds["load (first big write)"] = bench.timed(lambda: send(batch(load)))
        seconds["upsert (second big write)"] = bench.timed(lambda: send(batch(upsert)))
    finally:
        server.stop()
    steps = out_of_process.merge_steps(log)
    print("  server's steps: " + "; ".join(f"{name}: {s:.2f}" for name, s in steps))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="warm bare MERGEs after the first")
    parser.add_argument("--bare-child", help=argparse.SUPPRESS)  # the bare case's own process
    args = parser.parse_args()
    if args.bare_child:
        folder = Path(args.bare_child)
        spec = json.loads((folder / "bare.json").read_text())
        keys = {path: bytes.fromhex(key) for path, key in spec["keys"].items()}
        result = bare(folder / "bare", args.rows, args.runs, spec["upsert"], keys)
        print("RESULT " + json.dumps(result))
        return
    with tempfile.TemporaryDirectory(prefix="sd-first-") as tmp:
        folder = Path(tmp)
        files, load, upsert = write_files(folder, args.rows)
        keys = {path: key.hex() for path, key in files.keys.items()}
        (folder / "bare.json").write_text(json.dumps({"upsert": upsert, "keys": keys}))
        (folder / "bare").mkdir()
        results: dict[str, dict[str, float]] = {}
        print("bare engine (fresh process)")
        child = subprocess.run(  # noqa: S603 - this script, in this interpreter
            [
                sys.executable,
                __file__,
                "--bare-child",
                tmp,
                "--rows",
                str(args.rows),
                "--runs",
                str(args.runs),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(x for x in child.stdout.splitlines() if x.startswith("RESULT "))
        results["bare"] = json.loads(line.removeprefix("RESULT "))
        print(f"  {results['bare']}")
        for warm in (False, True):
            name = "serve --prewarm" + ("" if warm else " --no-warm-writes")
            print(name)
            results[name] = served(folder, files, load, upsert, warm=warm)
            print(f"  {results[name]}")
        first = results["bare"]["first MERGE"]
        warm_median = results["bare"]["warm MERGE median"]
        print()
        print(f"bare engine: first 1M MERGE {first:.2f} s, warm median {warm_median:.2f} s")
        for name in ("serve --prewarm --no-warm-writes", "serve --prewarm"):
            case = results[name]
            up = case["upsert (second big write)"]
            print(
                f"{name}: upsert {up:.2f} s = {up / first:.2f}x the bare first MERGE, "
                f"{up / warm_median:.2f}x its warm median; "
                f"load {case['load (first big write)']:.2f} s; "
                f"ready after {case['ready (gRPC and Spark)']:.1f} s"
            )


if __name__ == "__main__":
    main()
