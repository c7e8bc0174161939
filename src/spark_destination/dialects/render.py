"""The render entry point: a plan's IR ops -> the statements the runtime runs, for one dialect.

Rendering happens once, in the engine (or ``preview``): each statement carries its SQL, its
alternative forms, its check-row layout and what the runtime does with it (``rendered.Run``), so
the runtime never renders, never dispatches on ops, and what ``preview`` shows is exactly what
can run. This match is the IR's one dispatch: a new op is added here (and in its lowering).
"""

from __future__ import annotations

from typing import assert_never

from spark_destination.dialects.base import Dialect
from spark_destination.dialects.lowering.changes import lower_record_changes
from spark_destination.dialects.lowering.checks import lower_check
from spark_destination.dialects.lowering.common import Renderer
from spark_destination.dialects.lowering.ddl import lower_ddl
from spark_destination.dialects.lowering.deferred import lower_pending
from spark_destination.dialects.lowering.layout import lower_set_layout, write_order
from spark_destination.dialects.lowering.maintenance import lower_maintenance
from spark_destination.dialects.lowering.merge_batch import lower_merge_batch
from spark_destination.dialects.lowering.merge_history import lower_merge_history
from spark_destination.dialects.lowering.migrations import lower_rows
from spark_destination.dialects.rendered import (
    CheckOutput,
    OutputKind,
    RenderedPlan,
    Stage,
    Statement,
)
from spark_destination.planner.ir import (
    AddColumnsOp,
    AlterColumnTypeOp,
    AppendPendingOp,
    CheckConversionsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CheckUniqueKeyOp,
    ClearPendingOp,
    CopyRowsOp,
    CopyRowsToHistoryOp,
    CreateNamespaceOp,
    CreateTableOp,
    DescribeOp,
    DropColumnsOp,
    DropNotNullOp,
    DropTableOp,
    ExpireSnapshotsOp,
    FlushPendingOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    ListNamespacesOp,
    MergeBatchOp,
    MergeHistoryOp,
    Op,
    OptimizeOp,
    PendingKeysOp,
    PendingStatsOp,
    Plan,
    RecordChangesOp,
    RemoveOrphanFilesOp,
    RenameColumnOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    RewriteTableOp,
    RewriteToHistoryOp,
    SetColumnValueOp,
    SetLayoutOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    StageBatchOp,
    TableHealthOp,
    TruncateOp,
    VacuumOp,
)

__all__ = ["render", "render_plan"]


def render_plan(plan: Plan, dialect: Dialect) -> RenderedPlan:
    return tuple(statement for op in plan.ops for statement in render(op, dialect))


def render(op: Op, dialect: Dialect) -> tuple[Statement, ...]:
    """The statements of one op, in order (most ops are one statement)."""
    r = Renderer(dialect)
    match op:
        case StageBatchOp():
            files = ", ".join(f"{f.kind.value}:{f.path}" for f in op.files)
            summary = f"stage view {op.view!r} from [{files}] (typed: decoding checks every value)"
            if op.lenient:
                summary += (
                    "; bad_value_policy=null: a value of a non-key column that does not fit is "
                    f"NULL, recorded in view {op.changes_view!r}"
                )
            for name, limit in op.max_lengths:
                what = "is cut to it" if name in op.lenient else "fails"
                summary += f"; a value of {name!r} longer than {limit} characters {what}"
            # The declared types travel with the directive: the decoder names them in messages.
            layout = tuple(
                CheckOutput(kind=OutputKind.STAGED_COLUMN, column=c, sql_type=dialect.type_text(c))
                for c in op.columns
            )
            return (Statement(op=op, sql="", summary=summary, run=Stage(op=op), layout=layout),)
        case (
            CreateNamespaceOp()
            | CreateTableOp()
            | SetPrimaryKeyOp()
            | AddColumnsOp()
            | SetPropertiesOp()
            | DescribeOp()
            | ListNamespacesOp()
            | DropTableOp()
            | RenameColumnOp()
            | DropColumnsOp()
            | AlterColumnTypeOp()
            | DropNotNullOp()
        ):
            return lower_ddl(r, op)
        case CheckLiteralOp() | CheckHistoryStartOp() | CheckConversionsOp() | CheckUniqueKeyOp():
            return (lower_check(r, op),)
        case MergeBatchOp():
            return (lower_merge_batch(r, op),)
        case MergeHistoryOp():
            return (lower_merge_history(r, op),)
        case RecordChangesOp():
            return lower_record_changes(r, op)
        case (
            TruncateOp()
            | SetColumnValueOp()
            | CopyRowsOp()
            | CopyRowsToHistoryOp()
            | HistoryColumnChangeOp()
            | KeepLatestVersionsOp()
        ):
            return (lower_rows(r, op),)
        case RewriteTableOp() | RewriteToHistoryOp():
            # CREATE OR REPLACE keeps properties but not the write order: set it again.
            return (lower_rows(r, op), *write_order(r, op, op.table, op.layout))
        case SetLayoutOp():
            return lower_set_layout(r, op)
        case (
            RewriteDataFilesOp()
            | RewritePositionDeletesOp()
            | ExpireSnapshotsOp()
            | RemoveOrphanFilesOp()
            | OptimizeOp()
            | VacuumOp()
            | TableHealthOp()
        ):
            return (lower_maintenance(r, op),)
        case (
            AppendPendingOp()
            | PendingStatsOp()
            | PendingKeysOp()
            | FlushPendingOp()
            | ClearPendingOp()
        ):
            return (lower_pending(r, op),)
        case _:
            assert_never(op)
