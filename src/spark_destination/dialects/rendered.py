"""What the engine renders and the runtime runs: statements, with everything needed to run them.

Rendering happens once, in the engine (``dialects.render``); the runtime receives these values
and never imports a dialect. A statement carries its SQL, the alternative forms the runtime may
pick from after staging, the layout of a check query's result row, and what the runtime does
with it (``Run``), so what ``preview`` prints is exactly what can run.

The IR is dispatched once, by the renderer: each op's lowering says, as a ``Run``, how its
statements run, and the executor matches on that small closed union, never on op classes. A new
op whose statements run as an existing kind (most: ``RunSql``) is added to the renderer alone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from spark_destination.core.errors import RenderError
from spark_destination.core.model import Column
from spark_destination.planner import ir
from spark_destination.planner.ir import ColumnChange, Op, StageBatchOp, TableRef


class Form(enum.Enum):
    """Alternative forms of a statement, chosen by the runtime from what staging found."""

    # The batch MERGE without the branch that folds repeated keys (no key occurs twice).
    UNIQUE_KEYS = "no key repeats in the staged batch"
    # ``UNIQUE_KEYS`` plus an IN filter on the table's key columns whose parameter markers
    # (``Statement.key_filter``) bind the batch's keys: for batches with few keys.
    KEY_FILTER = "no key repeats, and few enough keys to bind as a filter"
    # The batch MERGE with its fold of repeated keys, plus the same filter: a small batch
    # that names a key twice (e.g. in its upsert and its delete file) still reads only the
    # files that may hold its keys, and its commit conflicts only with files that may.
    FOLDED_KEY_FILTER = "repeated keys folded, and few enough keys to bind as a filter"
    # A merge flush's key filter for more pending keys than ``KEY_FILTER`` binds, with the
    # markers of ``Statement.wide_key_filter``: thousands, each bound at a cost, so only then.
    WIDE_KEY_FILTER = "more pending keys than the key filter binds, few enough for a wide one"
    # The history MERGE without reading the stored versions first: no value is unmodified and
    # no key has two new versions (``dialects.lowering.merge_history_full``).
    FULL_VERSIONS = "history batch of complete new versions, at most one per key"
    # ``FULL_VERSIONS`` plus the key filter on the MERGE's target.
    FULL_VERSIONS_KEY_FILTER = "complete new versions, and few enough keys to bind as a filter"
    # The history MERGE filling unmodified values from each key's newest surviving stored
    # version, found by a join and an aggregate: no key has two new versions
    # (``dialects.lowering.merge_history_filled``).
    FILLED_VERSIONS = "history batch with unmodified values, at most one new version per key"
    # ``FILLED_VERSIONS`` plus the key filter on both reads of the table.
    FILLED_VERSIONS_KEY_FILTER = "unmodified values, and few enough keys to bind as a filter"


class OutputKind(enum.Enum):
    """What one column of a check query's result row holds."""

    # Not a result column: a staged column and its declared type, for the decoder's messages.
    STAGED_COLUMN = "staged column"
    # A stored-values check: count of values that do not convert, then the least of them.
    BAD_COUNT = "bad count"
    BAD_VALUE = "bad value"
    # Rows holding NULL in a column that joins the primary key.
    NULL_COUNT = "null count"
    # True when the request's literal value cannot be stored in the column.
    REFUSED = "refused"
    # The latest start of an active history version after the operation timestamp, or NULL.
    LATEST_START = "latest start"
    # How many values of a new primary key occur on more than one row.
    DUPLICATE_KEYS = "duplicate keys"
    # A placeholder output (the query checks nothing); ignored.
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOutput:
    """One column of a check query's result row, in order."""

    kind: OutputKind
    column: Column | None = None
    # For stored-value checks: the conversion or the key column the output reports on.
    change: ColumnChange | None = None
    # The column's type as the dialect declares it, for messages (e.g. ``DECIMAL(10,2)``).
    sql_type: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyFilter:
    """The parameter markers of a ``Form.KEY_FILTER`` statement: per key column, the marker
    names its distinct batch values bind to, in order. Fewer values than markers: the first
    value fills the rest (a repeated IN value changes nothing)."""

    columns: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSql:
    """Run the statement's SQL. Its rows are the caller's (maintenance results, the pending
    counters): the executor's step ignores them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    """A directive, no SQL: decode ``op``'s batch files into its typed view (decoding checks
    every value); the statement's layout names the staged columns' declared types."""

    op: StageBatchOp


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadCatalog:
    """A directive, no SQL: the answer is read from the catalog API (``Executor.describe``),
    so nothing runs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordChanges:
    """Run only when staging changed a value of ``view`` (bad_value_policy=null), holding
    ``changes`` (a table other requests also write) for the rest of the run."""

    view: str
    changes: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeBatch:
    """The batch MERGE of ``view`` into ``table``, in the cheapest form staging allows."""

    view: str
    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeHistory:
    """The history MERGE of ``view`` into ``table``, in the cheapest form staging allows (the
    view may not have been staged by this run: then the general form)."""

    view: str
    table: TableRef


