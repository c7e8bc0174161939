"""The destination's behaviour, independent of gRPC: plan -> render -> execute per request.

``Engine`` is what the server calls (and what tests and the demo call directly). It holds one
long-lived SparkSession (a process can have only one SparkContext) and gives each request its own
child session, so temp views of concurrent requests never collide. Requests on the same table
are serialised; different tables proceed in parallel.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spark_destination.config import DestinationConfig, is_uri, parse_config
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render_plan
from spark_destination.errors import ConfigurationError
from spark_destination.model import Table
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.ir import ListNamespacesOp, Plan, TableRef
from spark_destination.planner.migrate import migrate_tables, plan_migrate
from spark_destination.planner.schema import plan_alter_table, plan_create_table
from spark_destination.planner.tables import table_ref
from spark_destination.planner.truncate import plan_truncate
from spark_destination.planner.write import plan_write_batch
from spark_destination.rendered import RenderedPlan
from spark_destination.requests import (
    AlterTableRequest,
    CreateTableRequest,
    DescribeTableRequest,
    MigrateRequest,
    TruncateRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.runtime.executor import Batch, Executor, Outcome
from spark_destination.runtime.parquet_files import BatchFileFormat
from spark_destination.runtime.staging import Transport

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_destination.runtime.session import SparkSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """What a request did, for logs and for the response (never row values)."""

    summary: str
    outcome: Outcome | None = None


class SessionProvider:
    """Builds the one SparkSession lazily, from the first configuration that needs it."""

    def __init__(
        self,
        build: Callable[[DestinationConfig], SparkSession],
        check: Callable[[SparkSession, DestinationConfig], None],
        register_catalog: Callable[[SparkSession, str, str], None],
        configure: Callable[[SparkSession, DestinationConfig], None] = lambda _s, _c: None,
    ) -> None:
        self._build = build
        self._configure = configure
        self._check = check
        self._register_catalog = register_catalog
        self._root: SparkSession | None = None
        self._root_config: DestinationConfig | None = None
        self._lock = threading.Lock()

    @classmethod
    def embedded(cls) -> SessionProvider:
        from spark_destination.runtime import session as spark_session

        return cls(
            build=lambda config: spark_session.build_session(settings_for(config)),
            check=lambda s, config: spark_session.check_compatible(s, settings_for(config)),
            register_catalog=spark_session.register_catalog,
            configure=lambda s, config: spark_session.apply_runtime_conf(s, settings_for(config)),
        )

    @classmethod
    def shared(cls, session: SparkSession, config: DestinationConfig) -> SessionProvider:
        """Wrap an existing session (tests and embedding applications inject theirs)."""
        from spark_destination.runtime import session as spark_session

        provider = cls(
            build=lambda _config: session,
            check=lambda s, c: spark_session.check_compatible(s, settings_for(c)),
            register_catalog=spark_session.register_catalog,
            configure=lambda s, config: spark_session.apply_runtime_conf(s, settings_for(config)),
        )
        provider._root, provider._root_config = session, config
        return provider

    @property
    def started(self) -> bool:
        return self._root is not None

    def root(self, config: DestinationConfig) -> SparkSession:
        with self._lock:
            if self._root is None:
                log.info("starting Spark (master %s)", config.spark_master)
                self._root = self._build(config)
                self._root_config = config
            else:
                self._check(self._root, config)
            return self._root

    def for_request(self, config: DestinationConfig) -> SparkSession:
        """A child session (own temp views and SQL conf) with the request's catalog set up."""
        root = self.root(config)
        child = root.newSession()
        self._configure(child, config)
        assert self._root_config is not None
        if (config.catalog, _abs(config.warehouse)) != (
            self._root_config.catalog,
            _abs(self._root_config.warehouse),
        ):
            self._register_catalog(child, config.catalog, config.warehouse)
        return child


def settings_for(config: DestinationConfig) -> SparkSettings:
    from spark_destination.runtime.session import JarSource, SparkSettings

    return SparkSettings(
        master=config.spark_master,
        warehouse=config.warehouse,
        catalog=config.catalog,
        driver_memory=config.driver_memory,
        jars_mode=JarSource(config.jar_source),
        extra_conf=config.spark_conf,
    )


def _abs(path: str) -> str:
    from spark_destination.runtime.session import absolute_warehouse

    return absolute_warehouse(path)


