"""``schema_migration`` ops mapped to the AlterTable or Migrate request the tester sends (§10.4).

Each handler takes the session (for the tables it tracks) and one entry of the input file, and
returns the step; ``MIGRATIONS`` maps the input file's op names to them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

from spark_destination.core.model import Column
from spark_destination.replay.steps import AlterStep, MigrateStep, Step
from spark_destination.replay.tables import TableDef, parse_column
from spark_destination.replay.values import TesterInputError, csv_value
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb


class TesterSession(Protocol):
    """What a handler needs of the input-file session (``input_files.TesterSession``): the
    tables it tracks and the requests it builds."""

    @property
    def tables(self) -> Mapping[str, TableDef]: ...

    def definition(self, name: str, where: str) -> TableDef: ...

    def details(self, table: str, **operation: Any) -> MigrateStep: ...

    def alter(self, definition: TableDef, *, drop_columns: bool = False) -> AlterStep: ...

    def update_table(self, name: str, change: Callable[[TableDef], TableDef]) -> None: ...

    def define(self, definition: TableDef) -> None: ...

    def forget(self, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Entry:
    data: Mapping[str, Any]
    where: str

    def text(self, key: str) -> str:
        if key not in self.data:
            raise TesterInputError(f"{self.where}: entry lacks {key!r}")
        value = self.data[key]
        return "NULL" if value is None else csv_value(value, "NULL")

    def optional(self, key: str, default: str = "") -> str:
        return self.text(key) if key in self.data else default

    def column(self, name_key: str = "column") -> Column:
        if "data_type" not in self.data:
            raise TesterInputError(f"{self.where}: entry lacks 'data_type'")
        return parse_column(self.text(name_key), self.data["data_type"])


def _add_column(session: TesterSession, entry: Entry) -> Step:
    definition = session.definition(entry.text("table"), entry.where)
    return session.alter(definition.with_column(entry.column()))


def _change_column_data_type(session: TesterSession, entry: Entry) -> Step:
    definition = session.definition(entry.text("table"), entry.where)
    current = definition.column(entry.text("column"))
    if current is None:
        raise TesterInputError(f"{entry.where}: {definition.name!r} has no such column")
    changed = replace(entry.column(), primary_key=current.primary_key)
    return session.alter(definition.with_column(changed))


def _drop_column(session: TesterSession, entry: Entry) -> Step:
    definition = session.definition(entry.text("table"), entry.where)
    return session.alter(definition.without_column(entry.text("column")), drop_columns=True)


def _copy_column(session: TesterSession, entry: Entry) -> Step:
    table, source, target = entry.text("table"), entry.text("from_column"), entry.text("to_column")

    def copy(d: TableDef) -> TableDef:
        column = d.column(source)
        return (
            d if column is None else d.with_column(replace(column, name=target, primary_key=False))
        )

    session.update_table(table, copy)
    operation = pb.CopyOperation(copy_column=pb.CopyColumn(from_column=source, to_column=target))
    return session.details(table, copy=operation)


def _update_column_value(session: TesterSession, entry: Entry) -> Step:
    operation = pb.UpdateColumnValueOperation(
        column=entry.text("column"), value=entry.text("value")
    )
    return session.details(entry.text("table"), update_column_value=operation)


def _set_column_to_null(session: TesterSession, entry: Entry) -> Step:
    # The tester sends the literal 4-character string (reference §10.4).
    operation = pb.UpdateColumnValueOperation(column=entry.text("column"), value="NULL")
    return session.details(entry.text("table"), update_column_value=operation)


def _add_column_with_default_value(session: TesterSession, entry: Entry) -> Step:
    table, column = entry.text("table"), entry.column()
    session.update_table(table, lambda d: d.with_column(column))
    operation = pb.AddOperation(
        add_column_with_default_value=pb.AddColumnWithDefaultValue(
            column=column.name,
            column_type=column.type.name,
            default_value=entry.optional("default_value"),
        )
    )
    return session.details(table, add=operation)


def _add_column_in_history_mode(session: TesterSession, entry: Entry) -> Step:
    table, column = entry.text("table"), entry.column()
    session.update_table(table, lambda d: d.with_column(column))
    operation = pb.AddOperation(
        add_column_in_history_mode=pb.AddColumnInHistoryMode(
            column=column.name,
            column_type=column.type.name,
            default_value=entry.optional("default_value"),
            operation_timestamp=entry.text("operation_timestamp"),
        )
    )
    return session.details(table, add=operation)


def _drop_column_in_history_mode(session: TesterSession, entry: Entry) -> Step:
    # The column stays in the table (history keeps its old values), so the definition is kept.
    operation = pb.DropOperation(
        drop_column_in_history_mode=pb.DropColumnInHistoryMode(
            column=entry.text("column"), operation_timestamp=entry.text("operation_timestamp")
        )
    )
    return session.details(entry.text("table"), drop=operation)


def _copy_table(session: TesterSession, entry: Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    known = session.tables.get(source)
    if known is not None:
        session.define(known.renamed(target))
    operation = pb.CopyOperation(copy_table=pb.CopyTable(from_table=source, to_table=target))
    return session.details(source, copy=operation)


def _rename_column(session: TesterSession, entry: Entry) -> Step:
    table, source, target = entry.text("table"), entry.text("from_column"), entry.text("to_column")

    def rename(d: TableDef) -> TableDef:
        columns = tuple(replace(c, name=target) if c.name == source else c for c in d.columns)
        return replace(d, columns=columns)

    session.update_table(table, rename)
    operation = pb.RenameOperation(
        rename_column=pb.RenameColumn(from_column=source, to_column=target)
    )
    return session.details(table, rename=operation)


def _rename_table(session: TesterSession, entry: Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    known = session.tables.get(source)
    if known is not None:
        session.forget(source)
        session.define(known.renamed(target))
    operation = pb.RenameOperation(rename_table=pb.RenameTable(from_table=source, to_table=target))
    return session.details(source, rename=operation)


def _drop_table(session: TesterSession, entry: Entry) -> Step:
    table = entry.text("table")
    session.forget(table)
    return session.details(table, drop=pb.DropOperation(drop_table=True))


def _copy_table_to_history_mode(session: TesterSession, entry: Entry) -> Step:
    source, target = entry.text("from_table"), entry.text("to_table")
    known = session.tables.get(source)
    if known is not None:
        session.define(replace(known.renamed(target), history_mode=True))
    operation = pb.CopyOperation(
        copy_table_to_history_mode=pb.CopyTableToHistoryMode(
            from_table=source,
            to_table=target,
            soft_deleted_column=entry.optional("deleted_column"),
        )
    )
    return session.details(source, copy=operation)


def _sync_mode(kind: str, history_after: bool) -> Callable[[TesterSession, Entry], Step]:
    def handler(session: TesterSession, entry: Entry) -> Step:
        table = entry.text("table")
        session.update_table(table, lambda d: replace(d, history_mode=history_after))
        operation = pb.TableSyncModeMigrationOperation(
            type=kind, soft_deleted_column=entry.optional("deleted_column")
        )
        if "keep_inactive_rows" in entry.data:
            operation.keep_deleted_rows = bool(entry.data["keep_inactive_rows"])
        return session.details(table, table_sync_mode_migration=operation)

    return handler


MIGRATIONS: Final[Mapping[str, Callable[[TesterSession, Entry], Step]]] = {
    "add_column": _add_column,
    "change_column_data_type": _change_column_data_type,
    "drop_column": _drop_column,
    "copy_column": _copy_column,
    "update_column_value": _update_column_value,
    "add_column_with_default_value": _add_column_with_default_value,
    "set_column_to_null": _set_column_to_null,
    "copy_table": _copy_table,
    "rename_column": _rename_column,
    "rename_table": _rename_table,
    "drop_table": _drop_table,
    "add_column_in_history_mode": _add_column_in_history_mode,
    "drop_column_in_history_mode": _drop_column_in_history_mode,
    "copy_table_to_history_mode": _copy_table_to_history_mode,
    "migrate_soft_delete_to_history": _sync_mode("SOFT_DELETE_TO_HISTORY", True),
    "migrate_history_to_soft_delete": _sync_mode("HISTORY_TO_SOFT_DELETE", False),
    # Withdrawn from the tester in Jan 2026 (LIVE mode); kept so a destination's "unsupported"
    # answer can still be exercised.
    "migrate_history_to_live": _sync_mode("HISTORY_TO_LIVE", False),
    "migrate_soft_delete_to_live": _sync_mode("SOFT_DELETE_TO_LIVE", False),
    "migrate_live_to_soft_delete": _sync_mode("LIVE_TO_SOFT_DELETE", False),
    "migrate_live_to_history": _sync_mode("LIVE_TO_HISTORY", True),
}
