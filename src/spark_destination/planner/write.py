"""Planning of WriteBatch: stage (decode and check) every file into one typed view, apply one
MERGE."""

from __future__ import annotations

from typing import Final

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import FileKind, Table
from spark_destination.core.requests import WriteBatchRequest
from spark_destination.planner.bad_values import recording, staging_policy
from spark_destination.planner.ir import (
    MergeBatchOp,
    Plan,
    StageBatchOp,
)
from spark_destination.planner.tables import (
    filter_key,
    merge_key,
    resolve_columns,
    staged_files,
    table_ref,
)
from spark_destination.planner.target import Target

BATCH_VIEW: Final = "sd_batch"
NO_FILES: Final = Plan(ops=(), noop_reason="the request names no batch files")


def sentinel(value: str) -> str | None:
    """An empty sentinel means the producer did not set one: nothing in the file is special."""
    return value or None


def plan_write_batch(
    request: WriteBatchRequest,
    current: Table | None,
    *,
    catalog: str,
    target: Target,
    changes_table: str | None = None,
) -> Plan:
    """``changes_table`` set: bad_value_policy=null, recording in that table of the schema
    (``planner.bad_values``); None: a value that does not fit fails the request."""
    ref = table_ref(catalog, request.schema, request.table.name, target=target)
    batch = request.files
    current, files = staged_files(
        "WriteBatch",
        request,
        current,
        (
            (FileKind.REPLACE, batch.replace),
            (FileKind.UPDATE, batch.update),
            (FileKind.DELETE, batch.delete),
        ),
    )
    if not files:
        return NO_FILES
    columns = resolve_columns(request.table, current)
    key = merge_key(current)
    missing_key = [k for k in key if k not in {c.name for c in columns}]
    if missing_key:
        raise InvalidRequestError(
            f"WriteBatch for {request.table.name!r} lacks key column(s) "
            f"{', '.join(repr(k) for k in missing_key)}"
        )
    params = batch.params
    return Plan(
        ops=(
            StageBatchOp(
                view=BATCH_VIEW,
                files=files,
                columns=columns,
                key=key,
                null_string=sentinel(params.null_string),
                unmodified_string=sentinel(params.unmodified_string),
                **staging_policy(columns, key, target, changes_table),
            ),
            *recording(
                ref,
                changes_table,
                view=BATCH_VIEW,
                primary_key=key,
                columns=columns,
                target=target,
            ),
            MergeBatchOp(
                table=ref,
                view=BATCH_VIEW,
                columns=columns,
                key=key,
                null_string=sentinel(params.null_string),
                unmodified_string=sentinel(params.unmodified_string),
                has_upserts=bool(batch.replace),
                filter_key=filter_key(columns, key),
            ),
        )
    )
