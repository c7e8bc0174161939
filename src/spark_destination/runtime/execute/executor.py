"""Run a rendered plan on an injected SparkSession.

The executor owns what happens between statements: staging batch files (decoding them into typed
columns is the value check), cleaning up views and staged data even when a statement fails, and
turning Spark's exceptions into the project's errors with messages that never quote row values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, assert_never

from spark_destination.core.config import BatchFileFormat
from spark_destination.core.errors import (
    CommitUncertainError,
    InvalidRequestError,
    ServiceUnavailableError,
    ValueConversionError,
)
from spark_destination.core.model import FileKind, FileParams, Table
from spark_destination.dialects.rendered import (
    Bind,
    CheckStoredValues,
    FlushMerge,
    Form,
    KeyFilter,
    MergeBatch,
    MergeHistory,
    OutputKind,
    ReadCatalog,
    RecordChanges,
    Refusal,
    Refuse,
    RenderedPlan,
    RunSql,
    Stage,
    Statement,
)
from spark_destination.planner import metadata
from spark_destination.planner.ir import HIGH_MARKER, TableRef
from spark_destination.runtime.batch.decoders import decoder_for
from spark_destination.runtime.batch.staging import StagedBatch, Stager, Transport
from spark_destination.runtime.batch.value_changes import ChangeCount
from spark_destination.runtime.execute import (
    commits,
    faults,
    jvm_time,
    scan_metrics,
    statement_runs,
    transient,
)
from spark_destination.runtime.execute.bound_sql import bound_sql
from spark_destination.runtime.execute.jvm_time import JvmTime
from spark_destination.runtime.execute.key_filter import key_filter_args
from spark_destination.runtime.execute.retry_policy import RetryBudget, Trouble
from spark_destination.runtime.execute.scan_metrics import ScanMetrics
from spark_destination.runtime.execute.spark_errors import (
    LOCK_HINT,
    catalog_hint,
    describe_spark_error,
    gave_up_error,
    spark_failure,
)
from spark_destination.runtime.execute.table_loader import FORMAT_VERSION_PROPERTY, load_table
from spark_destination.runtime.spark.session import (
    FEWEST_SHUFFLE_PARTITIONS,
    SHUFFLE_PARTITIONS_CONF,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@dataclass(slots=True, kw_only=True)
class Batch:
    """What a plan needs beyond its ops: the secrets and parameters of its batch files."""

    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    params: FileParams = field(default_factory=FileParams)
    file_format: BatchFileFormat = BatchFileFormat.CSV
    # Values of the plan's parameter markers that are the destination's own bookkeeping
    # (deferred mode's counters: ``ir.SEQ_BASE_MARKER``, ...), never row values.
    parameters: Mapping[str, object] = field(default_factory=dict)
    # A merge flush's distinct pending keys (``PendingKeysOp``), for its key filter; None:
    # not read.
    pending_keys: pa.Table | None = field(default=None, repr=False)
    # More entries for the summaries of the run's commits (a flush's id: ``commits.FLUSH_ID``).
    commit_entries: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Outcome:
    """What an executed plan reports: the statements run and their timings (for logs)."""

    statements: list[tuple[str, float]] = field(default_factory=list)
    staged_rows: int = 0
    # What each MERGE's scans of its target read (``scan_metrics``).
    scans: list[ScanMetrics] = field(default_factory=list)
    # bad_value_policy=null: the values staging changed, per column and reason.
    changes: tuple[ChangeCount, ...] = ()


# Takes exclusive hold of a table other requests also write (the schema's changes table) for
# the rest of a run, and restores it if the run fails.
Hold = Callable[[TableRef, commits.CommitTrail], AbstractContextManager[None]]


class Executor:
    def __init__(
        self,
        session: SparkSession,
        *,
        transport: Transport | None = None,
        hold: Hold | None = None,
        identity: commits.RequestIdentity | None = None,
        retries: RetryBudget | None = None,
    ) -> None:
        self._session = session
        # The request's one retry budget (``retry_policy``), shared with its caller's re-plans.
        self.retries = retries or RetryBudget()
        self._transport = transport
        self._scans: list[ScanMetrics] = []
        self._hold = hold
        # Every commit of this executor's request carries its identity (``commits``).
        self.trail = commits.CommitTrail(identity or commits.RequestIdentity(kind="request"))
        # The statement running now: its index, summary, the table it writes (None: a read)
        # and the summary entries of its commit.
        self._current: _Current | None = None
        # Each written table's state after this request's latest statement on it.
        self._states: dict[TableRef, commits.TableState | None] = {}

    @property
    def identity(self) -> commits.RequestIdentity:
        return self.trail.identity

    @property
    def session(self) -> SparkSession:
        return self._session

    def run(self, statements: RenderedPlan, batch: Batch | None = None) -> Outcome:
        """Run rendered statements in order (the plan's ``Statement``s, rendered once)."""
        batch = batch or Batch()
        outcome = Outcome(scans=self._scans)
        stager = Stager(self._session, self._transport, decoder_for(batch.file_format))
        staged: dict[str, StagedBatch] = {}
        held = _Held(self._hold, self.trail)
        try:
            with held:
                for index, statement in enumerate(statements):
                    faults.boundary(index, statement.op)
                    started = time.perf_counter()
                    jvm_before = self._jvm_time()
                    written = statement.writes
                    self._current = _Current(
                        creates=statement.creates_table,
                        index=index,
                        summary=statement.summary,
                        table=written,
                        entries={**self._entries(index, statement, staged), **batch.commit_entries},
                    )
                    if written is not None:
                        self._state(written)  # the table as the statement finds it
                    try:
                        if not self._step(statement, stager, staged, batch, held):
                            continue
                    finally:
                        self._current = None
                    if written is not None:
                        self._saw(written)
                    seconds = time.perf_counter() - started
                    outcome.statements.append((statement.summary, seconds))
                    # One line per step as it ends, so a long request is seen to move; with
                    # what of it the JVM spent warming up (``jvm_time``).
                    jvm_after = self._jvm_time()
                    spent = ""
                    if jvm_before is not None and jvm_after is not None:
                        spent = f" ({jvm_after.since(jvm_before).text()})"
                    log.info("%s: %.2f s%s", statement.summary, seconds, spent)
            outcome.staged_rows = sum(s.rows for s in staged.values())
            outcome.changes = tuple(c for s in staged.values() for c in s.changes)
            return outcome
        finally:
            stager.cleanup()

    def _step(
        self,
        statement: Statement,
        stager: Stager,
        staged: dict[str, StagedBatch],
        batch: Batch,
        held: _Held,
    ) -> bool:
        """Run one statement as its ``run`` says (the renderer chose it: the runtime never
        dispatches on ops); False when it had nothing to do and was skipped."""
        run = statement.run
        match run:
            case Stage(op=op):
                type_texts = tuple(
                    (o.column.name, o.sql_type)
                    for o in statement.layout
                    if o.kind is OutputKind.STAGED_COLUMN and o.column is not None
                )
                staged[op.view] = stager.stage(
                    op, keys=batch.keys, params=batch.params, type_texts=type_texts
                )
            case ReadCatalog():
                pass  # read-only: answered by describe()
            case RunSql():
                self.sql(statement.sql, what=statement.summary)
            case RecordChanges(view=view, changes=changes):
                if not staged[view].changes:
                    return False  # bad_value_policy=null, and no value needed changing
                held.take(changes)
                self.sql(statement.sql, what=statement.summary)
            case MergeBatch(view=view, table=table):
                self._merge_batch(statement, staged[view], table)
            case MergeHistory(view=view, table=table):
                staged_batch = staged.get(view)
                sql, args = self._history_form(statement, staged_batch)
                rows = None if staged_batch is None else staged_batch.rows
                self._merge_history(table, sql, what=statement.summary, args=args, rows=rows)
            case Refuse():
                self._refuse(statement, run)
            case CheckStoredValues(table=table):
                self._check_conversions(table, statement)
            case Bind(markers=markers):
                args = {name: batch.parameters[name] for name in markers}
                self.sql(statement.sql, what=statement.summary, args=args)
            case FlushMerge(table=table):
                self._flush(table, statement, batch)
            case _:
                assert_never(run)
        return True

    def _entries(
        self, index: int, statement: Statement, staged: Mapping[str, StagedBatch]
    ) -> dict[str, str]:
        """The snapshot summary of the statement's commit: the request's identity, and for a
        write of staged rows the rows per file kind and the batch files (counts only)."""
        extra: dict[str, str] = {}
        view = statement.applies_view
        batch = None if view is None else staged.get(view)
        if batch is not None:
            rows = dict.fromkeys(FileKind, 0)
            for span in batch.spans:
                rows[span.file.kind] += span.rows
            extra = commits.row_counts(
                rows[FileKind.REPLACE], rows[FileKind.UPDATE], rows[FileKind.DELETE]
            )
            extra[commits.BATCH_FILES] = str(len({span.file.path for span in batch.spans}))
        return self.identity.summary(index, statement.summary, **extra)

    def folding(self, table: TableRef) -> commits.DeleteFolding | None:
        """What this request's last commit to ``table`` did to its position deletes (None: it
        made none, or another writer's commit came after it)."""
        state = self._states.get(table)
        return None if state is None else state.folding

    def _state(self, table: TableRef) -> commits.TableState | None:
        """``table``'s state before the current statement: after this request's last statement
        on it, else read now."""
        if table not in self._states:
            try:
                self._states[table] = commits.state(self._session, table)
            except Exception:  # noqa: BLE001 - bookkeeping never fails a request
                log.debug("could not read the state of %r", table.name, exc_info=True)
                return None
        return self._states[table]

    def _saw(self, table: TableRef) -> None:
        """After a statement that may have committed to ``table``: note where it is now, as
        a (before -> after) pair of the trail."""
        before = self._states.get(table)
        try:
            now = commits.state(self._session, table, request_id=self.identity.request_id)
        except Exception:  # noqa: BLE001 - bookkeeping never fails a request
            log.debug("could not read the state of %r", table.name, exc_info=True)
            self._states.pop(table, None)
            return
        self._states[table] = now
        if now is not None:
            self.trail.saw(table, before, now)

    def _hint(self, exc: Exception, current: _Current | None) -> str | None:
        """What a catalog's refusal means and the setting to change (never a value: the
        exception's text is only searched, not shown)."""
        classes = set(transient.java_classes(exc))
        hint = catalog_hint(classes, str(exc))
        if (
            hint is None
            and current is not None
            and current.creates
            and current.table is not None
            and TABLE_EXISTS in classes
            and self._missing(current.table)
        ):
            # Iceberg reports a refused commit of a new table as "already exists".
            hint = (
                f"the table does not exist: the catalog refused the commit creating it; {LOCK_HINT}"
            )
        return hint

    def _missing(self, table: TableRef) -> bool:
        try:
            return commits.state(self._session, table) is None
        except Exception:  # noqa: BLE001 - only a hint depends on it
            return False

    def _resolve(self, exc: Exception) -> transient.Resolution:
        """What to do about a statement that failed with ``exc`` (see ``transient``)."""
        classes = transient.failure_classes(exc)
        current = self._current
        if transient.REFUSED & classes or current is None or current.table is None:
            return transient.default_resolution(classes)
        table, before = current.table, self._state(current.table)
        if transient.COMMIT_STATE_UNKNOWN in classes:
            return self._unknown_commit(current, table, before)
        if transient.VALIDATION in classes:
            now = commits.state(self._session, table)
            if now != before:
                # Another writer committed since the statement began (a compaction, an
                # append): a lost race, not a bad statement. Run it again on the new state.
                self._states[table] = now
                return transient.Resolution.RETRY
        return transient.default_resolution(classes)

    def _unknown_commit(
        self, current: _Current, table: TableRef, before: commits.TableState | None
    ) -> transient.Resolution:
        """The catalog may or may not have applied the statement's commit: find out."""
        request_id = self.identity.request_id
        while True:
            try:
                if commits.landed(self._session, table, request_id, current.index):
                    log.warning(
                        "%s: the catalog did not confirm the commit to %r, but its snapshot "
                        "is in the table: it landed",
                        current.summary,
                        table.name,
                    )
                    return transient.Resolution.LANDED
                now = commits.state(self._session, table)
            except Exception as exc:  # noqa: BLE001 - the catalog may still be unreachable
                reason = type(exc).__name__
                if self.retries.wait(
                    Trouble.UNAVAILABLE, f"{current.summary}: reading back", reason
                ):
                    continue
                raise ServiceUnavailableError(
                    f"{current.summary}: the catalog did not confirm the commit to table "
                    f"{table.name!r}, and it could not be read to find out whether it landed"
                ) from None
            if now == before:
                log.warning(
                    "%s: the catalog did not confirm the commit to %r, and the table has not "
                    "changed: it did not land; running it again",
                    current.summary,
                    table.name,
                )
                return transient.Resolution.RETRY
            # The table changed, but not by a snapshot of this statement: a metadata-only
            # commit (DDL) of ours, or another writer's. The request is planned again from the
            # table as it is now.
            raise CommitUncertainError(
                f"{current.summary}: the catalog did not confirm the commit to table "
                f"{table.name!r} and the table changed meanwhile; the request is planned again "
                "from the table's current state"
            )

    def _refuse(self, statement: Statement, refuse: Refuse) -> None:
        """Refuse the request when the check's first value is truthy (``Refuse``)."""
        found = self._first(statement.sql, what=statement.summary)
        if not found:
            return
        message = str(found).join(refuse.message)
        loggable = None if refuse.loggable is None else str(found).join(refuse.loggable)
        match refuse.refusal:
            case Refusal.VALUE:
                raise ValueConversionError(message, loggable=loggable)
            case Refusal.REQUEST:
                raise InvalidRequestError(message, loggable=loggable)
            case _:
                assert_never(refuse.refusal)

    def _check_conversions(self, table: TableRef, statement: Statement) -> None:
        """Fail, naming the column and the first value, when stored values do not convert.

        This is the one message that quotes a row value: the user must find it to fix it.
        """
        row = self.sql(statement.sql, what=f"checking the stored values of {table.name!r}")[0]
        problems: list[tuple[str, str]] = []  # (for the user, for the logs)
        outputs = list(zip(statement.layout, row, strict=True))
        for (output, count), (_, value) in zip(outputs, outputs[1:], strict=False):
            if output.kind is OutputKind.BAD_COUNT and count:
                change = output.change
                assert change is not None and change.source is not None
                problem = (
                    f"column {change.source.name!r} cannot change from "
                    f"{change.source.fivetran_type} to {change.target.fivetran_type}: "
                    f"{count} stored value(s) do not convert"
                )
                problems.append((f"{problem}, the first is {str(value)!r}", problem))
        for output, count in outputs:
            if output.kind is OutputKind.NULL_COUNT and count:
                assert output.change is not None
                problem = (
                    f"column {output.change.target.name!r} cannot join the primary key: "
                    f"{count} row(s) hold NULL in it"
                )
                problems.append((problem, problem))
        if problems:
            prefix = f"AlterTable of {table.name!r}: "
            suffix = "; the table was not changed"
            raise ValueConversionError(
                prefix + "; ".join(shown for shown, _ in problems) + suffix,
                loggable=prefix + "; ".join(logged for _, logged in problems) + suffix,
            )

    def _merge_history(
        self,
        table: TableRef,
        sql: str,
        *,
        what: str,
        args: dict[str, object] | None,
        rows: int | None,
    ) -> None:
        """Run the history MERGE with the code generation its runs so far call for
        (``statement_runs.merge_settings``) and, when its shuffles have the fewest partitions a
        request gets (two task slots or fewer), with Iceberg's write distribution ``none``,
        unless the table has its own ``write.merge.distribution-mode``.

        For a merge-on-read MERGE Iceberg's default write distribution (``hash``) adds a shuffle
        after the join, which AQE coalesces by Iceberg's advisory size; ``none`` lets the join's
        tasks write, each its own data file and its own delete files. Measured on two cores
        with 4 partitions (docs/benchmarks.md, "JVM and Spark settings"): a 1M-version batch
        8 % faster (16.03 against 17.46 s, medians of 5 alternated), adding 4 data files where
        ``hash`` added 1 (and 4 delete files both ways). On more slots a request has more
        partitions (``session.request_shuffle_partitions``, two per slot), and ``none`` would
        add a data file per partition each commit: there Iceberg's default keeps files sized.
        """
        settings = statement_runs.merge_settings(self._session, sql, rows, what=what)
        if (
            MERGE_DISTRIBUTION_MODE_PROPERTY not in self._properties(table)
            and self._shuffle_partitions() <= FEWEST_SHUFFLE_PARTITIONS
        ):
            settings[DISTRIBUTION_MODE_CONF] = "none"
        with self._statement_settings(settings):
            self.sql(sql, what=what, args=args, scan_of=table)

    def _shuffle_partitions(self) -> int:
        """The partitions this request's shuffles have (Spark's own default when unset)."""
        value = self._session.conf.get(SHUFFLE_PARTITIONS_CONF, None)
        return int(value) if value else SPARK_DEFAULT_SHUFFLE_PARTITIONS

    def _merge_batch(self, statement: Statement, batch: StagedBatch, table: TableRef) -> None:
        """The batch MERGE in the cheapest form the staged batch allows: without the fold when
        no key repeats, and key-filtered when its keys are few, repeated or not."""
        if batch.repeated_rows == 0:
            sql = statement.form(Form.UNIQUE_KEYS) or statement.sql
            sql, args = self._key_filtered(statement, batch.keys, sql, Form.KEY_FILTER)
        else:
            sql, args = self._key_filtered(
                statement, batch.keys, statement.sql, Form.FOLDED_KEY_FILTER
            )
        settings = statement_runs.merge_settings(
            self._session, sql, batch.rows, what=statement.summary
        )
        with self._statement_settings(settings):
            self.sql(sql, what=statement.summary, args=args, scan_of=table)

    @contextlib.contextmanager
    def _statement_settings(self, settings: Mapping[str, str]) -> Iterator[None]:
        """``settings`` on this request's child session for one statement, each unless the
        operator set it (``spark_conf``)."""
        conf = self._session.conf
        scoped = {key: value for key, value in settings.items() if conf.get(key, None) is None}
        for key, value in scoped.items():
            conf.set(key, value)
        try:
            yield
        finally:
            for key in scoped:
                conf.unset(key)

    @classmethod
    def _history_form(
        cls, statement: Statement, batch: StagedBatch | None
    ) -> tuple[str, dict[str, object] | None]:
        """The history MERGE in the cheapest form the staged batch allows. With one new
        version per key: complete versions need no stored version; unmodified values need
        only each key's newest surviving one. Otherwise the general form (every stored
        version of the batch's keys, windowed with the batch)."""
        if batch is not None and batch.repeated_rows == 0:
            if batch.unmodified_values:
                form, filtered, note = (
                    Form.FILLED_VERSIONS,
                    Form.FILLED_VERSIONS_KEY_FILTER,
                    "unmodified values filled from each key's newest surviving version",
                )
            else:
                form, filtered, note = (
                    Form.FULL_VERSIONS,
                    Form.FULL_VERSIONS_KEY_FILTER,
                    "complete new versions, stored versions not read first",
                )
            sql = statement.form(form)
            if sql is not None:
                log.info("%s: %s", statement.summary, note)
                return cls._key_filtered(statement, batch.keys, sql, filtered)
        keys = batch.keys if batch is not None else None
        return cls._key_filtered(statement, keys, statement.sql, Form.KEY_FILTER)

    @staticmethod
    def _key_filtered(
        statement: Statement,
        keys: pa.Table | None,
        sql: str,
        form: Form,
        key_filter: KeyFilter | None = None,
    ) -> tuple[str, dict[str, object] | None]:
        """The statement's key-filter ``form`` with ``keys`` (a batch's, or a flush's pending
        ones) bound to its markers (``key_filter``, by default the statement's), when few
        enough; otherwise ``sql`` unchanged."""
        filtered = statement.form(form)
        markers = key_filter or statement.key_filter
        if filtered is None or markers is None:
            return sql, None
        args = key_filter_args(markers, keys)
        if args is None:
            return sql, None
        log.info("%s: the keys filter the table scan (%s)", statement.summary, form.name)
        return filtered, args

    def _flush(self, table: TableRef, statement: Statement, batch: Batch) -> None:
        """The merge flush, filtered by the pending keys when they fit the markers: unfiltered,
        its join moves every row of the table (a flush of one small batch then costs several
        times that batch's MERGE in merge mode). The batch MERGE's number of markers first,
        the wide form only for more keys: binding thousands of markers costs seconds."""
        keys = batch.pending_keys
        sql, args = self._key_filtered(statement, keys, statement.sql, Form.KEY_FILTER)
        if args is None:
            sql, args = self._key_filtered(
                statement, keys, sql, Form.WIDE_KEY_FILTER, statement.wide_key_filter
            )
        bound = {**(args or {}), HIGH_MARKER: batch.parameters[HIGH_MARKER]}
        self.sql(sql, what=statement.summary, args=bound, scan_of=table)

    def _first(self, text: str, *, what: str) -> Any:
        """The first column of the first row of a one-row query."""
        return self.sql(text, what=what)[0][0]

    def sql(
        self,
        text: str,
        *,
        what: str,
        args: dict[str, object] | None = None,
        scan_of: TableRef | None = None,
        columns: list[str] | None = None,
    ) -> list[tuple[Any, ...]]:
        """Run one statement, with ``args`` bound to its parameter markers; its rows as
        plain tuples (``columns``, if given, receives their names). ``scan_of``: log (and keep
        in the outcome) what the statement's scans of that table read."""
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        def run() -> list[tuple[Any, ...]]:
            before = self._bytes_read(scan_of) if scan_of is not None else None
            frame = self._session.sql(text) if not args else bound_sql(self._session, text, args)
            rows = [tuple(row) for row in frame.collect()]
            if columns is not None:
                columns[:] = frame.columns
            if scan_of is not None:
                self._record_scan(frame, scan_of, before)
            return rows

        current = self._current
        entries = {} if current is None else current.entries

        def committed() -> list[tuple[Any, ...]]:
            with commits.delta_user_metadata(self._session, entries):
                rows = commits.with_commit_properties(self._session, entries, run)
            if current is not None and current.table is not None:
                faults.committed(current.index, current.table.name)
            return rows

        try:
            with self._scan_reads(scan_of):
                return transient.retrying(
                    committed, what=what, budget=self.retries, resolve=self._resolve, landed=list
                )
        except transient.GaveUp as gave_up:
            described = describe_spark_error(gave_up.error, values_bound=bool(args))
            raise gave_up_error(what, gave_up, described) from None
        except (PySparkException, Py4JJavaError) as exc:
            described = describe_spark_error(exc, values_bound=bool(args))
            hint = self._hint(exc, current)
            raise spark_failure(
                f"{what} failed: {described}" + (f"; {hint}" if hint else ""), exc
            ) from None

    @contextlib.contextmanager
    def _scan_reads(self, table: TableRef | None) -> Iterator[None]:
        """A statement that scans a format-version-3 ``table`` reads it row by row, not through
        Iceberg's vectorized (Arrow) reader, unless the operator set the reader
        (``spark_conf``). On v3 tables the vectorized reader's Arrow memory grew ~11 MB of
        direct memory with each small batch's MERGE (1,286 Arrow child allocators alive
        after 40 batches) until a task died on an OutOfMemoryError some 400-500 batches into
        a 2g JVM; row by row it stayed flat at ~73 MB (docs/benchmarks.md, "JVM and Spark
        settings").
        v2 tables stayed flat either way. Only this session's statements change: other
        readers of the table keep the vectorized reader."""
        conf = self._session.conf
        if (
            table is None
            or conf.get(VECTORIZATION_CONF, None) is not None
            or self._format_version(table) < DELETION_VECTOR_VERSION
        ):
            yield
            return
        conf.set(VECTORIZATION_CONF, "false")
        try:
            yield
        finally:
            conf.unset(VECTORIZATION_CONF)

    def _format_version(self, table: TableRef) -> int:
        """The table's Iceberg format version (0 when the catalog does not say)."""
        version = self._properties(table).get(FORMAT_VERSION_PROPERTY, "")
        return int(version) if version.isdigit() else 0

    def _jvm_time(self) -> JvmTime | None:
        try:
            return jvm_time.read(self._session)
        except Exception:  # noqa: BLE001 - metrics never fail a request (nor need a JVM)
            return None

    def _bytes_read(self, table: TableRef) -> int | None:
        try:
            return scan_metrics.bytes_read(self._session, self._warehouse_scheme(table))
        except Exception:  # noqa: BLE001 - metrics never fail a request
            return None

    def _warehouse_scheme(self, table: TableRef) -> str:
        """The file-system scheme the table's files are read through (``file`` locally)."""
        key = "spark.sql.catalog." + table.catalog + ".warehouse"
        warehouse = self._session.conf.get(key, "") or ""
        scheme, sep, _ = warehouse.partition("://")
        return scheme if sep else "file"

    def _record_scan(self, frame: Any, table: TableRef, before: int | None) -> None:
        """Log what the statement's scans of ``table`` read; never fails the request."""
        try:
            name = ".".join((table.catalog, table.schema, table.name))
            metrics = scan_metrics.target_scans(frame, name)
            after = self._bytes_read(table)
            if metrics is None:
                return
            if before is not None and after is not None:
                metrics = dataclasses.replace(metrics, bytes_read=after - before)
        except Exception:  # noqa: BLE001 - metrics never fail a request
            log.debug("no scan metrics for %r", table.name, exc_info=True)
            return
        self._scans.append(metrics)
        log.info("%s", metrics.text())

    def describe(self, table: TableRef) -> Table | None:
        """The table as Fivetran sees it, or None when it does not exist."""
        loaded = load_table(self._session, table)
        if loaded is None:
            return None
        physical = [
            metadata.PhysicalColumn(
                name=f.name, type=f.dataType.simpleString(), nullable=f.nullable
            )
            for f in loaded.schema.fields
        ]
        return metadata.reconcile(
            table.name,
            physical,
            loaded.properties.get(metadata.PROPERTY),
            loaded.identifier_fields,
            on_mismatch=log.warning,
        )

    def _properties(self, table: TableRef) -> dict[str, str]:
        loaded = load_table(self._session, table)
        return {} if loaded is None else loaded.properties


@dataclass(frozen=True, slots=True, kw_only=True)
class _Current:
    creates: bool
    index: int
    summary: str
    table: TableRef | None
    entries: Mapping[str, str]


class _Held:
    """The shared tables a run holds, each from its first write to the end of the run."""

    def __init__(self, hold: Hold | None, trail: commits.CommitTrail) -> None:
        self._hold = hold
        self._trail = trail
        self._stack = contextlib.ExitStack()
        self._tables: set[TableRef] = set()

    def __enter__(self) -> _Held:
        self._stack.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool | None:
        return self._stack.__exit__(*exc)

    def take(self, table: TableRef) -> None:
        if table not in self._tables and self._hold is not None:
            self._stack.enter_context(self._hold(table, self._trail))
            self._tables.add(table)


# What Spark raises when a table it creates "already exists".
TABLE_EXISTS = "org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException"
# Iceberg's session-level override of a write's distribution mode, and the table property
# it overrides for MERGE.
DISTRIBUTION_MODE_CONF = "spark.sql.iceberg.distribution-mode"
MERGE_DISTRIBUTION_MODE_PROPERTY = "write.merge.distribution-mode"
# Spark's ``spark.sql.shuffle.partitions`` when a session does not set it.
SPARK_DEFAULT_SHUFFLE_PARTITIONS: Final = 200
# Iceberg's session-level switch of its vectorized Parquet reader, and the first format
# version whose tables a MERGE scans without it (``Executor._scan_reads``).
VECTORIZATION_CONF = "spark.sql.iceberg.vectorization.enabled"
DELETION_VECTOR_VERSION = 3
