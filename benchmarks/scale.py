"""Lake-scale benchmark: small batches on large tables that also received big merges,
per table layout and Iceberg format version. ``bench.py --scale`` runs it; it prints figures and
asserts nothing.

For each table size S, candidate (layout, format version) and key pattern it builds one table:

1. CreateTable through the connector with the candidate's configuration (``table_layout``,
   ``row_group_size``/``bucket_count``, ``format_version``): the table gets that layout;
2. a load of S - N/2 + 0.15 N rows by Spark SQL (``INSERT … SELECT`` of generated rows: the
   table's write order applies), then two big bare-engine MERGEs of N = min(1M, S/2) rows: an
   upsert (half the keys new) and a mixed batch (25 % updates, 15 % deletes): about S rows,
   merge-on-read delete files included, as a table that has lived a little;
3. a full-table scan (``SELECT count(*), sum(hash(*))``, median of 3) and ``--small-runs``
   small batches through the connector (100 replace, 10 update with half the columns
   unmodified, 10 delete: ``WriteBatch`` requests), each from the same table state (rolled
   back in between): p50, and what the MERGE's scan of the target read (files kept and
   skipped, delete files, sizes, rows, bytes read by the process).

Key patterns: ``random`` (keys are a permutation of the row numbers: neither insertion nor key
order says where a key is; a batch's keys fall anywhere, half its upserts new) and
``sequential`` (keys are row numbers in insertion order; upserts append above the largest key,
changes hit the newest 1 %).

``--aging N`` then sends N random-key small batches into the smallest table of each
``--aging-candidates`` entry, once with automatic maintenance at its defaults and once without
(``--aging-modes``), and compares the full scan and the small batch after them with before them.

The machine this ran on may be loaded: candidates alternate within a run, figures are medians,
and only ratios within one run compare.
"""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, Table
from spark_destination.core.requests import CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.quoting import qualified, string_literal
from spark_destination.engine import auto_maintenance
from spark_destination.engine.engine import Engine
from spark_destination.runtime.execute.scan_metrics import ScanMetrics

# One bijection of row numbers onto keys: i * A mod M (M prime, A a primitive root), so a
# random-key table's keys are distinct, spread over [0, M) and computable on both sides.
PERMUTATION_MODULUS = 2_147_483_647
PERMUTATION_FACTOR = 48_271
# The table the warm-up writes to.
WARM_UP_ROWS = 20_000
# The largest big merge (the 1M-row batches of docs/benchmarks.md).
BIG_MERGE_ROWS = 1_000_000
# Row generator: the bench's 12 columns, typed as the connector stores them. ``{key}`` is the
# key of row number ``id``.
GENERATE = """SELECT {key} AS id, CAST(id % 1000 AS INT) AS qty,
 CAST(id % 100000 / 7 AS DECIMAL(18,4)) AS price, rand(7) AS score,
 concat('customer number ', id) AS name,
 element_at(array('Berlin', 'Lisbon', 'Sao Paulo', 'NY', 'Hague'), CAST(id % 5 + 1 AS INT)) AS city,
 date_add(DATE'2024-01-01', CAST(id % 300 AS INT)) AS day, id % 2 = 0 AS active,
 TIMESTAMP'2024-05-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id % 100000) AS updated_at,
 IF(id % 3 = 0, NULL, 'note') AS note, TIMESTAMP'2024-06-01 12:00:00' AS _fivetran_synced,
 false AS _fivetran_deleted{extra} FROM range({start:d}, {end:d})"""
RANDOM_KEY = f"pmod(id * {PERMUTATION_FACTOR:d}, {PERMUTATION_MODULUS:d})"
INSERT = "INSERT INTO {table} {select}"
UPSERT = """MERGE INTO {table} AS t USING ({select}) AS s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *"""
MIXED = """MERGE INTO {table} AS t USING ({updates} UNION ALL {deletes}) AS s ON t.id = s.id
WHEN MATCHED AND s.op = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET t.qty = s.qty + 1, t.score = s.score,
 t._fivetran_synced = TIMESTAMP'2024-07-01 00:00:00'"""