class Refusal(enum.Enum):
    """What a failed ``Refuse`` check says about the request (which error it raises)."""

    # A value of the request does not fit its column (``ValueConversionError``).
    VALUE = "a value does not convert"
    # The request is inconsistent with the table (``InvalidRequestError``).
    REQUEST = "the request does not fit the table"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refuse:
    """A check query of one row: a truthy first value (true, a count above zero, a timestamp)
    refuses the request. The message is ``message``'s parts joined by that value; ``loggable``
    (same form) replaces it in logs when the message quotes a request's value."""

    refusal: Refusal
    message: tuple[str, ...]
    loggable: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckStoredValues:
    """The stored-values check of an AlterTable of ``table``: its row is read by the
    statement's layout (``OutputKind.BAD_COUNT``, ``BAD_VALUE``, ``NULL_COUNT``)."""

    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class Bind:
    """Run with ``markers`` bound to the run's parameters (deferred mode's counters)."""

    markers: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushMerge:
    """The merge flush into ``table``, key-filtered by the pending keys when they fit."""

    table: TableRef


# What the runtime does with a statement: a closed union, matched once, by ``Executor``.
Run = (
    RunSql
    | Stage
    | ReadCatalog
    | RecordChanges
    | MergeBatch
    | MergeHistory
    | Refuse
    | CheckStoredValues
    | Bind
    | FlushMerge
)
# The directives: statements that run no SQL (their ``sql`` is empty).
Directive = Stage | ReadCatalog


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    """One rendered step: its SQL and what the runtime does with it (``run``).

    ``sql`` is empty exactly when ``run`` is a ``Directive``: staging and the catalog read run
    no SQL. Every other statement's SQL is a plain ``str`` (runnable as is)."""

    op: Op
    sql: str
    summary: str
    run: Run
    forms: tuple[tuple[Form, str], ...] = ()
    layout: tuple[CheckOutput, ...] = ()
    key_filter: KeyFilter | None = None
    wide_key_filter: KeyFilter | None = None
    # How ``sql`` parses back (``dialects.edge.parse_back``, in the tests and ``preview``): a
    # statement outside sqlglot's grammar, or one it prints right but flags as unsupported.
    command: bool = False
    known_gap: bool = False

    def __post_init__(self) -> None:
        # The one invariant the type cannot say: no SQL exactly for a directive.
        if isinstance(self.run, Directive) == bool(self.sql):
            raise RenderError(f"{self.summary}: a directive runs no SQL, any other statement does")

    @property
    def directive(self) -> bool:
        """True when the statement runs no SQL (``Directive``)."""
        return isinstance(self.run, Directive)

    def form(self, form: Form) -> str | None:
        return next((sql for name, sql in self.forms if name is form), None)

    @property
    def writes(self) -> TableRef | None:
        """The table the statement may commit to (None: it only reads): the runtime notes
        each such table's state around it (``runtime.execute.commits``)."""
        return written_table(self.op)

    @property
    def creates_table(self) -> bool:
        return isinstance(self.op, ir.CreateTableOp)

    @property
    def applies_view(self) -> str | None:
        """The staged view whose rows the statement writes (a batch MERGE, a history MERGE,
        a deferred append): its commit's summary counts them."""
        match self.op:
            case ir.MergeBatchOp() | ir.MergeHistoryOp() | ir.AppendPendingOp():
                return self.op.view
        return None


RenderedPlan = tuple[Statement, ...]

# Statements that only read: they commit nothing.
_READS: Final = (
    ir.StageBatchOp,
    ir.CheckLiteralOp,
    ir.CheckHistoryStartOp,
    ir.CheckConversionsOp,
    ir.CheckUniqueKeyOp,
    ir.PendingStatsOp,
    ir.PendingKeysOp,
    ir.DescribeOp,
    ir.ListNamespacesOp,
    ir.TableHealthOp,
)


def written_table(op: Op) -> TableRef | None:
    """The table ``op``'s statement may commit to (None: it only reads, or names none)."""
    if isinstance(op, _READS):
        return None
    match op:
        case ir.AppendPendingOp() | ir.ClearPendingOp():
            return op.pending
        case ir.RecordChangesOp():
            return op.changes
        case ir.CopyRowsOp() | ir.CopyRowsToHistoryOp():
            return op.target
    table = getattr(op, "table", None)
    return table if isinstance(table, TableRef) else None
