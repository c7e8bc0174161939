"""Input-file ops as rows, and the CSV values each row writes (batch and history files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_destination.core.model import (
    DELETED,
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    FileParams,
    Table,
)
from spark_destination.replay.tables import TableDef
from spark_destination.replay.values import (
    OP_TIME,
    TMAX,
    TesterInputError,
    csv_value,
    format_instant,
    parse_instant,
)


@dataclass(frozen=True, slots=True)
class OpRow:
    op: str  # upsert | update | soft_delete | delete
    values: Mapping[str, Any]
    processed_ms: int


def close_versions(starts: Sequence[int]) -> list[tuple[int, bool]]:
    """(end, active) per version of one key, given the versions' starts in milliseconds.

    Each version ends 1 ms before the next one starts; the latest stays open (TMAX, active).
    The result is in the order of ``starts``; ``-1`` stands for TMAX.
    """
    order = sorted(range(len(starts)), key=lambda i: starts[i])
    result: list[tuple[int, bool]] = [(-1, True)] * len(starts)
    for position, index in enumerate(order[:-1]):
        result[index] = (starts[order[position + 1]] - 1, False)
    return result


def _end_text(end: int) -> str:
    return TMAX if end == -1 else format_instant(end)


def check_row(definition: TableDef, row: OpRow, where: str) -> None:
    allowed = {c.name for c in definition.columns} | {OP_TIME}
    if not definition.has_declared_key:
        allowed.add(FIVETRAN_ID)
    unknown = sorted(set(row.values) - allowed)
    if unknown:
        raise TesterInputError(
            f"{where}: {row.op} row for {definition.name!r} has unknown column(s) {unknown}"
        )
    missing = [k for k in definition.source_key if k not in row.values]
    if missing:
        raise TesterInputError(
            f"{where}: {row.op} row for {definition.name!r} lacks key column(s) {missing}"
        )


def batch_values(
    definition: TableDef, table: Table, row: OpRow, params: FileParams
) -> dict[str, str]:
    key = set(definition.source_key)
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif row.op == "delete":
            # Hard deletes carry the key and the sync time; everything else is NULL (observed).
            value = row.values.get(name) if name in key else None
            values[name] = csv_value(value, params.null_string)
        elif name == DELETED:
            values[name] = "true" if row.op == "soft_delete" else "false"
        elif _unmodified(row, name, key):
            values[name] = params.unmodified_string
        else:
            # Upserts must list every column; a missing one is written as NULL.
            values[name] = csv_value(row.values.get(name), params.null_string)
    return values


def _unmodified(row: OpRow, name: str, key: set[str]) -> bool:
    """Update rows leave out what did not change; soft deletes change nothing but the flag."""
    if row.op == "soft_delete":
        return name not in key
    return row.op == "update" and name not in row.values


def op_time(row: OpRow) -> int:
    """A history row's ``op_time``; without one, the time the tester processed the op."""
    given = row.values.get(OP_TIME)
    return parse_instant(given) if given is not None else row.processed_ms


def _key_of(definition: TableDef, row: OpRow, params: FileParams) -> tuple[str, ...]:
    return tuple(csv_value(row.values.get(k), params.null_string) for k in definition.source_key)


def version_ends(
    definition: TableDef, versions: list[OpRow], starts: list[int], params: FileParams
) -> list[int]:
    """Each version's end (``-1`` = TMAX), computed per key over this input file's versions."""
    by_key: dict[tuple[str, ...], list[int]] = {}
    for index, row in enumerate(versions):
        by_key.setdefault(_key_of(definition, row, params), []).append(index)
    ends = [-1] * len(versions)
    for indexes in by_key.values():
        closed = close_versions([starts[i] for i in indexes])
        for index, (end, _active) in zip(indexes, closed, strict=True):
            ends[index] = end
    return ends


def earliest_rows(
    definition: TableDef, versions: list[OpRow], starts: list[int], params: FileParams
) -> list[dict[str, str]]:
    earliest: dict[tuple[str, ...], int] = {}
    for row, start in zip(versions, starts, strict=True):
        key = _key_of(definition, row, params)
        earliest[key] = min(start, earliest.get(key, start))
    return [
        {**dict(zip(definition.source_key, key, strict=True)), HISTORY_START: format_instant(start)}
        for key, start in earliest.items()
    ]


def history_values(
    definition: TableDef, table: Table, row: OpRow, start: int, end: int, params: FileParams
) -> dict[str, str]:
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif name == HISTORY_START:
            values[name] = format_instant(start)
        elif name == HISTORY_END:
            values[name] = _end_text(end)
        elif name == HISTORY_ACTIVE:
            values[name] = "true" if end == -1 else "false"
        elif row.op == "update" and name not in row.values:
            values[name] = params.unmodified_string
        else:
            values[name] = csv_value(row.values.get(name), params.null_string)
    return values


def history_delete_values(
    definition: TableDef, table: Table, row: OpRow, params: FileParams
) -> dict[str, str]:
    key = set(definition.source_key)
    values: dict[str, str] = {}
    for column in table.columns:
        name = column.name
        if name == SYNCED:
            values[name] = format_instant(row.processed_ms)
        elif name == HISTORY_END:
            # The delete time itself, no -1 ms (reference §8.5).
            values[name] = format_instant(op_time(row))
        elif name == HISTORY_ACTIVE:
            values[name] = "false"
        elif name in key:
            values[name] = csv_value(row.values.get(name), params.null_string)
        else:
            values[name] = params.null_string  # _fivetran_start included (observed)
    return values