FULL_SCAN = "SELECT count(*), sum(hash(*)) FROM {table}"
ROLLBACK = "CALL {catalog}.system.rollback_to_snapshot({table}, {snapshot:d})"
PATTERNS = ("random", "sequential")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A layout under test, named ``layout[-size or -buckets]/version[/deferred]``
    (``sorted-512k/2``, ``bucketed-64/3``, ``plain/2``, ``sorted/2/deferred``). With
    ``/deferred`` the small batches run in deferred write mode with no timer: what is timed is
    the append a sync waits for; the flush that later folds many of them is ``--deferred``'s."""

    name: str

    @property
    def configuration(self) -> dict[str, str]:
        shape, _, rest = self.name.partition("/")
        version, _, mode = rest.partition("/")
        layout, _, detail = shape.partition("-")
        configuration = {"table_layout": layout, "format_version": version or "2"}
        if mode:
            configuration |= {"write_mode": mode, "merge_interval_ms": "-1"}
        if detail and layout == "bucketed":
            configuration["bucket_count"] = detail
        elif detail:
            configuration["row_group_size"] = detail
        parse_config(configuration)  # fails early on a typo
        return configuration


@dataclass(slots=True)
class TableFigures:
    size: int
    candidate: str
    pattern: str
    rows: int = 0
    data_files: int = 0
    delete_files: int = 0
    table_bytes: int = 0
    load_seconds: float = 0.0
    upsert_seconds: float = 0.0
    mixed_seconds: float = 0.0
    scan_seconds: float = 0.0
    scan_runs: list[float] = field(default_factory=list)
    small_seconds: list[float] = field(default_factory=list)
    merge_seconds: list[float] = field(default_factory=list)
    scans: list[dict[str, Any]] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return statistics.median(self.small_seconds)

    def scan_median(self, name: str) -> float:
        return statistics.median(float(s[name] or 0) for s in self.scans) if self.scans else 0.0


@dataclass(slots=True)
class AgingFigures:
    candidate: str
    maintenance: bool
    batches: int
    scan_before: float = 0.0
    scan_after: float = 0.0
    small_before: float = 0.0
    small_after: float = 0.0
    seconds: float = 0.0
    files_before: tuple[int, int] = (0, 0)
    files_after: tuple[int, int] = (0, 0)


