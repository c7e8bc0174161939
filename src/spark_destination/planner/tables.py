"""Checks and conversions shared by the planning functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    FIVETRAN_ID,
    MAX_DECIMAL_PRECISION,
    Column,
    DataType,
    Encryption,
    FileKind,
    FileParams,
    Table,
)
from spark_destination.core.names import check_not_reserved
from spark_destination.core.requests import WriteBatchRequest, WriteHistoryBatchRequest
from spark_destination.planner.ir import StagedFile, TableRef
from spark_destination.planner.target import NameKind, Target

# Key types whose batch values bind as literals that compare exactly with the stored values
# and that table formats keep min/max statistics and bloom filters for. Excluded: timestamps
# (a Python datetime binds through the process's time zone), floats, decimals (a literal's
# own precision would widen the comparison and stop the filter reaching the scan), binary.
FILTERABLE_KEY_TYPES: Final = frozenset(
    {DataType.SHORT, DataType.INT, DataType.LONG, DataType.STRING, DataType.NAIVE_DATE}
)


def table_ref(catalog: str, schema: str, name: str, *, target: Target) -> TableRef:
    """The table a request names: a plain path component each (``TableRef``), not one of the
    destination's own tables, and names the target's catalog takes (``check_names``)."""
    if not schema:
        raise InvalidRequestError("schema_name is empty")
    if not name:
        raise InvalidRequestError("table name is empty")
    check_not_reserved("table", name)
    ref = TableRef(catalog=catalog, schema=schema, name=name)
    check_names(target, catalog, schema, name)
    return ref


def check_names(target: Target, catalog: str, schema: str, table: str | None = None) -> None:
    """Refuse a catalog, schema or table name the target's catalog does not take
    (``Target.name_problem``), naming the rule, before anything runs."""
    parts = [(NameKind.CATALOG, catalog), (NameKind.SCHEMA, schema)]
    if table is not None:
        parts.append((NameKind.TABLE, table))
    for kind, part in parts:
        problem = target.name_problem(kind, part)
        if problem is not None:
            raise InvalidRequestError(f"{kind.value} name {part!r} {problem} ({target.name})")


def validate_columns(table: Table) -> None:
    """Reject definitions no table can have: empty or duplicate names, bad types or params."""
    seen: set[str] = set()
    if not table.columns:
        raise InvalidRequestError(f"table {table.name!r} has no columns")
    for column in table.columns:
        if not column.name:
            raise InvalidRequestError(f"table {table.name!r} has a column with an empty name")
        check_not_reserved("column", column.name)
        if column.name in seen:
            raise InvalidRequestError(f"table {table.name!r} declares column {column.name!r} twice")
        seen.add(column.name)
        if column.type is DataType.UNSPECIFIED:
            raise InvalidRequestError(
                f"column {column.name!r} of table {table.name!r} has no data type (UNSPECIFIED)"
            )
        if column.decimal is not None:
            precision, scale = column.decimal.precision, column.decimal.scale
            if not 1 <= precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
                raise InvalidRequestError(
                    f"column {column.name!r} of table {table.name!r}: DECIMAL({precision}, "
                    f"{scale}) is not representable (precision 1..38, scale 0..precision)"
                )


def merge_key(table: Table) -> tuple[str, ...]:
    """The columns rows are matched on: the primary key, else Fivetran's ``_fivetran_id``."""
    if table.key:
        return table.key
    if table.column(FIVETRAN_ID) is not None:
        return (FIVETRAN_ID,)
    raise InvalidRequestError(
        f"table {table.name!r} has no primary key and no {FIVETRAN_ID!r} column to match rows on"
    )


def resolve_columns(requested: Table, current: Table) -> tuple[Column, ...]:
    """The destination's columns named by the request, in destination order.

    The destination's definition wins for types (it is what is stored); a requested column the
    destination lacks is an error (Fivetran sends AlterTable before it writes a new column).
    """
    unknown = [c.name for c in requested.columns if current.column(c.name) is None]
    if unknown:
        raise InvalidRequestError(
            f"table {current.name!r} has no column(s) {_names(unknown)}; "
            "an AlterTable must add them before data is written"
        )
    wanted = {c.name for c in requested.columns}
    return tuple(c for c in current.columns if c.name in wanted)


def check_decryption_keys(
    params: FileParams, keys: Mapping[str, bytes], files: Sequence[StagedFile]
) -> None:
    """Fail before any work when an encrypted file has no key (names the file, never a key)."""
    if params.encryption is not Encryption.AES:
        return
    missing = [f.path for f in files if f.path not in keys]
    if missing:
        raise InvalidRequestError(f"no decryption key for batch file(s): {', '.join(missing)}")


def staged_files(
    rpc: str,
    request: WriteBatchRequest | WriteHistoryBatchRequest,
    current: Table | None,
    order: Sequence[tuple[FileKind, Sequence[str]]],
) -> tuple[Table, tuple[StagedFile, ...]]:
    """A batch request's table (it must exist) and its files in processing ``order``, each
    encrypted one with its key. A column in the destination's reserved space is refused as
    CreateTable and AlterTable refuse it, naming the rule (not as a column the table lacks)."""
    for column in request.table.columns:
        check_not_reserved("column", column.name)
    if current is None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{request.table.name!r} does not exist; CreateTable must "
            f"come before {rpc}"
        )
    files = tuple(StagedFile(kind=kind, path=path) for kind, paths in order for path in paths)
    check_decryption_keys(request.files.params, request.files.keys, files)
    return current, files


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def filter_key(columns: tuple[Column, ...], key: tuple[str, ...]) -> tuple[str, ...]:
    """The key columns a small batch's values may filter the table's scan by."""
    types = {c.name: c.type for c in columns}
    return tuple(k for k in key if types[k] in FILTERABLE_KEY_TYPES)
