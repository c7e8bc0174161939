"""A MERGE statement runs without generated code until this Spark application has run it and a
small batch of it switches it on; then it keeps generated code whatever the size
(``statement_runs``; docs/benchmarks.md, "JVM and Spark settings")."""

from __future__ import annotations

from spark_destination.runtime.execute.statement_runs import (
    COLD_RUNS,
    SWITCH_ROWS,
    Run,
    StatementRuns,
)

APP = "local-1"
SMALL, BIG = 120, 1_000_000
COLD, SWITCH, WARM = Run(False, False), Run(True, True), Run(True, False)


def test_a_small_batch_switches_a_statement_after_its_cold_runs_and_it_stays_switched() -> None:
    runs = StatementRuns()
    seen = [runs.run(APP, "MERGE a", rows) for rows in [SMALL] * COLD_RUNS + [SMALL, BIG, SMALL]]
    assert seen == [COLD] * COLD_RUNS + [SWITCH, WARM, WARM]


def test_big_batches_never_switch_a_statement_and_a_later_small_one_does() -> None:
    runs = StatementRuns()
    big = [runs.run(APP, "MERGE a", rows) for rows in (BIG, SWITCH_ROWS + 1, None, BIG)]
    assert big == [COLD] * 4
    assert runs.run(APP, "MERGE a", SWITCH_ROWS) == SWITCH


def test_each_statement_text_counts_its_own_runs() -> None:
    runs = StatementRuns()
    for _ in range(COLD_RUNS):
        runs.run(APP, "MERGE a", SMALL)
    assert runs.run(APP, "MERGE b", SMALL) == COLD
    assert runs.run(APP, "MERGE a", SMALL) == SWITCH


def test_a_new_spark_application_has_run_nothing() -> None:
    runs = StatementRuns()
    for _ in range(COLD_RUNS + 1):
        runs.run(APP, "MERGE a", SMALL)
    assert runs.run("local-2", "MERGE a", SMALL) == COLD


def test_the_least_recently_run_statement_is_forgotten_first() -> None:
    runs = StatementRuns(limit=2)
    for text in ("MERGE a", "MERGE b", "MERGE a", "MERGE c"):  # b is the least recent: gone
        runs.run(APP, text, BIG)
    assert runs.run(APP, "MERGE a", SMALL) == SWITCH
    assert runs.run(APP, "MERGE b", SMALL) == COLD