class Keys:
    """Row numbers -> keys for a pattern, and which row numbers the table holds."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.low = 0  # rows [low, high) exist, less ``deleted``
        self.high = 0
        self.deleted: set[int] = set()

    def key(self, i: int) -> int:
        if self.pattern == "random":
            return i * PERMUTATION_FACTOR % PERMUTATION_MODULUS
        return i

    @property
    def sql_key(self) -> str:
        return RANDOM_KEY if self.pattern == "random" else "id"

    def existing(self, rng: random.Random) -> int:
        while True:
            i = rng.randrange(self.low, self.high)
            if i not in self.deleted:
                return i


@dataclass(frozen=True, slots=True)
class Kit:
    """What the scale runs take from ``bench.py``: its table's columns and schema, and its
    batch-row makers (``row``, ``update_row``)."""

    columns: tuple[Column, ...]
    schema: str
    row: Callable[[int, random.Random], list[str]]
    update_row: Callable[[int, random.Random], list[str]]


class Scale:
    def __init__(self, bench: Any, args: Any, kit: Kit) -> None:
        self.bench = bench
        self.args = args
        self.kit = kit
        self.session = bench.session
        self.engine: Engine = bench.csv
        self.catalog = bench.config.catalog
        self.rng = random.Random(23)
        self.count = 0

    # --- building -----------------------------------------------------------------------

    def name(self, table: Table) -> str:
        return qualified(self.catalog, self.bench_schema, table.name)

    @property
    def bench_schema(self) -> str:
        return self.kit.schema

    def sql(self, text: str) -> list[Any]:
        return self.session.sql(text).collect()

    def select(self, keys: Keys, start: int, end: int, extra: str = "") -> str:
        return GENERATE.format(key=keys.sql_key, start=start, end=end, extra=extra)

    def build(
        self, size: int, candidate: Candidate, pattern: str
    ) -> tuple[Table, Keys, TableFigures]:
        self.count += 1
        table = Table(name=f"scale_{self.count}", columns=self.kit.columns)
        self.engine.apply(
            candidate.configuration,
            CreateTableRequest(schema=self.bench_schema, table=table),
        )
        figures = TableFigures(size=size, candidate=candidate.name, pattern=pattern)
        keys = Keys(pattern)
        big = min(BIG_MERGE_ROWS, size // 2)
        deletes, updates = big * 15 // 100, big * 25 // 100
        load = size - big // 2 + deletes
        name = self.name(table)
        figures.load_seconds = timed(
            lambda: self.sql(INSERT.format(table=name, select=self.select(keys, 0, load)))
        )
        keys.high = load
        # Upsert: the newest half of the loaded rows again, and as many new ones.
        upsert = self.select(keys, load - big // 2, load + big // 2)
        figures.upsert_seconds = timed(lambda: self.sql(UPSERT.format(table=name, select=upsert)))
        keys.high = load + big // 2
        # Mixed: the oldest rows deleted, the next ones updated.
        mixed = MIXED.format(
            table=name,
            updates=self.select(keys, deletes, deletes + updates, ", 'update' AS op"),
            deletes=self.select(keys, 0, deletes, ", 'delete' AS op"),
        )
        figures.mixed_seconds = timed(lambda: self.sql(mixed))
        keys.low = deletes
        self.describe(table, figures)
        return table, keys, figures

    def describe(self, table: Table, figures: TableFigures) -> None:
        files = self.session.newSession().table(self.name(table) + ".files")
        counts = {
            int(row[0]): (int(row[1]), int(row[2] or 0))
            for row in files.groupBy("content")
            .agg({"*": "count", "file_size_in_bytes": "sum"})
            .select("content", "count(1)", "sum(file_size_in_bytes)")
            .collect()
        }
        figures.data_files = counts.get(0, (0, 0))[0]
        figures.delete_files = sum(n for content, (n, _) in counts.items() if content != 0)
        figures.table_bytes = sum(b for _, b in counts.values())
        figures.rows = int(self.sql(FULL_SCAN.format(table=self.name(table)))[0][0])

    def full_scan(self, table: Table, runs: int = 3) -> float:
        name = self.name(table)
        return statistics.median(
            timed(lambda: self.sql(FULL_SCAN.format(table=name))) for _ in range(runs)
        )

    def snapshot(self, table: Table) -> int:
        """The current snapshot (the newest made current: rollbacks leave newer ones behind)."""
        history = self.session.newSession().table(self.name(table) + ".history")
        return int(history.orderBy(history["made_current_at"].desc()).first()["snapshot_id"])

    def rollback(self, table: Table, snapshot: int) -> None:
        identifier = string_literal(qualified(self.bench_schema, table.name))
        self.sql(ROLLBACK.format(catalog=self.catalog, table=identifier, snapshot=snapshot))

    # --- small batches ------------------------------------------------------------------

    def small_request(self, table: Table, keys: Keys) -> WriteBatchRequest:
        row, update_row = self.kit.row, self.kit.update_row
        files, rng = self.bench.files, self.rng
        if keys.pattern == "sequential":
            upserts = [keys.key(i) for i in range(keys.high, keys.high + 100)]
            changed_rows: list[int] = []
            newest = max(keys.low, keys.high - max(1, (keys.high - keys.low) // 100))
            while len(changed_rows) < 20:
                i = rng.randrange(newest, keys.high)
                if i not in changed_rows and i not in keys.deleted:
                    changed_rows.append(i)
        else:
            # Anywhere in twice the row numbers held: about half the upserts are new keys.
            span = keys.high - keys.low
            upsert_rows = rng.sample(range(keys.low, keys.low + 2 * span), 100)
            upserts = [keys.key(i) for i in upsert_rows]
            taken = set(upsert_rows)
            changed_rows = []
            while len(changed_rows) < 20:
                i = keys.existing(rng)
                if i not in taken:
                    taken.add(i)
                    changed_rows.append(i)
        changed = [keys.key(i) for i in changed_rows]
        batch = {
            "replace": [files.write([row(k, rng) for k in upserts])],
            "update": [files.write([update_row(k, rng) for k in changed[:10]])],
            "delete": [files.write([row(k, rng) for k in changed[10:]])],
        }
        return self.bench.request(table, **batch)

    def small_batch(
        self, table: Table, keys: Keys, configuration: dict[str, str]
    ) -> tuple[float, ScanMetrics | None, float]:
        """Seconds, the MERGE's scan metrics and the MERGE statement's own seconds."""
        request = self.small_request(table, keys)
        started = time.perf_counter()
        result = self.engine.apply(configuration, request)
        seconds = time.perf_counter() - started
        outcome = result.outcome
        scans = outcome.scans if outcome else []
        merge = sum(s for step, s in (outcome.statements if outcome else []) if "merge" in step)
        return seconds, (scans[0] if scans else None), merge

    def small_batch_round(
        self, table: Table, keys: Keys, candidate: Candidate, figures: TableFigures, start: int
    ) -> None:
        """One small batch from the table state ``start``, which it is rolled back to."""
        configuration = {**candidate.configuration, **auto_maintenance.OFF}
        seconds, scan, merge = self.small_batch(table, keys, configuration)
        figures.small_seconds.append(seconds)
        figures.merge_seconds.append(merge)
        if scan is not None:
            figures.scans.append(dataclasses.asdict(scan))
        self.rollback(table, start)

    # --- aging --------------------------------------------------------------------------

    def aging(
        self, table: Table, keys: Keys, candidate: Candidate, maintenance: bool, batches: int
    ) -> AgingFigures:
        figures = AgingFigures(candidate=candidate.name, maintenance=maintenance, batches=batches)
        start = self.snapshot(table)
        configuration = dict(candidate.configuration)
        if not maintenance:
            configuration.update(auto_maintenance.OFF)
        figures.scan_before = self.full_scan(table)
        figures.small_before = self.p50_at(table, keys, candidate)
        before = TableFigures(size=0, candidate="", pattern="")
        self.describe(table, before)
        figures.files_before = (before.data_files, before.delete_files)
        began = time.perf_counter()
        for _ in range(batches):
            self.small_batch(table, keys, configuration)
        self.engine.wait_for_maintenance()
        figures.seconds = time.perf_counter() - began
        after = TableFigures(size=0, candidate="", pattern="")
        self.describe(table, after)
        figures.files_after = (after.data_files, after.delete_files)
        figures.scan_after = self.full_scan(table)
        figures.small_after = self.p50_at(table, keys, candidate)
        self.rollback(table, start)
        return figures

    def p50_at(self, table: Table, keys: Keys, candidate: Candidate) -> float:
        here = self.snapshot(table)
        configuration = {**candidate.configuration, **auto_maintenance.OFF}
        seconds = []
        for _ in range(self.args.small_runs):
            seconds.append(self.small_batch(table, keys, configuration)[0])
            self.rollback(table, here)
        return statistics.median(seconds)


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def run_scale(bench: Any, args: Any, kit: Kit) -> None:
    sizes = [int(s) for s in args.scale_sizes.split(",")]
    candidates = [Candidate(c) for c in args.candidates.split(",")]
    patterns = [p for p in args.patterns.split(",") if p in PATTERNS]
    scale = Scale(bench, args, kit)
    tables: list[TableFigures] = []
    aging: list[AgingFigures] = []
    print(
        "size | candidate | keys | rows | data/delete files | MB | load s | upsert s | mixed s | "
        "full scan s | small p50 s (its MERGE) | files kept/skipped | delete files read | "
        "MB of kept files | MB read | rows read",
        flush=True,
    )
    # Warm-up, not counted: the JVM's first MERGEs and scans of each shape pay JIT start-up.
    for candidate in candidates:
        table, keys, _ = scale.build(WARM_UP_ROWS, candidate, "random")
        start = scale.snapshot(table)
        for _ in range(3):
            scale.small_batch_round(table, keys, candidate, TableFigures(0, "", ""), start)
        scale.full_scan(table, runs=1)
        scale.sql("DROP TABLE " + scale.name(table) + " PURGE")
    for size in sizes:
        for pattern in patterns:
            built = [(c, *scale.build(size, c, pattern)) for c in candidates]
            starts = [scale.snapshot(table) for _, table, _, _ in built]
            # Measured in rounds that visit every candidate in turn: load from other jobs on
            # the machine then favours none of them.
            for _ in range(3):
                for _, table, _, figures in built:
                    figures.scan_runs.append(scale.full_scan(table, runs=1))
            for _ in range(args.small_runs):
                for (candidate, table, keys, figures), start in zip(built, starts, strict=True):
                    scale.small_batch_round(table, keys, candidate, figures, start)
            for candidate, table, keys, figures in built:
                figures.scan_seconds = statistics.median(figures.scan_runs)
                tables.append(figures)
                print(line(figures), flush=True)
                if (
                    args.aging
                    and size == sizes[0]
                    and pattern == "random"
                    and (candidate.name in args.aging_candidates.split(","))
                ):
                    modes = args.aging_modes.split(",")
                    if not set(modes) <= {"with", "without"}:
                        raise SystemExit(f"--aging-modes: with, without (not {modes})")
                    for maintenance in (mode == "with" for mode in modes):
                        result = scale.aging(table, keys, candidate, maintenance, args.aging)
                        aging.append(result)
                        print(aging_line(result), flush=True)
            for _, table, _, _ in built:
                scale.sql("DROP TABLE " + scale.name(table) + " PURGE")
    summary(tables, aging, sizes)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "tables": [dataclasses.asdict(t) for t in tables],
                    "aging": [dataclasses.asdict(a) for a in aging],
                },
                indent=1,
            )
        )
    if args.plot:
        plot(tables, args.plot)


def line(f: TableFigures) -> str:
    kept = f.scan_median("data_files")
    skipped = f.scan_median("skipped_data_files")
    return (
        f"{f.size:,} | {f.candidate} | {f.pattern} | {f.rows:,} | "
        f"{f.data_files}/{f.delete_files} | "
        f"{f.table_bytes / 1e6:.0f} | {f.load_seconds:.1f} | {f.upsert_seconds:.1f} | "
        f"{f.mixed_seconds:.1f} | {f.scan_seconds:.2f} | {f.p50:.2f} "
        f"({statistics.median(f.merge_seconds or [0]):.2f}) | {kept:.0f}/{skipped:.0f} | "
        f"{f.scan_median('delete_files'):.0f} | {f.scan_median('data_file_bytes') / 1e6:.1f} | "
        f"{f.scan_median('bytes_read') / 1e6:.1f} | {f.scan_median('rows'):,.0f}"
    )


def aging_line(a: AgingFigures) -> str:
    mode = "with" if a.maintenance else "without"
    return (
        f"aging: {a.candidate}, {a.batches} small batches {mode} automatic maintenance "
        f"({a.seconds:.0f} s): full scan {a.scan_before:.2f} -> {a.scan_after:.2f} s "
        f"(x{a.scan_after / a.scan_before:.2f}); small batch p50 {a.small_before:.2f} -> "
        f"{a.small_after:.2f} s (x{a.small_after / a.small_before:.2f}); data/delete files "
        f"{a.files_before[0]}/{a.files_before[1]} -> {a.files_after[0]}/{a.files_after[1]}"
    )


def summary(
    tables: Sequence[TableFigures], aging: Sequence[AgingFigures], sizes: list[int]
) -> None:
    print()
    if len(sizes) >= 2:
        small, big = sizes[0], sizes[-1]
        print(
            f"small batch p50 at {big:,} ÷ at {small:,} rows | bytes read ÷ table bytes at {big:,}"
        )
        print(
            "candidate | keys | p50 ratio | MB read / MB of table | MB of kept files / MB of table"
        )
        for f in tables:
            if f.size != big:
                continue
            base = next(
                (
                    t
                    for t in tables
                    if t.size == small and (t.candidate, t.pattern) == (f.candidate, f.pattern)
                ),
                None,
            )
            ratio = f"{f.p50 / base.p50:.2f}" if base else "?"
            read = f.scan_median("bytes_read") / f.table_bytes
            kept = f.scan_median("data_file_bytes") / f.table_bytes
            print(f"{f.candidate} | {f.pattern} | {ratio} | {read:.3f} | {kept:.3f}")
    for a in aging:
        print(aging_line(a))
    print("(one run on a possibly loaded machine: compare within the run; medians)")


def plot(tables: Sequence[TableFigures], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for candidate in dict.fromkeys(t.candidate for t in tables):
        for pattern, style in (("random", "-o"), ("sequential", "--s")):
            points = sorted(
                (t.size, t.p50) for t in tables if (t.candidate, t.pattern) == (candidate, pattern)
            )
            if points:
                axes.plot(*zip(*points, strict=True), style, label=f"{candidate}, {pattern} keys")
    axes.set_xscale("log")
    axes.set_xlabel("table rows")
    axes.set_ylabel("small batch p50 (s), 120 rows through the connector")
    axes.set_title("Small-batch latency against table size, per layout and write mode")
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")
