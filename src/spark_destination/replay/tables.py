"""Table definitions as an input file declares them, and the system columns the tester adds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from spark_destination.core.model import (
    DELETED,
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    DataType,
    DecimalParams,
    Table,
)
from spark_destination.replay.values import TesterInputError

# Columns the tester generates; an input file may not declare them (the v1 tester refused).
_SYSTEM_NAMES: Final = frozenset(
    {SYNCED, DELETED, FIVETRAN_ID, HISTORY_START, HISTORY_END, HISTORY_ACTIVE}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableDef:
    """A table as the input file declares it; ``table()`` adds the system columns."""

    name: str
    columns: tuple[Column, ...]
    history_mode: bool = False

    @property
    def has_declared_key(self) -> bool:
        return any(c.primary_key for c in self.columns)

    @property
    def source_key(self) -> tuple[str, ...]:
        """The rows' identity: the declared PK, or ``_fivetran_id`` for a PK-less table."""
        declared = tuple(c.name for c in self.columns if c.primary_key)
        return declared or (FIVETRAN_ID,)

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def table(self) -> Table:
        return Table(name=self.name, columns=self.columns + system_columns(self))

    def renamed(self, name: str) -> TableDef:
        return replace(self, name=name)

    def with_column(self, column: Column) -> TableDef:
        kept = tuple(c for c in self.columns if c.name != column.name)
        if len(kept) == len(self.columns):
            return replace(self, columns=self.columns + (column,))
        # Replace in place so the column order the tester sends stays stable.
        return replace(
            self, columns=tuple(column if c.name == column.name else c for c in self.columns)
        )

    def without_column(self, name: str) -> TableDef:
        return replace(self, columns=tuple(c for c in self.columns if c.name != name))


def system_columns(definition: TableDef) -> tuple[Column, ...]:
    """The columns the tester adds (reference §6.4, §10.2)."""
    added: list[Column] = []
    if not definition.has_declared_key:
        added.append(Column(name=FIVETRAN_ID, type=DataType.STRING, primary_key=True))
    added.append(Column(name=SYNCED, type=DataType.UTC_DATETIME))
    if definition.history_mode:
        added += [
            Column(name=HISTORY_START, type=DataType.UTC_DATETIME, primary_key=True),
            Column(name=HISTORY_END, type=DataType.UTC_DATETIME),
            Column(name=HISTORY_ACTIVE, type=DataType.BOOLEAN),
        ]
    else:
        added.append(Column(name=DELETED, type=DataType.BOOLEAN))
    return tuple(added)


def parse_column(name: str, spec: Any, *, primary_key: bool = False) -> Column:
    """``"INT"`` or ``{"type": "DECIMAL", "precision": 38, "scale": 10}`` (numbers or strings)."""
    if name in _SYSTEM_NAMES:
        raise TesterInputError(f"column {name!r} is added by the tester and cannot be declared")
    spec = {"type": spec} if isinstance(spec, str) else spec
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise TesterInputError(f"column {name!r}: expected a type name or an object with 'type'")
    try:
        data_type = DataType[str(spec["type"]).upper()]
    except KeyError:
        raise TesterInputError(f"column {name!r} has an unknown type {spec['type']!r}") from None
    decimal = None
    if "precision" in spec:
        try:
            decimal = DecimalParams(
                precision=int(spec["precision"]), scale=int(spec.get("scale", 0))
            )
        except ValueError:
            raise TesterInputError(
                f"column {name!r}: precision and scale must be integers"
            ) from None
    return Column(name=name, type=data_type, primary_key=primary_key, decimal=decimal)


def parse_table_def(name: str, data: Any) -> TableDef:
    if not isinstance(data, Mapping) or not isinstance(data.get("columns"), Mapping):
        raise TesterInputError(f"table {name!r}: expected an object with a 'columns' object")
    keys = [str(k) for k in data.get("primary_key", [])]
    unknown = [k for k in keys if k not in data["columns"]]
    if unknown:
        raise TesterInputError(f"table {name!r}: primary key column(s) {unknown} are not declared")
    columns = tuple(
        parse_column(str(n), spec, primary_key=n in keys) for n, spec in data["columns"].items()
    )
    return TableDef(name=name, columns=columns, history_mode=bool(data.get("history_mode", False)))
