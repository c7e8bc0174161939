"""Benchmark: the connector against the bare-engine floor, in one run on one warm Spark session.

Prints figures and ratios; asserts nothing. The "floor" is the same MERGE statement the
connector runs, from the batch already decoded, staged (typed) and cached in Spark: what is
left when decryption, decompression, parsing, typing and staging cost nothing. Every measured
write starts from the same table state (Iceberg ``rollback_to_snapshot`` between runs).

Figures: N-row upsert WriteBatch into an N-row table (median of warm runs,
and over the floor's median and first run); mixed (60 % replace, 25 % update with unmodified
columns, 15 % delete); N-version WriteHistoryBatch over the N-row upsert; small batch (100
replace, 10 update, 10 delete; sequential and random keys) p50 on a big table over the bare
small MERGE, and big over a table 10x smaller; Parquet over CSV upsert; peak RSS (this process
and the JVM) of the connector over the floor; decrypt + decompress + parse (+ typing)
throughput; growth of time and memory with N. Bad values: the N-row upsert under
bad_value_policy=null over the same under fail (no bad value), and with 1 % of its rows
carrying one bad value each over the clean null run.

Deferred write mode, both modes in the same run, random-key small batches (100
replace, 10 update with unmodified values, 10 delete) on tables of 16.5k and 165k rows
(``--full``: 1.65M and 16.5M, loaded through Spark, not through the connector): deferred
WriteBatch p50 over merge mode's; deferred p50 at the bigger table over the smaller; N batches
and one flush over N merge-mode batches (N = 20, ``--full``: 50); that one flush over one
merge-mode small batch (p50), and a flush of one pending batch over that batch.

Usage:
    .venv/bin/python benchmarks/bench.py                 # N = 100k, small tables 16.5k/165k
    .venv/bin/python benchmarks/bench.py --scale --plot scale.png    # layouts: 16.5k/165k rows
    .venv/bin/python benchmarks/bench.py --scale --scale-sizes 1650000,16500000 --aging 500
    .venv/bin/python benchmarks/bench.py --rows 100000 --bad-values-only   # bad values only
    .venv/bin/python benchmarks/bench.py --full          # N = 1M, small tables 165k/1.65M
    .venv/bin/python benchmarks/bench.py --rows 200000 --growth 10000,100000 --runs 3
    .venv/bin/python benchmarks/bench.py --deferred      # only the deferred-mode figures
    .venv/bin/python benchmarks/bench.py --rows 1000000 --writes-only [--format-version 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession
from scale import Kit, run_scale  # benchmarks/scale.py, beside this script

from spark_destination.core.config import TableFormat, parse_config
from spark_destination.core.model import (
    Column,
    DataType,
    DecimalParams,
    FileKind,
    FileParams,
    Table,
)
from spark_destination.core.requests import (
    BatchFiles,
    CreateTableRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.dialects.quoting import qualified, string_literal
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.engine.table_format import catalog_of, configured_dialect
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.ir import MergeBatchOp, MergeHistoryOp, Plan, StageBatchOp
from spark_destination.planner.write import plan_write_batch
from spark_destination.replay.batch_writer import (
    new_key,
    write_batch_file,
    write_parquet_batch_file,
)
from spark_destination.runtime.batch.csv_text import read_batch_file
from spark_destination.runtime.batch.staging import Stager, decode_spec
from spark_destination.runtime.batch.typed_csv import decode_csv_file
from spark_destination.runtime.batch.typed_decode import decode_file
from spark_destination.runtime.execute import jvm_time
from spark_destination.runtime.execute.executor import DISTRIBUTION_MODE_CONF, Executor

NULL, UNMOD = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP", "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PARAMS = FileParams(null_string=NULL, unmodified_string=UNMOD)
TMAX = "9999-12-31T23:59:59.999Z"
SCHEMA = "bench"
COLUMNS = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="qty", type=DataType.INT),
    Column(name="price", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
    Column(name="score", type=DataType.DOUBLE),
    Column(name="name", type=DataType.STRING),
    Column(name="city", type=DataType.STRING),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="active", type=DataType.BOOLEAN),
    Column(name="updated_at", type=DataType.UTC_DATETIME),
    Column(name="note", type=DataType.STRING),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
)
HEADER = [c.name for c in COLUMNS]
HISTORY = (
    *COLUMNS[:-1],
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
)
CITIES = ["Berlin", "Lisbon", "São Paulo", "New York, NY", 'The "Hague"']


def row(i: int, rng: random.Random, synced: str = "2024-06-01T12:00:00.000Z") -> list[str]:
    return [
        str(i),
        str(rng.randint(0, 1000)),
        f"{rng.random() * 1000:.4f}",
        repr(rng.random()),
        f"customer number {i}",
        CITIES[i % 5],
        f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
        "true" if i % 2 else "false",
        f"2024-05-{1 + i % 28:02d}T{i % 24:02d}:00:00.{i % 1000:03d}Z",
        "note" if i % 3 else NULL,
        synced,
        "false",
    ]


SYNCED2 = "2024-07-01T12:00:00.000Z"


def update_row(i: int, rng: random.Random) -> list[str]:
    """Half the columns unmodified."""
    full = row(i, rng, SYNCED2)
    return [v if n % 2 == 0 or n == 0 else UNMOD for n, v in enumerate(full)]


PATTERNS = ("sequential", "random")


def small_batch(files: Files, pattern: str, size: int, rng: random.Random) -> dict[str, list[str]]:
    """100 upserts, 10 updates (half the columns unmodified) and 10 deletes on a table holding
    keys 0 .. size-1. Sequential keys: the upserts are new keys right above the largest and
    the changes hit the newest 1 % (an append-mostly source). Random keys: the upserts are
    anywhere in twice the key range (half of them new) and the changes anywhere."""
    if pattern == "sequential":
        upserts = list(range(size, size + 100))
        changed = rng.sample(range(size - size // 100, size), 20)
    else:
        upserts = rng.sample(range(2 * size), 100)
        changed, taken = [], set(upserts)  # a repeated key would need the fold
        while len(changed) < 20:
            key = rng.randrange(size)
            if key not in taken:
                taken.add(key)
                changed.append(key)
    return {
        "replace": [files.write([row(i, rng) for i in upserts])],
        "update": [files.write([update_row(i, rng) for i in changed[:10]])],
        "delete": [files.write([row(i, rng) for i in changed[10:]])],
    }


class Files:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.keys: dict[str, bytes] = {}
        self.count = 0

    def write(
        self,
        rows: Sequence[Sequence[str]],
        header: Sequence[str] = HEADER,
        *,
        parquet: bool = False,
        columns: Sequence[Column] = COLUMNS,
    ) -> str:
        self.count += 1
        path = self.folder / f"f{self.count}.{'parquet' if parquet else 'csv'}.aes"
        key = new_key()
        if parquet:
            write_parquet_batch_file(path, columns, header, rows, params=PARAMS, key=key)
        else:
            write_batch_file(path, header, rows, params=PARAMS, key=key)
        self.keys[str(path)] = key
        return str(path)


# --- Process-tree memory: peak RSS of this process and its JVM child, reset per phase -----


def _tree(root: int | None = None) -> list[int]:
    pids, todo = [], [os.getpid() if root is None else root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return pids


def reset_peak(root: int | None = None) -> None:
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as fh:
                fh.write("5")  # resets VmHWM to the current RSS
        except OSError:
            pass


def peak_gib(root: int | None = None) -> float:
    total = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 2**20


# --- The bench ----------------------------------------------------------------------------


class Bench:
    def __init__(
        self,
        folder: Path,
        layout: dict[str, str] | None = None,
        session: SparkSession | None = None,
    ) -> None:
        self.files = Files(folder)
        # Every request takes ``layout`` (table_layout, format_version, table_format) as the
        # server's defaults.
        configuration = {"warehouse": str(folder / "warehouse"), **(layout or {})}
        self.config = parse_config(configuration)
        # The dialect and catalog of the configured table format, as the engine picks them.
        self.dialect = configured_dialect(self.config)
        self.catalog = catalog_of(self.config)
        self.delta = self.config.table_format is TableFormat.DELTA
        sessions = (
            SessionProvider.embedded()
            if session is None
            else SessionProvider.shared(session, self.config)
        )
        self.csv = Engine(sessions, defaults=configuration)
        started = time.perf_counter()
        self.session = self.csv.sessions.root(self.config)
        if session is None:
            print(f"spark start-up: {time.perf_counter() - started:.1f} s")
        self.parquet = Engine(
            SessionProvider.shared(self.session, self.config),
            defaults={**configuration, "batch_file_format": "parquet"},
        )

    def table(self, name: str, columns: Sequence[Column] = COLUMNS) -> Table:
        table = Table(name=name, columns=tuple(columns))
        self.csv.apply({}, CreateTableRequest(schema=SCHEMA, table=table))
        return table

    def snapshot(self, table: Table) -> int:
        return self.snapshots(table)[-1]

    def snapshots(self, table: Table) -> list[int]:
        """The table's snapshot ids (Delta: its versions), oldest first."""
        name = qualified(self.catalog, SCHEMA, table.name)
        if self.delta:
            history = self.session.sql(f"DESCRIBE HISTORY {name}")  # noqa: S608 - quoted name
            return sorted(int(row["version"]) for row in history.collect())
        rows = self.session.table(name + ".snapshots").orderBy("committed_at").collect()
        return [int(row["snapshot_id"]) for row in rows]

    def rollback(self, table: Table, snapshot: int, session: SparkSession | None = None) -> None:
        """Back to ``snapshot``, through the session that writes next (its catalog caches the
        table: a rollback elsewhere would leave it committing on a snapshot no longer current).
        A Delta table is restored to the version (a commit of its own).
        """
        if self.delta:
            name = qualified(self.catalog, SCHEMA, table.name)
            restore = f"RESTORE TABLE {name} TO VERSION AS OF {int(snapshot)}"
            (session or self.session).sql(restore).collect()
            return
        ident = string_literal(f"{SCHEMA}.{table.name}")
        procedure = f"{self.config.catalog}.system.rollback_to_snapshot"  # catalog name: validated
        (session or self.session).sql(f"CALL {procedure}({ident}, {snapshot})").collect()  # noqa: S608

    def request(self, table: Table, **files: Sequence[str]) -> WriteBatchRequest:
        batch = BatchFiles(
            params=PARAMS,
            keys=self.files.keys,
            **{k: tuple(v) for k, v in files.items()},  # type: ignore[arg-type]
        )
        return WriteBatchRequest(schema=SCHEMA, table=table, files=batch)

    def timed_write(self, engine: Engine, request: WriteBatchRequest) -> float:
        started = time.perf_counter()
        engine.apply({}, request)
        return time.perf_counter() - started

    def compare(
        self,
        write: Callable[[], object] | None,
        plan: Plan,
        runs: int,
        table: Table,
        snapshot: int,
        *,
        form: Form | None = Form.UNIQUE_KEYS,
        alternate: bool = True,
        spark_defaults: Sequence[str] = (),
    ) -> Comparison:
        """The connector's ``write`` and the floor (the plan's MERGE, in the ``form`` the
        runtime picks for this batch, from its batch staged and cached); every run starts from
        ``snapshot``. Alternated run by run so that JIT warm-up and GC favour neither, unless
        not ``alternate``: then the connector's runs follow one another, as a sync's batches
        do, and the floor's runs come after. One connector run before them is not counted.
        Without ``write``, the floor alone: then its first run is the one not counted.
        ``spark_defaults``: runtime settings the floor's session takes at Spark's own default
        instead of the connector's."""
        stage = next(op for op in plan.ops if isinstance(op, StageBatchOp))
        merge_op = next(op for op in plan.ops if isinstance(op, MergeBatchOp | MergeHistoryOp))
        (statement,) = render(merge_op, self.dialect)
        sql = (statement.form(form) if form else None) or statement.sql
        assert sql is not None
        session = self.csv.sessions.for_request(self.config)
        if isinstance(merge_op, MergeHistoryOp):  # as the executor runs a history MERGE
            session.conf.set(DISTRIBUTION_MODE_CONF, "none")
        for key in spark_defaults:  # this child session's own SQL conf
            session.conf.unset(key)
        stager = Stager(session)
        result = Comparison()
        try:
            stager.stage(stage, keys=self.files.keys, params=PARAMS)
            session.table(stage.view).cache().count()
            executor = Executor(session)
            floor = (
                result.floor,
                result.floor_memory,
                result.floor_compiling,
                lambda: executor.sql(sql, what="floor"),
            )
            sides: list[tuple[list[float], list[float], list[float], Callable[[], object]]]
            sides = [floor]
            if write is not None:
                connector = (
                    result.connector,
                    result.connector_memory,
                    result.connector_compiling,
                    write,
                )
                sides.insert(0, connector)
            # One connector run first, not counted: the first large MERGE of a shape pays the
            # JVM's JIT warm-up (a 1M upsert: 12.8 s, then 7.4-8.0 s), and in the alternation
            # only the connector's first run would pay it. The floor's first run still counts,
            # unless the floor runs alone (then it is the run not counted).
            started, before = time.perf_counter(), jvm_time.read(session)
            sides[0][3]()
            result.first = time.perf_counter() - started
            result.first_compiling = jvm_time.read(session).since(before).compiling_ms / 1000
            self.rollback(table, snapshot, session)
            order = sides * runs if alternate else [sides[0]] * runs + [sides[1]] * runs
            for times, memory, compiling, run in order:
                reset_peak()
                started, before = time.perf_counter(), jvm_time.read(session)
                run()
                times.append(time.perf_counter() - started)
                compiling.append(jvm_time.read(session).since(before).compiling_ms / 1000)
                memory.append(peak_gib())
                # Through the floor's session: its catalog caches the table (a rollback
                # elsewhere would leave it committing on a snapshot no longer current);
                # the connector loads the table afresh for every request.
                self.rollback(table, snapshot, session)
        finally:
            session.conf.unset(DISTRIBUTION_MODE_CONF)
            session.catalog.clearCache()
            stager.cleanup()
        return result


