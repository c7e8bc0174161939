"""Deferred write mode in the server: per table, what is pending, and when it is flushed.

The engine calls these methods holding the table's lock, so a flush and a WriteBatch of one
table never interleave; different tables have different locks and flush independently. Per
table the process keeps (and changes only under that lock) the intermediate table's name and
layout, how many rows and batches are pending, and the next counter and batch number. It reads
them from the intermediate table the first time a request touches the table (the first look
after a start or a failure), so rows left pending by a stopped or killed process are found:
they are flushed before that request runs.

A flush runs (``runtime.execute.deferred.run_flush``) on the timer or the record threshold
(``flush_scheduler``), before any request that needs the table's true contents or schema
(``settle``: every request but a deferred WriteBatch and DescribeTable, maintenance included),
on demand (``spark-destination flush``) and at a graceful stop (``close``). Each flush logs
the table, the batches and rows it folded and its time; never values or keys.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from spark_destination.core.config import DestinationConfig
from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.requests import WriteBatchRequest
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.rendered import RenderedPlan
from spark_destination.engine.flush_scheduler import FlushScheduler, TableKey
from spark_destination.engine.planning import changes_table_of
from spark_destination.engine.table_format import catalog_of
from spark_destination.planner.deferred import (
    pending_layout,
    pending_ref,
    plan_deferred_write,
    plan_drop_pending,
    plan_expire_pending,
    plan_flush,
    plan_pending_stats,
)
from spark_destination.planner.ir import BATCH_MARKER, SEQ_BASE_MARKER, Plan, TableRef
from spark_destination.runtime.execute.deferred import FlushOutcome, read_pending, run_flush
from spark_destination.runtime.execute.executor import Batch, Executor, Outcome
from spark_destination.runtime.execute.restore import restored_on_failure

log = logging.getLogger(__name__)

# Commits to an intermediate table (appends, flush records, clean-ups) after which its old
# snapshots are expired, once a flush has emptied it.
EXPIRE_EVERY_COMMITS: Final = 50


@dataclass(slots=True, kw_only=True)
class _Pending:
    """One table's deferred state (changed only under the table's lock)."""

    ref: TableRef
    pending: TableRef
    # The latest configuration that touched the table: scheduled flushes run with it.
    config: DestinationConfig
    exists: bool = False
    layout: str | None = None
    rows: int = 0
    batches: int = 0
    next_seq: int = 0
    next_batch: int = 1
    # When the first pending batch was appended (the scheduler's clock); None: nothing pends.
    first_append: float | None = None
    # Rows found pending at the first look (left by another process): flushed before a write.
    recovered: bool = False
    # Read again from the intermediate table at the next touch (after a failure).
    stale: bool = True
    commits: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingRows:
    """A table's pending rows, for logs and the ``flush`` command."""

    table: TableRef
    rows: int
    batches: int


