"""The destination's behaviour, independent of gRPC: plan -> render -> execute per request.

``Engine`` is what the server calls (and what tests and the demo call directly). It holds one
long-lived SparkSession (a process can have only one SparkContext) and gives each request its own
child session, so temp views of concurrent requests never collide. Requests on the same table
are serialised; different tables proceed in parallel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from spark_destination.core.config import (
    SERVER_ONLY_KEYS,
    CatalogType,
    DestinationConfig,
    Storage,
    TableFormat,
    WriteMode,
    parse_config,
)
from spark_destination.core.errors import (
    CommitRaceLostError,
    CommitUncertainError,
    ConfigurationError,
    ExecutionError,
    InvalidRequestError,
)
from spark_destination.core.model import Table
from spark_destination.core.requests import (
    DescribeTableRequest,
    MigrateRequest,
    TableChange,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
    target_of,
)
from spark_destination.core.warehouses import check_warehouse_allowed
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.rendered import RenderedPlan, Statement
from spark_destination.engine.auto_maintenance import MaintenanceScheduler, folded_too_much
from spark_destination.engine.deferred import DeferredWrites, PendingRows
from spark_destination.engine.earlier_names import EARLIER_PENDING_PREFIX, EarlierNames
from spark_destination.engine.planning import changes_table_of, plan_change
from spark_destination.engine.table_format import OTHER_DIALECTS, catalog_of, check_table_format
from spark_destination.planner.catalog_probe import ProbeStep, plan_catalog_probe
from spark_destination.planner.ir import (
    ListNamespacesOp,
    Plan,
    TableHealthOp,
    TableLayout,
    TableRef,
)
from spark_destination.planner.layout import configured_layout, with_layouts
from spark_destination.planner.maintenance import (
    FileAges,
    MaintenancePolicy,
    orphan_listing_cutoff,
    plan_maintenance,
)
from spark_destination.planner.migrate import migrate_tables, plan_migrate
from spark_destination.planner.tables import table_ref
from spark_destination.runtime.batch.staging import Transport
from spark_destination.runtime.batch.value_changes import ChangeCount
from spark_destination.runtime.execute import warehouse_lock
from spark_destination.runtime.execute.commits import CommitTrail, RequestIdentity
from spark_destination.runtime.execute.deferred import FlushOutcome, pending_tables
from spark_destination.runtime.execute.executor import Batch, Executor, Outcome
from spark_destination.runtime.execute.location_files import has_file_before
from spark_destination.runtime.execute.maintenance import (
    MaintenanceReport,
    run_maintenance,
    table_health,
)
from spark_destination.runtime.execute.restore import restored_on_failure
from spark_destination.runtime.execute.retry_policy import RetryBudget, Trouble
from spark_destination.runtime.execute.storage_probe import PROBE_FOLDER, probe_storage
from spark_destination.runtime.execute.table_layout import stored_layout
from spark_destination.runtime.execute.table_loader import location_of, spark_table
from spark_destination.runtime.spark.catalogs import unshared_warehouse_problem
from spark_destination.runtime.spark.delta_tables import attach as attach_delta_tables
from spark_destination.runtime.spark.provider import SessionProvider, settings_for

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Engine", "Result", "SessionProvider", "settings_for"]

log = logging.getLogger(__name__)

SCHEDULER_POOL = "spark.scheduler.pool"


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """What a request did, for logs and for the response (never row values)."""

    summary: str
    outcome: Outcome | None = None
    # bad_value_policy=null changed values: what the response's Warning says (no value, no key).
    warning: str | None = None


class Engine:
    """Plans, renders and executes requests.

    ``defaults`` fill configuration keys a request leaves empty (the ``serve`` command's flags).
    ``allowed_warehouses`` (the operator's, never a request's) limits the warehouses a request
    may name: each is a root path or URI; empty allows any.
    Every plan is rendered here, once, for ``dialect``; the runtime runs what was rendered.
    """

    def __init__(
        self,
        sessions: SessionProvider,
        *,
        defaults: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        dialect: Dialect = DEFAULT,
        allowed_warehouses: tuple[str, ...] = (),
    ) -> None:
        if not dialect.executable:
            raise ConfigurationError(
                f"dialect {dialect.name!r} cannot be executed by this server: {dialect.missing}"
            )
        self._dialect = dialect
        self._sessions = sessions
        self._earlier = EarlierNames()
        self._defaults = dict(defaults or {})
        self._transport = transport
        self._allowed_warehouses = allowed_warehouses
        self._table_locks: dict[tuple[str, ...], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._maintenance = MaintenanceScheduler(self._auto_maintain)
        self._deferred = DeferredWrites(
            dialect_for=self._dialect_of,
            executor_for=self._executor,
            lock_for=self._lock,
            key_for=self._key,
            committed=self._flushed,
        )

    @property
    def sessions(self) -> SessionProvider:
        return self._sessions

    def config(self, configuration: Mapping[str, str]) -> DestinationConfig:
        # A server-only key (the batch file format) is the server's: Capabilities announced it.
        given = {k: v for k, v in configuration.items() if v.strip() and k not in SERVER_ONLY_KEYS}
        config = parse_config({**self._defaults, **given})
        # The rules between keys (catalog, warehouse, storage, credentials) hold before
        # anything runs: a request, or the settings test, fails naming them.
        settings_for(config)
        check_table_format(config)
        check_warehouse_allowed(config.warehouse, self._allowed_warehouses)
        return config

    def _with_earlier_names(self, config: DestinationConfig, ref: TableRef) -> DestinationConfig:
        """``config`` with the earlier names of the destination's own tables where those
        tables exist (``engine.earlier_names``)."""
        warehouse = settings_for(config).catalog_spec.warehouse
        return self._earlier.config_for(lambda: self._executor(config), config, ref, warehouse)

    def _key(self, config: DestinationConfig, ref: TableRef) -> tuple[str, ...]:
        return (settings_for(config).catalog_spec.warehouse, ref.catalog, ref.schema, ref.name)

    def _lock(self, config: DestinationConfig, ref: TableRef) -> threading.Lock:
        key = self._key(config, ref)
        with self._locks_guard:
            return self._table_locks.setdefault(key, threading.Lock())

    def explain_failure(self, exc: Exception) -> Exception:
        """A request's failure as the user should see it (a dead JVM is said so)."""
        return self._sessions.explain(exc)

    def claim_warehouse(self, configuration: Mapping[str, str]) -> None:
        """Refuse a warehouse another server process uses (``runtime.execute.warehouse_lock``)."""
        _claim_warehouse(self.config(configuration))

    def _executor(
        self,
        config: DestinationConfig,
        kind: str = "request",
        batch_files: int | None = None,
        retries: RetryBudget | None = None,
    ) -> Executor:
        """A request's executor; ``kind`` and ``batch_files`` go into its commits' summaries;
        ``retries``: the request's retry budget when it plans more than once."""
        _claim_warehouse(config)  # one server process per warehouse
        session = self._sessions.for_request(config)
        if config.table_format is TableFormat.DELTA:
            attach_delta_tables(session, settings_for(config).catalog_spec)
        # Jobs of concurrent requests share the cluster fairly: each request thread submits to
        # its own FAIR scheduler pool (pools are created on first use; the thread names of
        # the server's bounded worker pool keep their number bounded).
        session.sparkContext.setLocalProperty(SCHEDULER_POOL, threading.current_thread().name)
        hold = functools.partial(self._hold, config, session)
        identity = RequestIdentity(kind=kind, batch_files=batch_files)
        return Executor(
            session, transport=self._transport, hold=hold, identity=identity, retries=retries
        )

    @contextlib.contextmanager
    def _hold(
        self,
        config: DestinationConfig,
        session: SparkSession,
        table: TableRef,
        trail: CommitTrail,
    ) -> Iterator[None]:
        """A table requests of other tables also write (the schema's changes table): locked
        for the rest of the request, and restored with the request's own table if it fails
        (a restore must not undo another request's commit, hence the lock)."""
        with self._lock(config, table), restored_on_failure(session, (table,), trail):
            yield

    def check_warehouse(self, configuration: Mapping[str, str]) -> None:
        """Start Spark with the configuration and check the warehouse can be used."""
        config = self.config(configuration)
        spec = settings_for(config).catalog_spec
        location = spec.local_warehouse
        if location is not None:
            try:
                os.makedirs(location, exist_ok=True)
            except OSError as exc:
                raise ConfigurationError(f"cannot create warehouse {location}: {exc}") from None
            if not os.access(location, os.W_OK):
                raise ConfigurationError(f"warehouse {location} is not writable")
        executor = self._executor(config)
        if spec.s3 is not None and spec.type is CatalogType.HIVE:
            # Before the catalog: a storage failure is named precisely here. (A REST
            # catalog's warehouse may be a table bucket, which takes no object of ours: its
            # storage is probed under the probe table's location, ``probe_catalog``.)
            probe_storage(executor.session, spec.warehouse, spec.s3, PROBE_FOLDER)
        # Loading the catalog validates its settings and reads the warehouse; a one-row job
        # proves executors run. (The catalog API's setCurrentCatalog is not used: called from
        # a gRPC worker thread it resolves catalogs against another session's settings.)
        listing = Plan(ops=(ListNamespacesOp(catalog=catalog_of(config)),))
        executor.run(self._render(listing, config))
        executor.session.range(1).count()
        from spark_destination.runtime.spark.hosts import executor_hosts, local_hosts

        problem = unshared_warehouse_problem(
            spec,
            master=config.spark_master,
            executor_hosts=executor_hosts(executor.session),
            local_hosts=local_hosts(),
        )
        if problem is not None:
            raise ConfigurationError(problem)

    def probe_catalog(self, configuration: Mapping[str, str]) -> None:
        """Prove the catalog takes the commits a sync makes (``planner.catalog_probe``): create,
        lock, alter and drop a probe table; a refusal names the step and the setting."""
        config = self.config(configuration)
        probe = plan_catalog_probe(catalog_of(config), target=self._target(config))
        executor = self._executor(config, "setup test")
        spec = settings_for(config).catalog_spec
        try:
            for step, plan in probe.steps:
                try:
                    executor.run(self._render(plan, config))
                except ExecutionError as exc:
                    raise ConfigurationError(
                        f"the {spec.describe()} cannot {step}, which every sync needs: {exc}"
                    ) from None
                if step == ProbeStep.CREATE and spec.s3 is not None:
                    # Where the catalog puts a table's files: written, read, listed, deleted.
                    loaded = spark_table(executor.session, probe.table)
                    assert loaded is not None
                    probe_storage(executor.session, location_of(loaded), spec.s3, "data")
        finally:
            with contextlib.suppress(Exception):  # the table may be gone (or never made)
                executor.run(self._render(probe.cleanup, config))

    def describe_table(
        self, configuration: Mapping[str, str], request: DescribeTableRequest
    ) -> Table | None:
        config = self.config(configuration)
        named = target_of(request)
        return self._executor(config).describe(self._ref(config, named.schema, named.table))

    def apply(self, configuration: Mapping[str, str], request: TableChange) -> Result:
        """Plan a request that changes one table against the table as it is, and run it."""
        config = self.config(configuration)
        named = target_of(request)
        ref = self._ref(config, named.schema, named.table)
        config = self._with_earlier_names(config, ref)
        batch = None
        if isinstance(request, WriteBatchRequest | WriteHistoryBatchRequest):
            files = request.files
            batch = Batch(
                keys=files.keys, params=files.params, file_format=config.batch_file_format
            )
        if isinstance(request, WriteBatchRequest) and config.write_mode is WriteMode.DEFERRED:
            assert batch is not None
            return self._write_deferred(config, ref, request, batch)
        return self._apply(
            config,
            ref,
            lambda current: plan_change(
                request,
                current,
                catalog=catalog_of(config),
                target=self._target(config),
                layout_of=config.layout_of,
                changes_table=changes_table_of(config),
            ),
            batch,
            kind=_kind(request),
            batch_files=_batch_files(request),
        )

    def migrate(self, configuration: Mapping[str, str], request: MigrateRequest) -> Result:
        """Lock every table the operation names (in a fixed order), describe them, plan, run."""
        config = self.config(configuration)
        refs = [self._ref(config, request.schema, name) for name in migrate_tables(request)]
        locks = sorted(
            (((r.schema, r.name), self._lock(config, r)) for r in refs), key=lambda item: item[0]
        )
        with contextlib.ExitStack() as stack:
            for _, lock in locks:
                stack.enter_context(lock)
            executor = self._executor(config, "Migrate")
            for ref in refs:  # deferred mode: every table as it truly is first
                self._deferred.settle(executor, config, ref)
            tables = {r.name: executor.describe(r) for r in refs}
            target = self._target(config)
            plan = with_layouts(
                plan_migrate(request, tables, catalog=catalog_of(config), target=target),
                config.layout_of,
                target,
            )
            if plan.noop_reason is not None:
                return Result(summary=f"nothing to do: {plan.noop_reason}")
            with restored_on_failure(executor.session, refs, executor.trail):
                outcome = executor.run(self._render(plan, config))
            for ref in refs:  # a table dropped or renamed away: its intermediate table too
                if executor.describe(ref) is None:
                    self._deferred.discard(executor, config, ref)
            return _report(f"Migrate {request.schema}.{request.table}", outcome)

    def _apply(
        self,
        config: DestinationConfig,
        ref: TableRef,
        plan_for: Callable[[Table | None], Plan],
        batch: Batch | None = None,
        *,
        kind: str = "request",
        batch_files: int | None = None,
    ) -> Result:
        # One retry budget for the whole request: its statements' retries and its re-plans.
        retries = RetryBudget()
        with self._lock(config, ref):
            while True:
                executor = self._executor(config, kind, batch_files, retries)
                self._deferred.settle(executor, config, ref)
                plan = plan_for(executor.describe(ref))
                if plan.noop_reason is not None:
                    return Result(summary=f"nothing to do: {plan.noop_reason}")
                try:
                    with restored_on_failure(executor.session, (ref,), executor.trail):
                        outcome = executor.run(self._render(plan, config), batch)
                except CommitUncertainError as exc:
                    # Planned again from the table as it is now, within the request's budget.
                    what = f"{ref.schema}.{ref.name}"
                    if retries.wait(Trouble.RACE, what, "commit not confirmed"):
                        continue
                    spent = retries.spent(Trouble.RACE)
                    raise CommitRaceLostError(f"{exc} ({spent:.0f} s of re-plans)") from None
                break
            result = _warned(config, ref, _report(f"{ref.schema}.{ref.name}", outcome))
            folded = self._folded_too_much(config, executor, ref)
        self._committed(config, ref, folded=folded)
        return result

    def _committed(self, config: DestinationConfig, ref: TableRef, *, folded: bool = False) -> None:
        self._maintenance.committed(config, ref, self._key(config, ref), folded=folded)

    def _flushed(self, config: DestinationConfig, ref: TableRef, executor: Executor) -> None:
        """A deferred flush's MERGE committed to ``ref``: counted like a request's commit, and
        its folding of earlier deletes read the same way."""
        self._committed(config, ref, folded=self._folded_too_much(config, executor, ref))

    @staticmethod
    def _folded_too_much(config: DestinationConfig, executor: Executor, ref: TableRef) -> bool:
        """Whether the last commit of ``executor`` (a request's or a deferred flush's) rewrote so
        many earlier deletes that the table is maintained now rather than at its Nth commit
        (``auto_maintenance.folded_too_much``)."""
        # Read with the table's state after the request's statement (``Executor._saw``).
        folding = executor.folding(ref)
        if folding is None or not folded_too_much(config, folding):
            return False
        log.info(
            "the last commit to %r rewrote %d earlier position deletes for %d new ones: "
            "maintaining it now",
            ref.name,
            folding.rewritten,
            folding.new,
        )
        return True

    # --- Deferred write mode ----------------------------------------------------------------

    def _write_deferred(
        self, config: DestinationConfig, ref: TableRef, request: WriteBatchRequest, batch: Batch
    ) -> Result:
        """Append the batch to the table's intermediate table (``engine.deferred``)."""
        with self._lock(config, ref):
            executor = self._executor(config, "WriteBatch", _batch_files(request))
            outcome = self._deferred.write(executor, config, ref, request, batch)
        if isinstance(outcome, str):
            return Result(summary=f"nothing to do: {outcome}")
        return _warned(config, ref, _report(f"{ref.schema}.{ref.name}", outcome))

    def flush(
        self, configuration: Mapping[str, str], schema: str, table: str
    ) -> FlushOutcome | None:
        """Merge the pending batches of one table into it now; None when it has none."""
        config = self.config(configuration)
        ref = self._ref(config, schema, table)
        config = self._with_earlier_names(config, ref)
        with self._lock(config, ref):
            return self._deferred.flush(self._executor(config, "flush"), config, ref)

    def flush_all(
        self, configuration: Mapping[str, str], schema: str | None = None
    ) -> list[tuple[TableRef, FlushOutcome | None]]:
        """Flush every table of the warehouse (or of ``schema``) that has an intermediate
        table named with the configuration's prefix."""
        config = self.config(configuration)
        session = self._executor(config).session
        found = pending_tables(
            session, catalog_of(config), config.intermediate_table_prefix, schema
        )
        if config.intermediate_table_prefix == DestinationConfig().intermediate_table_prefix:
            # Intermediate tables under the earlier default name may hold pending rows too.
            earlier = pending_tables(session, catalog_of(config), EARLIER_PENDING_PREFIX, schema)
            found = sorted(set(found) | set(earlier))
        return [
            (self._ref(config, name[0], name[1]), self.flush(configuration, *name))
            for name in found
        ]

    def pending(self) -> list[PendingRows]:
        """The tables this process knows to have pending rows."""
        return self._deferred.pending()

    def wait_for_flushes(self, timeout: float | None = None) -> None:
        self._deferred.wait_for_flushes(timeout)

    def flush_pending(self) -> None:
        """Merge the pending batches of every table this process knows of now, each with the
        configuration that last touched it (as the timer does)."""
        self._deferred.flush_pending()

    def close(self) -> None:
        """A graceful stop: flush every table with pending rows (logged), then stop the
        automatic flushes. Spark keeps running (``sessions.stop`` stops it)."""
        self._deferred.close()

    # --- Table maintenance ------------------------------------------------------------------

    def maintain(
        self,
        configuration: Mapping[str, str],
        schema: str,
        table: str,
        *,
        policy: MaintenancePolicy | None = None,
        now: datetime | None = None,
    ) -> MaintenanceReport:
        """Compact, expire and clean one table, holding its lock (no request runs meanwhile)."""
        config = self.config(configuration)
        ref = self._ref(config, schema, table)
        with self._lock(config, ref):
            chosen = policy or policy_for(config)
            # How the location is listed follows from where the files are, whatever the caller
            # asked for.
            chosen = dataclasses.replace(chosen, prefix_listing=policy_for(config).prefix_listing)
            return self._maintain(config, ref, chosen, now)

    def _maintain(
        self,
        config: DestinationConfig,
        ref: TableRef,
        policy: MaintenancePolicy,
        now: datetime | None,
    ) -> MaintenanceReport:
        executor = self._executor(config, "maintain")
        self._deferred.settle(executor, config, ref)
        described = executor.describe(ref)
        if described is None:
            raise InvalidRequestError(f"table {ref.schema!r}.{ref.name!r} does not exist")
        now = now or datetime.now(UTC)
        current = self._current_layout(executor, ref, config)
        health = self._health(ref, config)
        before = table_health(executor, health)
        target = self._target(config)
        snapshots = before.snapshot_state()
        files = None
        cutoff = orphan_listing_cutoff(policy, now, target, snapshots)
        if cutoff is not None:
            listing = time.perf_counter()
            if has_file_before(executor.session, ref, cutoff) is False:
                files = FileAges(none_before=cutoff)
                log.info(
                    "maintenance of %r leaves out orphan removal: no file under its location "
                    "is older than %s (listed in %.2f s)",
                    ref.name,
                    cutoff.isoformat(timespec="seconds"),
                    time.perf_counter() - listing,
                )
        plan = plan_maintenance(
            ref,
            policy,
            now=now,
            target=target,
            key=described.key,
            layout=configured_layout(config.layout_of, ref, described.columns),
            current=current,
            snapshots=snapshots,
            files=files,
        )
        report = run_maintenance(executor, ref, self._render(plan, config), health, before)
        self._maintenance.reset(self._key(config, ref))
        return report

    def table_layout(
        self, configuration: Mapping[str, str], schema: str, table: str
    ) -> TableLayout | None:
        """The layout ``schema.table`` has now (None: missing, or no layouts here)."""
        config = self.config(configuration)
        ref = self._ref(config, schema, table)
        return self._current_layout(self._executor(config), ref, config)

    def _current_layout(
        self, executor: Executor, ref: TableRef, config: DestinationConfig
    ) -> TableLayout | None:
        style = self._dialect_of(config).layout
        stored = stored_layout(executor.session, ref) if style is not None else None
        if style is None or stored is None:
            return None
        return style.stored(stored.properties, stored.sort_by, stored.bucket)

    def _auto_maintain(self, config: DestinationConfig, ref: TableRef, due: bool) -> None:
        """The scheduler's job: between requests, under the table's lock."""
        with self._lock(config, ref):
            if not due:
                health = table_health(self._executor(config), self._health(ref, config))
                if health.delete_files < config.maintenance_delete_files:
                    return
            self._maintain(config, ref, policy_for(config), None)

    def wait_for_maintenance(self, timeout: float | None = None) -> None:
        self._maintenance.wait_idle(timeout)

    def _ref(self, config: DestinationConfig, schema: str, table: str) -> TableRef:
        """The table a request names, as this engine's dialect and the catalog take names."""
        return table_ref(catalog_of(config), schema, table, target=self._target(config))

    def _dialect_of(self, config: DestinationConfig) -> Dialect:
        """The dialect of the request's table format (``engine.table_format``)."""
        return OTHER_DIALECTS.get(config.table_format, self._dialect)

    def _target(self, config: DestinationConfig) -> Dialect:
        """The dialect on the request's catalog (a Hive metastore refuses more names)."""
        return self._dialect_of(config).for_catalog(config.catalog_type)

    def _render(self, plan: Plan, config: DestinationConfig) -> RenderedPlan:
        return render_plan(plan, self._dialect_of(config))

    def _health(self, ref: TableRef, config: DestinationConfig) -> Statement:
        (statement,) = self._render(Plan(ops=(TableHealthOp(table=ref),)), config)
        return statement


def _kind(request: TableChange) -> str:
    """The request's kind as its commits' summaries name it (``WriteBatch``, ``Truncate``…)."""
    return type(request).__name__.removesuffix("Request")


def _batch_files(request: TableChange) -> int | None:
    if isinstance(request, WriteHistoryBatchRequest):
        files = request.files
        return len(files.replace + files.update + files.delete + request.earliest_start_files)
    if isinstance(request, WriteBatchRequest):
        return len(request.files.replace + request.files.update + request.files.delete)
    return None


def policy_for(config: DestinationConfig) -> MaintenancePolicy:
    return MaintenancePolicy(
        retention=timedelta(hours=config.snapshot_retention_hours),
        prefix_listing=config.storage is Storage.S3,
    )


def _report(what: str, outcome: Outcome) -> Result:
    """Log each step's timing (names and counts only) and summarise the request."""
    steps = "; ".join(f"{step}: {seconds:.2f} s" for step, seconds in outcome.statements)
    log.info("%s: %d row(s) staged; %s", what, outcome.staged_rows, steps)
    return Result(summary=f"{len(outcome.statements)} step(s)", outcome=outcome)


def _warned(config: DestinationConfig, ref: TableRef, result: Result) -> Result:
    """The result with the Warning (and its WARNING log line) of the values its write changed
    under bad_value_policy=null, if any."""
    if result.outcome is None or not result.outcome.changes:
        return result
    warning = changes_warning(ref, config.changes_table, result.outcome.changes)
    log.warning("%s", warning)
    return dataclasses.replace(result, warning=warning)


def changes_warning(ref: TableRef, changes_table: str, changes: Sequence[ChangeCount]) -> str:
    """The Warning (and the one WARNING log line) of a write whose values bad_value_policy=null
    changed: the table, then per column the counts per change and reason. Names and counts
    only: no value, no key."""
    total = sum(c.count for c in changes)
    columns: dict[str, list[str]] = {}
    for change in changes:
        columns.setdefault(change.column, []).append(
            f"{change.count} {change.change.value} ({change.reason})"
        )
    per_column = "; ".join(
        f"column {name!r}: {', '.join(parts)}" for name, parts in columns.items()
    )
    return (
        f"bad_value_policy=null: {total} value(s) of table {ref.schema!r}.{ref.name!r} did not "
        f"fit their columns and were changed, each recorded in {ref.schema!r}.{changes_table!r}: "
        f"{per_column}"
    )


def _claim_warehouse(config: DestinationConfig) -> None:
    """Lock a warehouse folder whose commits are unsafe across processes: a Hadoop catalog's
    (a REST or Hive catalog arbitrates Iceberg's commits itself), and Delta's on a local disk
    under any catalog (Delta commits by renaming a file into its log if no file has that
    name yet, which a local file system checks and does in two steps: two processes could
    both take one version)."""
    spec = settings_for(config).catalog_spec
    if spec.type is CatalogType.HADOOP or (
        config.table_format is TableFormat.DELTA and spec.local_warehouse is not None
    ):
        warehouse_lock.claim(spec.warehouse)
