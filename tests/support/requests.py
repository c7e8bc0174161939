"""Batch requests as tests build them: files by kind, as the protocol names them."""

from __future__ import annotations

from collections.abc import Mapping

from spark_destination.core.model import FileParams, Table
from spark_destination.core.requests import (
    BatchFiles,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)


def batch_request(
    schema: str,
    table: Table,
    paths: Mapping[str, tuple[str, ...]],
    *,
    params: FileParams,
    keys: Mapping[str, bytes],
    history: bool = False,
) -> WriteBatchRequest | WriteHistoryBatchRequest:
    """``paths`` by kind: ``replace``, ``update``, ``delete``, ``earliest_start`` (history)."""
    files = BatchFiles(
        replace=paths.get("replace", ()),
        update=paths.get("update", ()),
        delete=paths.get("delete", ()),
        params=params,
        keys=keys,
    )
    if history:
        return WriteHistoryBatchRequest(
            schema=schema,
            table=table,
            files=files,
            earliest_start_files=paths.get("earliest_start", ()),
        )
    assert "earliest_start" not in paths, "earliest_start files are for history batches"
    return WriteBatchRequest(schema=schema, table=table, files=files)