@dataclass
class Comparison:
    connector: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    connector_memory: list[float] = field(default_factory=list)
    floor_memory: list[float] = field(default_factory=list)
    # The uncounted first run (the connector's, or the floor's when it runs alone): in a JVM
    # that has not run this statement's shape yet, it pays the JIT.
    first: float | None = None
    # Seconds the JVM spent compiling during each run (``runtime.execute.jvm_time``).
    connector_compiling: list[float] = field(default_factory=list)
    floor_compiling: list[float] = field(default_factory=list)
    first_compiling: float | None = None


# --- bad_value_policy --------------------------------------------------------------------

NULLS = {"bad_value_policy": "null"}
# (column index in ``row``, a text that column cannot hold): an INT, a DECIMAL(18, 4) beyond
# its precision, a DOUBLE, an impossible DATE, a BOOLEAN, an instant out of range.
BAD_VALUES = (
    (1, "x12"),
    (2, "123456789012345.5"),
    (3, "not-a-number"),
    (6, "2024-02-30"),
    (7, "yes"),
    (8, "2024-13-01T00:00:00Z"),
)


def with_bad_values(rows: Sequence[Sequence[str]], rng: random.Random) -> list[list[str]]:
    """``rows`` with one bad value in 1 % of them (random rows, random bad columns)."""
    dirty = [list(r) for r in rows]
    for index in rng.sample(range(len(dirty)), len(dirty) // 100):
        column, text = rng.choice(BAD_VALUES)
        dirty[index][column] = text
    return dirty


def bad_value_figures(
    bench: Bench,
    n: int,
    upsert_rows: Sequence[Sequence[str]],
    upsert_csv: str,
    runs: int,
    rng: random.Random,
) -> list[tuple[str, float, float]]:
    """The N-row upsert (half new keys) under bad_value_policy=fail and =null with the same
    clean file, and under null with 1 % of its rows carrying one bad value each; run by run
    alternated, each from the same table state (the changes table dropped after each run,
    so every dirty run creates it and writes N/100 records). One uncounted round first."""
    table = bench.table("bad_values")
    bench.csv.apply(
        {}, bench.request(table, replace=[bench.files.write([row(i, rng) for i in range(n)])])
    )
    base = bench.snapshot(table)
    dirty_csv = bench.files.write(with_bad_values(upsert_rows, rng))
    changes = qualified(bench.config.catalog, SCHEMA, "sd__changes")
    sides = {
        "fail": ({}, bench.request(table, replace=[upsert_csv])),
        "null": (NULLS, bench.request(table, replace=[upsert_csv])),
        "null, 1 % bad": (NULLS, bench.request(table, replace=[dirty_csv])),
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    records = 0
    for round_ in range(runs + 1):
        for name, (configuration, request) in sides.items():
            started = time.perf_counter()
            bench.csv.apply(configuration, request)
            seconds = time.perf_counter() - started
            if name == "null, 1 % bad" and not records:
                records = bench.session.table(changes).count()
            bench.rollback(table, base)
            bench.session.sql("DROP TABLE IF EXISTS " + changes).collect()
            if round_:
                times[name].append(seconds)
    print(f"bad values: {records:,} records written by the 1 % run (expected {n // 100:,})")
    # Where the difference comes from: decoding alone (no Spark), as staging runs it under null.
    plan = plan_write_batch(
        sides["null"][1],
        table,
        catalog=bench.config.catalog,
        target=SPARK_ICEBERG,
        changes_table="sd__changes",
    )
    spec = decode_spec(next(op for op in plan.ops if isinstance(op, StageBatchOp)))
    for label, path in (("clean", upsert_csv), ("1 % bad", dirty_csv)):
        seconds = median_seconds(
            3,
            lambda path=path: decode_csv_file(
                path,
                key=bench.files.keys[path],
                params=PARAMS,
                spec=spec,
                kind=FileKind.REPLACE,
                changes=[],
            ),
        )
        print(f"bad values: decoding the {label} file under null takes {seconds:.2f} s")
    return [
        (
            f"{n:,} upsert, bad_value_policy=null, no bad value ÷ fail (target ≤ 1.05)",
            median(times["null"]),
            median(times["fail"]),
        ),
        (
            f"{n:,} upsert, null, 1 % of rows with a bad value ÷ clean null (target ≤ 1.2)",
            median(times["null, 1 % bad"]),
            median(times["null"]),
        ),
    ]


def print_figures(figures: Sequence[tuple[str, float, float]]) -> None:
    print()
    print("figure | connector | floor/other | ratio")
    print("---|---|---|---")
    for name, left, right in figures:
        print(f"{name} | {left:.2f} | {right:.2f} | {left / right:.2f}")


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


# --- Deferred write mode -------------------------------------------------------------------

DEFERRED = {"write_mode": "deferred", "merge_interval_ms": "-1"}


def load_rows(bench: Bench, table: Table, size: int) -> None:
    """``size`` rows of ``row``'s shape (keys 0 .. size-1) written by Spark itself: a 16.5M-row
    table through a batch file would need gigabytes of CSV in memory."""
    from pyspark.sql import functions as F  # noqa: N812

    key = F.col("id")
    cities = F.array(*(F.lit(c) for c in CITIES))
    frame = bench.session.range(size).select(
        key.alias("id"),
        (key % 1001).cast("int").alias("qty"),
        (F.rand(1) * 1000).cast("decimal(18,4)").alias("price"),
        F.rand(2).alias("score"),
        F.concat(F.lit("customer number "), key.cast("string")).alias("name"),
        F.element_at(cities, (key % 5 + 1).cast("int")).alias("city"),
        F.date_add(F.lit("2024-01-01").cast("date"), (key % 365).cast("int")).alias("day"),
        (key % 2 == 1).alias("active"),
        F.timestamp_seconds(key % 2_000_000 + 1_714_521_600).alias("updated_at"),
        F.when(key % 3 > 0, F.lit("note")).alias("note"),
        F.lit("2024-06-01 12:00:00").cast("timestamp").alias("_fivetran_synced"),
        F.lit(False).alias("_fivetran_deleted"),
    )
    frame.writeTo(qualified(bench.catalog, SCHEMA, table.name)).append()


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


@dataclass
class DeferredRun:
    """One table size's timings, in seconds."""

    merge: list[float]  # merge-mode small batches, each from the loaded table
    deferred: list[float]  # deferred small batches (appends)
    merge_total: float  # N merge-mode batches, one after the other
    deferred_total: float  # N deferred batches and the flush
    flush: float  # the flush of N pending batches
    # Flushes of one pending batch (its keys fit the flush's key filter), each from the table.
    flush_one: list[float] = field(default_factory=list)


def deferred_run(
    bench: Bench, size: int, runs: int, batches: int, rng: random.Random
) -> DeferredRun:
    engine, files = bench.csv, bench.files
    table = bench.table(f"deferred_{size}")
    started = time.perf_counter()
    load_rows(bench, table, size)
    print(f"loaded {size:,} rows in {time.perf_counter() - started:.1f} s")
    base = bench.snapshot(table)

    def batch() -> WriteBatchRequest:
        return bench.request(table, **small_batch(files, "random", size, rng))

    def merge(request: WriteBatchRequest) -> float:
        return timed(lambda: engine.apply({}, request))

    def append(request: WriteBatchRequest) -> float:
        return timed(lambda: engine.apply(DEFERRED, request))

    def flush() -> float:
        return timed(lambda: engine.flush(DEFERRED, SCHEMA, table.name))

    # Not counted: the first MERGE of the table, and the first append (it creates the
    # intermediate table) with its flush.
    merge(batch())
    bench.rollback(table, base)
    append(batch())
    flush()
    bench.rollback(table, base)
    result = DeferredRun(merge=[], deferred=[], merge_total=0.0, deferred_total=0.0, flush=0.0)
    for _ in range(runs):  # each from the loaded table, as the first batch of a sync
        result.merge.append(merge(batch()))
        bench.rollback(table, base)
    result.deferred = [append(batch()) for _ in range(runs)]  # pending rows only grow
    flush()
    bench.rollback(table, base)
    for _ in range(3):  # a sync per interval: each flush folds one batch
        append(batch())
        result.flush_one.append(flush())
        bench.rollback(table, base)
    pending = [batch() for _ in range(batches)]
    result.merge_total = sum(merge(request) for request in pending)
    bench.rollback(table, base)
    appends = sum(append(request) for request in pending)
    result.flush = flush()
    result.deferred_total = appends + result.flush
    bench.rollback(table, base)
    return result


def deferred_figures(
    bench: Bench, sizes: Sequence[int], runs: int, batches: int, rng: random.Random
) -> list[tuple[str, float, float]]:
    """Deferred mode's figures: (name, left, right); the ratio is left ÷ right."""
    done = {size: deferred_run(bench, size, runs, batches, rng) for size in sizes}
    figures = []
    for size, run in done.items():
        figures += [
            (
                f"deferred ÷ merge small batch p50 at {size:,} rows, random keys",
                median(run.deferred),
                median(run.merge),
            ),
            (
                f"{batches} batches + one flush, deferred ÷ merge total at {size:,} rows",
                run.deferred_total,
                run.merge_total,
            ),
            (
                f"one flush of {batches} pending batches ÷ merge small batch p50 at {size:,} rows",
                run.flush,
                median(run.merge),
            ),
            (
                f"flush of one pending batch p50 ÷ merge small batch p50 at {size:,} rows",
                median(run.flush_one),
                median(run.merge),
            ),
        ]
    small, big = min(sizes), max(sizes)
    figures.append(
        (
            f"deferred small batch p50 at {big:,} ÷ at {small:,} rows",
            median(done[big].deferred),
            median(done[small].deferred),
        )
    )
    return figures


def median_seconds(runs: int, work: Callable[[], object]) -> float:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    return median(seconds)


def main() -> None:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="N=1M, small tables 165k/1.65M")
    parser.add_argument("--rows", type=int, help="N (default 100k, 1M with --full)")
    parser.add_argument("--small-table", type=int, help="big small-batch table (1.65M / 165k)")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per figure")
    parser.add_argument("--small-runs", type=int, default=7)
    parser.add_argument("--growth", help="comma-separated sizes (default 10k,100k[,1M])")
    # Small batches on large tables per layout and format version (benchmarks/scale.py).
    parser.add_argument("--scale", action="store_true", help="only the lake-scale figures")
    parser.add_argument(
        "--scale-sizes", default="16500,165000", help="table sizes (documented: 1650000,16500000)"
    )
    parser.add_argument(
        "--candidates",
        default="plain/2,sorted/2,bucketed-64/2,sorted/3",
        help="layout[-row group or -buckets]/format version, comma-separated",
    )
    parser.add_argument("--patterns", default="random,sequential")
    parser.add_argument("--aging", type=int, default=0, help="small batches for the aging figure")
    parser.add_argument("--aging-candidates", default="sorted/2,sorted/3")
    parser.add_argument(
        "--aging-modes", default="with,without", help="automatic maintenance: with, without"
    )
    parser.add_argument("--json", help="write the scale figures to this file")
    parser.add_argument("--plot", help="draw small-batch p50 against table size to this PNG")
    # The layout and format version of every table the other figures create.
    parser.add_argument("--table-layout", help="table_layout for the other figures")
    parser.add_argument("--format-version", help="format_version for the other figures")
    parser.add_argument("--deferred", action="store_true", help="only deferred mode's figures")
    parser.add_argument(
        "--deferred-tables",
        help="comma-separated table sizes (default 16.5k,165k; --full 1.65M,16.5M)",
    )
    parser.add_argument(
        "--deferred-batches", type=int, help="batches before one flush (default 20, --full 50)"
    )
    parser.add_argument(
        "--writes-only",
        action="store_true",
        help="only the big writes against the floor: upsert, Parquet, mixed, history",
    )
    parser.add_argument(
        "--bad-values-only",
        action="store_true",
        help="only the bad_value_policy figures: fail vs null, clean vs 1 %% bad",
    )
    args = parser.parse_args()
    deferred_sizes = (
        [int(s) for s in args.deferred_tables.split(",")]
        if args.deferred_tables
        else ([1_650_000, 16_500_000] if args.full else [16_500, 165_000])
    )
    deferred_batches = args.deferred_batches or (50 if args.full else 20)
    if args.deferred:
        with tempfile.TemporaryDirectory(prefix="sd-bench-") as tmp:
            bench = Bench(Path(tmp))
            figures = deferred_figures(
                bench, deferred_sizes, args.small_runs, deferred_batches, random.Random(20)
            )
            print_figures(figures)
            print(f"(small batches: {args.small_runs} runs each; one run: compare ratios)")
        return
    n = args.rows or (1_000_000 if args.full else 100_000)
    big_table = args.small_table or (1_650_000 if args.full else 165_000)
    growth = (
        [int(s) for s in args.growth.split(",")]
        if args.growth
        else ([10_000, 100_000, 1_000_000] if args.full else [10_000, 100_000])
    )
    rng = random.Random(9)
    figures: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="sd-bench-") as tmp:
        layout = {
            key: value
            for key, value in (
                ("table_layout", args.table_layout),
                ("format_version", args.format_version),
            )
            if value
        }
        bench = Bench(Path(tmp), layout)
        files = bench.files
        if args.scale:
            kit = Kit(columns=COLUMNS, schema=SCHEMA, row=row, update_row=update_row)
            run_scale(bench, args, kit)
            return

        # Warm-up: the first MERGE and file read of a JVM pay JIT start-up.
        warm = bench.table("warm")
        bench.csv.apply(
            {}, bench.request(warm, replace=[files.write([row(i, rng) for i in range(2000)])])
        )

        # Throughput of decrypt + decompress + parse (and typing) of one N-row file.
        upsert_rows = [row(i, rng) for i in range(n // 2, n + n // 2)]
        upsert_csv = files.write(upsert_rows)
        plain = sum(len(",".join(r)) + 1 for r in upsert_rows) / 1e6
        # Medians of 3 runs each: one run right after the JVM's warm-up is noisy.
        parse = median_seconds(
            3,
            lambda: read_batch_file(
                upsert_csv, key=files.keys[upsert_csv], params=PARAMS, columns=HEADER
            ),
        )
        raw = read_batch_file(upsert_csv, key=files.keys[upsert_csv], params=PARAMS, columns=HEADER)
        spec = decode_spec(
            plan_write_batch(
                bench.request(warm, replace=[upsert_csv]),
                warm,
                catalog="lake",
                target=SPARK_ICEBERG,
            ).ops[0]
        )  # type: ignore[arg-type]
        typing = median_seconds(
            3,
            lambda table=raw: decode_file(table, spec=spec, kind=FileKind.REPLACE, path=upsert_csv),
        )
        del raw
        staged = median_seconds(  # what staging runs: pyarrow types what it can exactly
            3,
            lambda: decode_csv_file(
                upsert_csv,
                key=files.keys[upsert_csv],
                params=PARAMS,
                spec=spec,
                kind=FileKind.REPLACE,
            ),
        )
        print(f"batch file: {n:,} rows, {plain:.0f} MB of CSV ({plain * 1e6 / n:.0f} B/row)")

        # 0. bad_value_policy: null against fail on a clean batch, then 1 % bad rows.
        if not args.writes_only:
            figures += bad_value_figures(bench, n, upsert_rows, upsert_csv, args.runs, rng)
        if args.bad_values_only:
            print_figures(figures)
            print(f"(medians of {args.runs} warm runs, alternated; one run: compare ratios)")
            return

        # 1. Upsert N rows (half new) into an N-row table; connector vs floor.
        target = bench.table("upsert")
        bench.csv.apply(
            {}, bench.request(target, replace=[files.write([row(i, rng) for i in range(n)])])
        )
        base = bench.snapshot(target)
        request = bench.request(target, replace=[upsert_csv])
        plan = plan_write_batch(request, target, catalog=bench.config.catalog, target=SPARK_ICEBERG)
        upsert = bench.compare(lambda: bench.csv.apply({}, request), plan, args.runs, target, base)
        figures.append(
            (
                f"{n:,} upsert WriteBatch ÷ floor (median)",
                median(upsert.connector),
                median(upsert.floor),
            )
        )
        figures.append(
            (
                f"{n:,} upsert WriteBatch ÷ floor's first run",
                median(upsert.connector),
                upsert.floor[0],
            )
        )
        figures.append(
            (
                "peak RSS, connector ÷ bare engine (GiB)",
                max(upsert.connector_memory),
                max(upsert.floor_memory),
            )
        )
        upsert_median = median(upsert.connector)

        # Parquet batch files of the same rows.
        upsert_parquet = files.write(upsert_rows, parquet=True)
        parquet_request = bench.request(target, replace=[upsert_parquet])
        parquet: list[float] = []
        csv: list[float] = []
        for _ in range(args.runs):  # alternated, like the floor comparisons
            for times, engine, req in (
                (parquet, bench.parquet, parquet_request),
                (csv, bench.csv, request),
            ):
                times.append(bench.timed_write(engine, req))
                bench.rollback(target, base)
        figures.append((f"Parquet {n:,} upsert ÷ CSV {n:,} upsert", median(parquet), median(csv)))

        # 2. Mixed: 60 % replace (half new), 25 % update (half the columns unmodified), 15 % delete.
        ids = list(range(n))
        rng.shuffle(ids)
        # Disjoint key sets (the floor runs without the fold): half the replaced keys are new.
        replace_ids = [i if k % 2 else n + i for k, i in enumerate(ids[: n * 6 // 10])]
        update_ids = ids[n * 6 // 10 : n * 85 // 100]
        delete_ids = ids[n * 85 // 100 :]
        mixed = bench.request(
            target,
            replace=[files.write([row(i, rng) for i in replace_ids])],
            update=[files.write([update_row(i, rng) for i in update_ids])],
            delete=[files.write([row(i, rng) for i in delete_ids])],
        )
        plan = plan_write_batch(mixed, target, catalog=bench.config.catalog, target=SPARK_ICEBERG)
        both = bench.compare(lambda: bench.csv.apply({}, mixed), plan, args.runs, target, base)
        figures.append(
            (f"{n:,} mixed WriteBatch ÷ floor", median(both.connector), median(both.floor))
        )

        # 3. History: N new versions on N versions (an earliest-start file and the versions),
        # complete (the full-versions form) and with half the columns unmodified (the
        # filled-versions form, which reads each key's newest surviving version to fill them).
        history = bench.table("history", HISTORY)
        hist_header = [c.name for c in HISTORY]
        start1, start2 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
        load = [[*row(i, rng)[:-1], start1, TMAX, "true"] for i in range(n)]
        history_request = WriteHistoryBatchRequest(
            schema=SCHEMA,
            table=history,
            earliest_start_files=(
                files.write([[str(i), start1] for i in range(n)], ["id", "_fivetran_start"]),
            ),
            files=BatchFiles(
                replace=(files.write(load, hist_header),), params=PARAMS, keys=files.keys
            ),
        )
        bench.csv.apply({}, history_request)
        base_history = bench.snapshot(history)
        earliest = files.write([[str(i), start2] for i in range(n)], ["id", "_fivetran_start"])
        complete = [[*row(i, rng, SYNCED2)[:-1], start2, TMAX, "true"] for i in range(n)]
        partial = [[*update_row(i, rng)[:-1], start2, TMAX, "true"] for i in range(n)]
        for label, form, kind, rows in (
            ("complete", Form.FULL_VERSIONS, "replace", complete),
            ("half unmodified", Form.FILLED_VERSIONS, "update", partial),
        ):
            history_request = WriteHistoryBatchRequest(
                schema=SCHEMA,
                table=history,
                earliest_start_files=(earliest,),
                files=BatchFiles(
                    params=PARAMS,
                    keys=files.keys,
                    **{kind: (files.write(rows, hist_header),)},  # type: ignore[arg-type]
                ),
            )
            hist_plan = plan_write_history_batch(
                history_request, history, catalog=bench.config.catalog, target=SPARK_ICEBERG
            )
            both = bench.compare(
                functools.partial(bench.csv.apply, {}, history_request),
                hist_plan,
                args.runs,
                history,
                base_history,
                form=form,
            )
            figures.append(
                (
                    f"{n:,}-version WriteHistoryBatch ({label}) ÷ {n:,} upsert WriteBatch",
                    median(both.connector),
                    upsert_median,
                )
            )
            figures.append(
                (
                    f"{n:,}-version WriteHistoryBatch ({label}) ÷ its floor",
                    median(both.connector),
                    median(both.floor),
                )
            )

        if args.writes_only:
            print_figures(figures)
            print(f"(medians of {args.runs} warm runs, alternated; one run: compare ratios)")
            return

        # 4. Small batches (100 replace, 10 update, 10 delete) on a big and a 10x smaller table,
        # with sequential and with random keys (``small_batch``).
        small_p50: dict[tuple[str, int], float] = {}
        small_floor: dict[tuple[str, int], float] = {}
        for size in (big_table // 10, big_table):
            table = bench.table(f"small_{size}")
            bench.csv.apply(
                {}, bench.request(table, replace=[files.write([row(i, rng) for i in range(size)])])
            )
            start = bench.snapshot(table)
            for pattern in PATTERNS:
                # One batch per pattern and size (a fresh batch per run would need a fresh
                # floor staging per run); the runs alternate connector and floor.
                small = bench.request(table, **small_batch(files, pattern, size, rng))
                plan = plan_write_batch(
                    small, table, catalog=bench.config.catalog, target=SPARK_ICEBERG
                )
                both = bench.compare(
                    functools.partial(bench.csv.apply, {}, small),
                    plan,
                    args.small_runs,
                    table,
                    start,
                    # The floor reads the whole table: run between the connector's runs it
                    # would leave each of them a heap to collect that a sync's small batches,
                    # which follow one another, do not leave.
                    alternate=False,
                )
                small_p50[pattern, size] = median(both.connector)
                small_floor[pattern, size] = median(both.floor)
        for pattern in PATTERNS:
            big, small = (pattern, big_table), (pattern, big_table // 10)
            figures.append(
                (
                    f"small batch p50 at {big_table:,} rows ÷ bare engine, {pattern} keys",
                    small_p50[big],
                    small_floor[big],
                )
            )
            figures.append(
                (
                    f"small batch p50 at {big_table:,} ÷ at {big_table // 10:,} rows, "
                    f"{pattern} keys",
                    small_p50[big],
                    small_p50[small],
                )
            )

        # 5. Deferred write mode against merge mode.
        figures += deferred_figures(bench, deferred_sizes, args.small_runs, deferred_batches, rng)

        # 6. Growth: one upsert (into an empty table) per size, time and peak memory.
        growth_lines = []
        for size in growth:
            table = bench.table(f"growth_{size}")
            path = files.write([row(i, rng) for i in range(size)])
            reset_peak()
            seconds = bench.timed_write(bench.csv, bench.request(table, replace=[path]))
            growth_lines.append((size, seconds, peak_gib()))

        print_figures(figures)
        print(
            f"decrypt + decompress + parse | {plain / parse:.0f} MB/s of CSV ({parse:.2f} s) | | "
        )
        print(
            f"... + typing (typed_decode) | {plain / (parse + typing):.0f} MB/s "
            f"({typing:.2f} s typing) | | "
        )
        print(f"... as staged (typed_csv) | {plain / staged:.0f} MB/s ({staged:.2f} s) | | ")
        print()
        print("growth: rows | upsert into empty table (s) | peak RSS of the process tree (GiB)")
        for size, seconds, memory in growth_lines:
            print(f"{size:,} | {seconds:.2f} | {memory:.2f}")
        print(
            f"(medians of {args.runs} warm runs; small batches: {args.small_runs} runs; "
            "one run: compare ratios, not absolute times)"
        )


if __name__ == "__main__":
    main()
