"""Planning of WriteHistoryBatch (history mode, SCD type 2): stage, check, one MERGE.

Files are staged in the order Fivetran requires (earliest_start -> update -> replace -> delete)
into one view; the whole request is then applied by a single ``MergeHistoryOp`` whose source
is computed from the staged rows and the table *as it was before the request*. One MERGE is one
Iceberg commit, so a request is all-or-nothing by construction (a failure leaves the table at
its previous snapshot) and no "before" snapshot has to be captured or rolled back.

Decisions where the reference is silent or self-contradictory:

* The key of every earliest/delete match is the primary key *without* ``_fivetran_start``.
* A key's earliest start is the least of its earliest-start rows and of the starts of its
  update/replace rows, so versions a failed or repeated attempt inserted are always replaced:
  a retried identical request gives the same table.
* Existing versions with ``start >= earliest`` are deleted; the active surviving version (and
  the newest surviving one if its end reaches past ``earliest``, as in the guide's worked
  example) is closed at ``earliest - 1 ms``.
* Unmodified update columns are filled, in ``_fivetran_start`` order, from the latest earlier
  version of the same key in this batch (update or replace row), else from the key's newest
  version that survives the earliest-start delete (as stored before this request, active or
  not), else NULL.
* A delete closes the key's active version at the file's ``_fivetran_end`` (no -1 ms) and sets
  ``_fivetran_active = false``: a version this batch inserts if there is one, else the stored
  one. Delete rows carry NULL in ``_fivetran_start``.
* Truncate of a history table is planned by ``planner.truncate``. A hard truncate removes the
  rows synced before the cut-off, as the reference says for every table. A soft truncate (the
  reference is silent; the tester no longer sends one for history tables) does not add a
  ``_fivetran_deleted`` column to the table: it keeps the history intact and closes the active
  versions synced before the cut-off (``_fivetran_end`` = cut-off, ``_fivetran_active`` =
  false), the history-mode way of saying "deleted".
"""

from __future__ import annotations

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    FileKind,
    Table,
)
from spark_destination.core.requests import WriteHistoryBatchRequest
from spark_destination.planner.bad_values import recording, staging_policy
from spark_destination.planner.ir import (
    MergeHistoryOp,
    Plan,
    RowOp,
    StageBatchOp,
)
from spark_destination.planner.tables import filter_key, resolve_columns, staged_files, table_ref
from spark_destination.planner.target import Target
from spark_destination.planner.write import BATCH_VIEW, NO_FILES, sentinel

HISTORY_COLUMNS = (HISTORY_START, HISTORY_END, HISTORY_ACTIVE)


def history_key(table: Table) -> tuple[str, ...]:
    """The source key of a history table: its primary key without ``_fivetran_start``."""
    key = tuple(k for k in table.key if k != HISTORY_START)
    if key:
        return key
    if table.column(FIVETRAN_ID) is not None:
        return (FIVETRAN_ID,)
    raise InvalidRequestError(
        f"history table {table.name!r} has no primary key besides {HISTORY_START!r} and no "
        f"{FIVETRAN_ID!r} column to match rows on"
    )


def plan_write_history_batch(
    request: WriteHistoryBatchRequest,
    current: Table | None,
    *,
    catalog: str,
    target: Target,
    changes_table: str | None = None,
) -> Plan:
    """``changes_table``: as for ``plan_write_batch``."""
    ref = table_ref(catalog, request.schema, request.table.name, target=target)
    batch = request.files
    current, files = staged_files(
        "WriteHistoryBatch",
        request,
        current,
        (
            (FileKind.EARLIEST_START, request.earliest_start_files),
            (FileKind.UPDATE, batch.update),
            (FileKind.REPLACE, batch.replace),
            (FileKind.DELETE, batch.delete),
        ),
    )
    if not files:
        return NO_FILES
    missing_history = [c for c in HISTORY_COLUMNS if current.column(c) is None]
    if missing_history:
        raise InvalidRequestError(
            f"table {request.table.name!r} is not a history-mode table: it has no column(s) "
            f"{', '.join(repr(c) for c in missing_history)}"
        )
    columns = resolve_columns(request.table, current)
    names = {c.name for c in columns}
    key = history_key(current)
    missing = [k for k in (*key, *HISTORY_COLUMNS) if k not in names]
    if missing:
        raise InvalidRequestError(
            f"WriteHistoryBatch for {request.table.name!r} lacks column(s) "
            f"{', '.join(repr(k) for k in missing)}"
        )
    params = batch.params
    null_string = sentinel(params.null_string)
    unmodified_string = sentinel(params.unmodified_string)
    return Plan(
        ops=(
            StageBatchOp(
                view=BATCH_VIEW,
                files=files,
                columns=columns,
                key=key,
                null_string=null_string,
                unmodified_string=unmodified_string,
                required=(
                    (HISTORY_START, (RowOp.EARLIEST_START, RowOp.UPDATE, RowOp.UPSERT)),
                    (HISTORY_END, (RowOp.UPSERT, RowOp.DELETE)),
                    (HISTORY_ACTIVE, (RowOp.UPSERT,)),
                ),
                # Versions of one key are the point of history mode (nothing is folded); a key
                # with one new version at most allows the MERGE's full-versions form.
                repeats_among=(RowOp.UPDATE, RowOp.UPSERT),
                **staging_policy(columns, (*key, HISTORY_START), target, changes_table),
            ),
            *recording(
                ref,
                changes_table,
                view=BATCH_VIEW,
                primary_key=(*key, HISTORY_START),
                columns=columns,
                target=target,
            ),
            MergeHistoryOp(
                table=ref,
                view=BATCH_VIEW,
                columns=columns,
                key=key,
                start=HISTORY_START,
                end=HISTORY_END,
                active=HISTORY_ACTIVE,
                null_string=null_string,
                unmodified_string=unmodified_string,
                filter_key=filter_key(columns, key),
            ),
        )
    )
