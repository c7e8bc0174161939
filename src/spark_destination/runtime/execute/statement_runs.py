"""Which MERGE statements this Spark application has run, and so what each runs with: Spark's
generated code (whole-stage code generation) or not (``merge_settings``).

A MERGE's whole-stage generated classes are its own (they depend on its plan and the table's
columns), so the first runs of a statement in a JVM execute them while HotSpot is still
compiling them; without generated code, Spark's operators run their own code, which every
earlier statement has warmed. Once a statement has been run, the trade turns: the same write
runs 10-14 % faster with generated code (docs/benchmarks.md, "JVM and Spark settings"). The
run that first generates a statement's classes pays for compiling them in
proportion to the rows it processes (1M rows: 1.6-2.9 s more; a 120-row sync: nothing
measurable), so a statement switches on a small run only, and keeps generated code from then
on, whatever the size. The table's size needs no rule of its own: warm, generated code was
faster at every size measured, from 1,000 rows (4.6-17.7 %), and a 20-row table's switch cost
nothing measurable (same section).

Statements are known by a digest of their text (the text holds no row values: they are bound
to parameter markers), per Spark application (a new JVM has compiled nothing), at most
``TRACKED_STATEMENTS`` of them, the least recently run forgotten first.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Spark's switch of whole-stage code generation.
WHOLE_STAGE_CODEGEN_CONF: Final = "spark.sql.codegen.wholeStage"
# What the batch and history MERGEs run with until they switch to generated code (each setting
# unless the operator set it). Whole-stage code generation off: a MERGE's generated classes
# are its own (they depend on the table's columns), so the first big MERGE of a set of columns
# in a JVM ran mostly on code HotSpot was still compiling (a fresh server's first 1M-version
# history MERGE: 14.4-15.2 s, 12.7-13.3 s of it compiling). Without it Spark's operators run
# their own code, shared by every table and warmed by every MERGE: 11.5-12.3 s with 6.3-7.0 s
# of compiling. A merge flush, DDL and maintenance keep Spark's default.
COLD_MERGE_SETTINGS: Final[Mapping[str, str]] = {WHOLE_STAGE_CODEGEN_CONF: "false"}
# Runs of a statement without generated code before it may switch: a statement run once (a
# one-off load, a migration's copy) never pays for generating classes it will not run again.
COLD_RUNS: Final = 1
# The most rows a run may process to be the one that switches a statement to generated code.
SWITCH_ROWS: Final = 100_000
# Statements remembered per application (digests of 16 bytes).
TRACKED_STATEMENTS: Final = 4096


def merge_settings(
    session: SparkSession, sql: str, rows: int | None, *, what: str
) -> dict[str, str]:
    """What a MERGE of ``rows`` (None: not known) runs with on ``session``:
    ``COLD_MERGE_SETTINGS`` until its application has run the statement and a small batch of it
    has switched it to generated code; nothing of its own after. Counts this run."""
    try:
        application = session.sparkContext.applicationId
    except Exception:  # noqa: BLE001 - not knowing the JVM, run as a cold statement
        log.debug("no Spark application id", exc_info=True)
        return dict(COLD_MERGE_SETTINGS)
    run = RUNS.run(application, sql, rows)
    if run.switched:
        log.info(
            "%s: this statement ran before in this JVM: with whole-stage code generation "
            "from now on (this run compiles its generated code)",
            what,
        )
    return {} if run.generated else dict(COLD_MERGE_SETTINGS)


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a statement: whether it runs with generated code, and whether it is the run
    that turned it on."""

    generated: bool
    switched: bool


class StatementRuns:
    """The statements one process's Spark application has run (thread-safe: requests on
    different tables run side by side)."""

    def __init__(self, limit: int = TRACKED_STATEMENTS) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._application: str | None = None
        # digest -> (runs so far, whether it switched to generated code)
        self._runs: OrderedDict[bytes, tuple[int, bool]] = OrderedDict()

    def run(self, application: str, text: str, rows: int | None) -> Run:
        """Count a run of ``text`` by ``application`` processing ``rows`` (None: not known, as
        for a big batch); how it runs. Generated code from the first run of at most
        ``SWITCH_ROWS`` rows after ``COLD_RUNS`` runs without it."""
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        with self._lock:
            if application != self._application:
                self._application = application
                self._runs.clear()
            runs, generated = self._runs.pop(digest, (0, False))
            switched = (
                not generated and runs >= COLD_RUNS and rows is not None and rows <= SWITCH_ROWS
            )
            generated = generated or switched
            self._runs[digest] = (runs + 1, generated)
            while len(self._runs) > self._limit:
                self._runs.popitem(last=False)
            return Run(generated=generated, switched=switched)


# The process's Spark application's statements (one SparkContext per process).
RUNS: Final = StatementRuns()