class Engine:
    """Plans, renders and executes requests.

    ``defaults`` fill configuration keys a request leaves empty (the ``serve`` command's flags).
    Every plan is rendered here, once, for ``dialect``; the runtime runs what was rendered.
    """

    def __init__(
        self,
        sessions: SessionProvider,
        *,
        defaults: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        dialect: Dialect = DEFAULT,
    ) -> None:
        if not dialect.executable:
            raise ConfigurationError(
                f"dialect {dialect.name!r} cannot be executed by this server: {dialect.missing}"
            )
        self._dialect = dialect
        self._sessions = sessions
        self._defaults = dict(defaults or {})
        self._transport = transport
        self._table_locks: dict[tuple[str, ...], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def sessions(self) -> SessionProvider:
        return self._sessions

    def config(self, configuration: Mapping[str, str]) -> DestinationConfig:
        given = {k: v for k, v in configuration.items() if v.strip()}
        return parse_config({**self._defaults, **given})

    def _lock(self, config: DestinationConfig, ref: TableRef) -> threading.Lock:
        key = (_abs(config.warehouse), ref.catalog, ref.schema, ref.name)
        with self._locks_guard:
            return self._table_locks.setdefault(key, threading.Lock())

    def _executor(self, config: DestinationConfig) -> Executor:
        return Executor(self._sessions.for_request(config), transport=self._transport)

    def check_warehouse(self, configuration: Mapping[str, str]) -> None:
        """Start Spark with the configuration and check the warehouse can be used."""
        config = self.config(configuration)
        location = _abs(config.warehouse)
        if not is_uri(location):
            try:
                os.makedirs(location, exist_ok=True)
            except OSError as exc:
                raise ConfigurationError(f"cannot create warehouse {location}: {exc}") from None
            if not os.access(location, os.W_OK):
                raise ConfigurationError(f"warehouse {location} is not writable")
        executor = self._executor(config)
        # Loading the catalog validates its settings and reads the warehouse; a one-row job
        # proves executors run. (The catalog API's setCurrentCatalog is not used: called from
        # a gRPC worker thread it resolves catalogs against another session's settings.)
        executor.run(self._render(Plan(ops=(ListNamespacesOp(catalog=config.catalog),))))
        executor.session.range(1).count()

    def describe_table(
        self, configuration: Mapping[str, str], request: DescribeTableRequest
    ) -> Table | None:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.target.schema, request.target.table)
        return self._executor(config).describe(ref)

    def create_table(self, configuration: Mapping[str, str], request: CreateTableRequest) -> Result:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.schema, request.table.name)
        return self._apply(
            config, ref, lambda current: plan_create_table(request, current, catalog=config.catalog)
        )

    def alter_table(self, configuration: Mapping[str, str], request: AlterTableRequest) -> Result:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.schema, request.table.name)
        return self._apply(
            config,
            ref,
            lambda current: plan_alter_table(
                request, current, catalog=config.catalog, target=self._dialect
            ),
        )

    def truncate(self, configuration: Mapping[str, str], request: TruncateRequest) -> Result:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.target.schema, request.target.table)
        return self._apply(
            config, ref, lambda current: plan_truncate(request, current, catalog=config.catalog)
        )

    def write_batch(self, configuration: Mapping[str, str], request: WriteBatchRequest) -> Result:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.schema, request.table.name)
        batch = Batch(
            keys=request.keys,
            params=request.file_params,
            file_format=BatchFileFormat(config.batch_file_format),
        )
        return self._apply(
            config,
            ref,
            lambda current: plan_write_batch(request, current, catalog=config.catalog),
            batch,
        )

    def write_history_batch(
        self, configuration: Mapping[str, str], request: WriteHistoryBatchRequest
    ) -> Result:
        config = self.config(configuration)
        ref = table_ref(config.catalog, request.schema, request.table.name)
        batch = Batch(
            keys=request.keys,
            params=request.file_params,
            file_format=BatchFileFormat(config.batch_file_format),
        )
        return self._apply(
            config,
            ref,
            lambda current: plan_write_history_batch(request, current, catalog=config.catalog),
            batch,
        )

    def migrate(self, configuration: Mapping[str, str], request: MigrateRequest) -> Result:
        """Lock every table the operation names (in a fixed order), describe them, plan, run."""
        config = self.config(configuration)
        refs = [table_ref(config.catalog, request.schema, name) for name in migrate_tables(request)]
        locks = sorted(
            (((r.schema, r.name), self._lock(config, r)) for r in refs), key=lambda item: item[0]
        )
        with contextlib.ExitStack() as stack:
            for _, lock in locks:
                stack.enter_context(lock)
            executor = self._executor(config)
            tables = {r.name: executor.describe(r) for r in refs}
            plan = plan_migrate(request, tables, catalog=config.catalog, target=self._dialect)
            if plan.noop_reason is not None:
                return Result(summary=f"nothing to do: {plan.noop_reason}")
            outcome = executor.run(self._render(plan))
            return _report(f"Migrate {request.schema}.{request.table}", outcome)

    def _apply(
        self,
        config: DestinationConfig,
        ref: TableRef,
        plan_for: Callable[[Table | None], Plan],
        batch: Batch | None = None,
    ) -> Result:
        with self._lock(config, ref):
            executor = self._executor(config)
            plan = plan_for(executor.describe(ref))
            if plan.noop_reason is not None:
                return Result(summary=f"nothing to do: {plan.noop_reason}")
            outcome = executor.run(self._render(plan), batch)
            return _report(f"{ref.schema}.{ref.name}", outcome)

    def _render(self, plan: Plan) -> RenderedPlan:
        return render_plan(plan, self._dialect)


def _report(what: str, outcome: Outcome) -> Result:
    """Log each step's timing (names and counts only) and summarise the request."""
    steps = "; ".join(f"{step}: {seconds:.2f} s" for step, seconds in outcome.statements)
    log.info("%s: %d row(s) staged; %s", what, outcome.staged_rows, steps)
    return Result(summary=f"{len(outcome.statements)} step(s)", outcome=outcome)