class DeferredWrites:
    def __init__(
        self,
        *,
        dialect_for: Callable[[DestinationConfig], Dialect],
        executor_for: Callable[[DestinationConfig], Executor],
        lock_for: Callable[[DestinationConfig, TableRef], threading.Lock],
        key_for: Callable[[DestinationConfig, TableRef], TableKey],
        committed: Callable[[DestinationConfig, TableRef, Executor], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._dialect_for = dialect_for
        self._executor_for = executor_for
        self._lock_for = lock_for
        self._key_for = key_for
        self._committed = committed
        self._clock = clock
        self._tables: dict[TableKey, _Pending] = {}
        self._guard = threading.Lock()
        self._scheduler = FlushScheduler(self._scheduled, clock=clock)

    # --- Called with the table's lock held ---------------------------------------------------

    def settle(self, executor: Executor, config: DestinationConfig, ref: TableRef) -> None:
        """Flush what is pending for ``ref`` (nothing to do for most tables: one look at the
        first touch, then none)."""
        if not self._may_have_pending(config, ref):
            return
        state = self._state(executor, config, ref)
        if state.rows:
            self._flush(executor, state, "before a request that needs the table as it is")

    def flush(
        self, executor: Executor, config: DestinationConfig, ref: TableRef
    ) -> FlushOutcome | None:
        """Flush ``ref`` now (``spark-destination flush``); None when nothing was pending."""
        state = self._state(executor, config, ref)
        if not state.exists:
            return None
        return self._flush(executor, state, "on demand")

    def write(
        self,
        executor: Executor,
        config: DestinationConfig,
        ref: TableRef,
        request: WriteBatchRequest,
        batch: Batch,
    ) -> Outcome | str:
        """A deferred WriteBatch: append the batch to the intermediate table (creating or
        replacing it as needed); the outcome, or why there was nothing to do."""
        state = self._state(executor, config, ref)
        current = executor.describe(ref)
        if state.rows and (
            state.recovered or (current is not None and state.layout != pending_layout(current))
        ):
            self._flush(executor, state, "left pending by an earlier process")
            current = executor.describe(ref)
        plan = plan_deferred_write(
            request,
            current,
            catalog=catalog_of(config),
            target=self._target(config),
            pending=state.pending,
            existing_layout=state.layout if state.exists else None,
            changes_table=changes_table_of(config),
        )
        if plan.noop_reason is not None:
            return plan.noop_reason
        assert current is not None  # planning refuses a missing table
        counters = {SEQ_BASE_MARKER: state.next_seq, BATCH_MARKER: state.next_batch}
        try:
            with restored_on_failure(executor.session, (state.pending,), executor.trail):
                outcome = executor.run(
                    self._render(plan, config), dataclasses.replace(batch, parameters=counters)
                )
        except BaseException:
            state.stale = True  # the append may or may not have committed: look again
            raise
        created = not state.exists or state.layout != pending_layout(current)
        state.exists, state.layout = True, pending_layout(current)
        state.commits = 1 if created else state.commits + 1
        state.rows += outcome.staged_rows
        state.batches += 1
        state.next_seq += outcome.staged_rows
        state.next_batch += 1
        if state.first_append is None:
            state.first_append = self._clock()
        log.info(
            "%s.%s: %d row(s) in %d batch(es) pending in %s",
            ref.schema,
            ref.name,
            state.rows,
            state.batches,
            state.pending.name,
        )
        self._scheduler.appended(
            self._key(config, ref, state.pending),
            rows=state.rows,
            first_append=state.first_append,
            interval_ms=config.merge_interval_ms,
            threshold=config.merge_records_threshold,
        )
        return outcome

    def discard(self, executor: Executor, config: DestinationConfig, ref: TableRef) -> None:
        """Drop ``ref``'s intermediate table: the table was dropped or renamed away (after
        ``settle`` flushed it, so nothing pending is lost)."""
        if not self._may_have_pending(config, ref):
            return
        state = self._state(executor, config, ref)
        if state.exists:
            executor.run(self._render(plan_drop_pending(state.pending), config))
        self._reset(state)

    # --- Scheduled and final flushes ---------------------------------------------------------

    def pending(self) -> list[PendingRows]:
        """Every table this process knows to have pending rows."""
        with self._guard:
            states = list(self._tables.values())
        return [PendingRows(table=s.ref, rows=s.rows, batches=s.batches) for s in states if s.rows]

    def wait_for_flushes(self, timeout: float | None = None) -> None:
        self._scheduler.wait_idle(timeout)

    def flush_pending(self) -> None:
        """Flush every table with pending rows now, as its timer would: under its lock, with
        the configuration that last touched it."""
        with self._guard:
            states = [s for s in self._tables.values() if s.rows]
        for state in states:
            self._locked_flush(state, "on demand")

    def close(self) -> None:
        """At a graceful stop: no more scheduled flushes; flush every table with pending rows
        and log what is left (names and counts only)."""
        self._scheduler.stop()
        with self._guard:
            states = [s for s in self._tables.values() if s.rows]
        for state in states:
            log.info(
                "stopping: %s.%s has %d row(s) in %d batch(es) pending; flushing",
                state.ref.schema,
                state.ref.name,
                state.rows,
                state.batches,
            )
            try:
                self._locked_flush(state, "at stop")
            except Exception as exc:
                log.warning("flushing %s.%s at stop failed (%s)", state.ref.schema,
                            state.ref.name, type(exc).__name__)  # fmt: skip
        left = self.pending()
        for item in left:
            log.warning(
                "stopped with %d row(s) in %d batch(es) pending for %s.%s: they are flushed "
                "by the next request to the table or by spark-destination flush",
                item.rows,
                item.batches,
                item.table.schema,
                item.table.name,
            )
        if not left:
            log.info("stopped with no rows pending")

    def _scheduled(self, key: TableKey) -> None:
        with self._guard:
            state = self._tables.get(key)
        if state is not None:
            self._locked_flush(state, "scheduled")

    def _locked_flush(self, state: _Pending, why: str) -> None:
        with self._lock_for(state.config, state.ref):
            executor = self._executor_for(state.config)
            current = self._state(executor, state.config, state.ref)
            if current.rows:
                self._flush(executor, current, why)

    # --- The state of one table --------------------------------------------------------------

    def _may_have_pending(self, config: DestinationConfig, ref: TableRef) -> bool:
        """False when no intermediate table can exist for ``ref`` (its name would be too long
        or refused by the catalog): merge mode then never looks for one."""
        try:
            pending_ref(ref, config.intermediate_table_prefix, target=self._target(config))
        except InvalidRequestError:
            return False
        return True

    def _target(self, config: DestinationConfig) -> Dialect:
        """The dialect on ``config``'s catalog (a Hive metastore refuses more names)."""
        return self._dialect_for(config).for_catalog(config.catalog_type)

    def _key(self, config: DestinationConfig, ref: TableRef, pending: TableRef) -> TableKey:
        return (*self._key_for(config, ref), pending.name)

    def _state(self, executor: Executor, config: DestinationConfig, ref: TableRef) -> _Pending:
        pending = pending_ref(ref, config.intermediate_table_prefix, target=self._target(config))
        key = self._key(config, ref, pending)
        with self._guard:
            state = self._tables.get(key)
            if state is None:
                state = self._tables[key] = _Pending(ref=ref, pending=pending, config=config)
        state.config = config
        if state.stale:
            self._look(executor, state)
        return state

    def _look(self, executor: Executor, state: _Pending) -> None:
        """Read the intermediate table (the first touch, or after a failure)."""
        (stats,) = self._render(plan_pending_stats(state.ref, state.pending), state.config)
        found = read_pending(executor, stats, state.pending)
        self._reset(state)
        if found is not None:
            counts = found.counts
            high = max(counts.high or -1, found.marker.high if found.marker else -1)
            # No layout recorded (not made by this destination): replaced at the next write.
            state.exists, state.layout = True, found.layout or ""
            state.rows, state.batches = counts.rows, counts.batches
            state.next_seq, state.next_batch = high + 1, (counts.last_batch or 0) + 1
            state.recovered = counts.rows > 0
            if counts.rows:
                state.first_append = self._clock()
                log.info(
                    "%s.%s: found %d row(s) in %d batch(es) pending in %s",
                    state.ref.schema,
                    state.ref.name,
                    counts.rows,
                    counts.batches,
                    state.pending.name,
                )
        state.stale = False

    def _reset(self, state: _Pending) -> None:
        next_seq = state.next_seq
        fresh = _Pending(ref=state.ref, pending=state.pending, config=state.config)
        for item in dataclasses.fields(_Pending):
            setattr(state, item.name, getattr(fresh, item.name))
        state.next_seq, state.stale = next_seq, False  # counters only grow
        self._scheduler.flushed(self._key(state.config, state.ref, state.pending))

    def _flush(self, executor: Executor, state: _Pending, why: str) -> FlushOutcome | None:
        current = executor.describe(state.ref)
        if current is None:
            # Dropped behind the destination's back (a Migrate drop flushes first): its pending
            # rows have no table to go to.
            log.warning(
                "%s.%s does not exist: dropping its intermediate table %s with %d pending row(s)",
                state.ref.schema,
                state.ref.name,
                state.pending.name,
                state.rows,
            )
            executor.run(self._render(plan_drop_pending(state.pending), state.config))
            self._reset(state)
            return None
        plan = plan_flush(state.ref, current, state.pending, target=self._target(state.config))
        try:
            outcome = run_flush(
                executor, self._render(plan, state.config), state.ref, state.pending
            )
        except BaseException:
            state.stale = True
            raise
        log.info(
            "%s.%s: merge flush (%s) folded %d batch(es), %d row(s) in %.2f s%s",
            state.ref.schema,
            state.ref.name,
            why,
            outcome.batches,
            outcome.rows,
            outcome.seconds,
            f" (and finished an interrupted flush of {outcome.completed_rows} row(s))"
            if outcome.completed_rows
            else "",
        )
        # The flush record and the clean-up; a clean-up of an interrupted flush.
        commits = state.commits + (2 if outcome.rows else 0) + (1 if outcome.completed_rows else 0)
        if outcome.high is not None:
            state.next_seq = max(state.next_seq, outcome.high + 1)
        self._reset(state)
        state.exists, state.layout = True, pending_layout(current)
        state.commits = commits
        if outcome.rows:
            self._committed(state.config, state.ref, executor)
        if state.commits >= EXPIRE_EVERY_COMMITS:
            self._expire(executor, state)
        return outcome

    def _expire(self, executor: Executor, state: _Pending) -> None:
        target = self._dialect_for(state.config)
        plan = plan_expire_pending(state.pending, now=datetime.now(UTC), target=target)
        try:
            executor.run(self._render(plan, state.config))
            state.commits = 0
        except Exception as exc:  # the intermediate table stays correct without it
            log.warning(
                "expiring old snapshots of %s failed (%s)", state.pending.name, type(exc).__name__
            )

    def _render(self, plan: Plan, config: DestinationConfig) -> RenderedPlan:
        return render_plan(plan, self._dialect_for(config))
