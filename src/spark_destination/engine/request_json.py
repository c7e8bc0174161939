"""The documented JSON form of every request, for ``preview`` (pure: no Spark, no files read).

```json
{
  "request": "write_batch",              // create_table | alter_table | describe_table |
                                         // truncate | write_batch | write_history_batch |
                                         // flush
  "configuration": {"catalog": "lake"},  // optional; keys of core.config.DestinationConfig
  "schema": "sales",
  "table": {"name": "orders",
            "columns": [{"name": "id", "type": "INT", "primary_key": true},
                        {"name": "amount", "type": "DECIMAL", "precision": 10, "scale": 2}]},
  "existing_table": {...},               // optional: the destination's table; defaults to "table"
                                         // (absent for create_table)
  "replace_files": ["a.csv"], "update_files": [], "delete_files": [],
  "earliest_start_files": [],            // write_history_batch only
  "file_params": {"compression": "ZSTD", "encryption": "AES",
                  "null_string": "null-x", "unmodified_string": "unmod-x"},
  "drop_columns": false,                             // alter_table
  "synced_column": "_fivetran_synced",               // truncate
  "utc_delete_before": "2024-01-01T00:00:00.000Z",   // truncate
  "soft_deleted_column": "_fivetran_deleted",        // truncate; omit for a hard truncate
  "intermediate_table_exists": true                  // write_batch with "write_mode":
                                                     // "deferred": false shows its creation
}
```

With ``"configuration": {"write_mode": "deferred"}`` a ``write_batch`` shows the append to the
table's intermediate table; ``{"request": "flush", "schema": …, "table": {…}}`` shows the merge
flush of that table (``table``: the table as it is).

A ``migrate`` request names its table with ``table_name`` (``existing_table`` is that table's
state, absent = missing), one ``operation`` keyed by its MigrationDetails oneof entity, and the
state of any other table the operation names in ``existing_tables`` (absent or null = missing):

```json
{"request": "migrate", "schema": "sales", "table_name": "orders",
 "existing_table": {...},
 "operation": {"rename_column": {"from_column": "amount", "to_column": "total"}},
 "existing_tables": {"orders_copy": null}}
```

Operations: ``drop_table`` (``true``), ``drop_column_in_history_mode`` {column,
operation_timestamp}, ``copy_table`` / ``rename_table`` {from_table, to_table}, ``copy_column``
/ ``rename_column`` {from_column, to_column}, ``copy_table_to_history_mode`` {from_table,
to_table, soft_deleted_column}, ``add_column_with_default_value`` {column, column_type,
default_value}, ``add_column_in_history_mode`` {… , operation_timestamp},
``update_column_value`` {column, value}, ``table_sync_mode_migration`` {type,
soft_deleted_column, keep_deleted_rows}.

Columns may also be given the destination tester's way: ``{"columns": {"id": "INT", "amount":
{"type": "DECIMAL", "precision": 10, "scale": 2}}, "primary_key": ["id"]}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_destination.core.config import DestinationConfig, check_known_keys, parse_config
from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
    utc_instant,
)
from spark_destination.core.requests import (
    AddColumnInHistoryMode,
    AddColumnWithDefaultValue,
    AlterTableRequest,
    BatchFiles,
    CopyColumn,
    CopyTable,
    CopyTableToHistoryMode,
    CreateTableRequest,
    DescribeTableRequest,
    DropColumnInHistoryMode,
    DropTable,
    FlushRequest,
    MigrateRequest,
    MigrationOperation,
    RenameColumn,
    RenameTable,
    Request,
    SoftTruncate,
    SyncModeMigrationType,
    TableName,
    TableSyncModeMigration,
    TruncateRequest,
    UpdateColumnValue,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PreviewInput:
    request: Request
    config: DestinationConfig
    existing: Table | None
    # Migrate only: the state of the other tables the operation names (None = missing).
    existing_tables: Mapping[str, Table | None] = field(default_factory=dict)
    # Deferred write_batch only: the table's intermediate table exists (for its columns).
    intermediate_table_exists: bool = True


def _column(name: str, spec: Any, primary_key: bool) -> Column:
    if isinstance(spec, str):
        spec = {"type": spec}
    try:
        data_type = DataType[str(spec["type"]).upper()]
    except KeyError:
        raise InvalidRequestError(
            f"column {name!r} has an unknown type {spec.get('type')!r}"
        ) from None
    decimal = None
    if "precision" in spec:
        decimal = DecimalParams(precision=int(spec["precision"]), scale=int(spec.get("scale", 0)))
    return Column(
        name=name,
        type=data_type,
        primary_key=bool(spec.get("primary_key", primary_key)),
        decimal=decimal,
        string_byte_length=spec.get("string_byte_length"),
    )


def parse_table(data: Mapping[str, Any], name: str | None = None) -> Table:
    table_name = str(data.get("name", name or ""))
    columns = data.get("columns", [])
    keys = set(data.get("primary_key", []))
    if isinstance(columns, Mapping):
        parsed = tuple(_column(n, spec, n in keys) for n, spec in columns.items())
    else:
        parsed = tuple(_column(str(c["name"]), c, str(c["name"]) in keys) for c in columns)
    return Table(name=table_name, columns=parsed)


def _file_params(data: Mapping[str, Any]) -> FileParams:
    return FileParams(
        compression=Compression[str(data.get("compression", "ZSTD")).upper()],
        encryption=Encryption[str(data.get("encryption", "AES")).upper()],
        null_string=str(data.get("null_string", "")),
        unmodified_string=str(data.get("unmodified_string", "")),
    )


def _batch_files(data: Mapping[str, Any], *more_kinds: str) -> BatchFiles:
    kinds = ("replace_files", "update_files", "delete_files", *more_kinds)
    return BatchFiles(
        replace=tuple(data.get("replace_files", ())),
        update=tuple(data.get("update_files", ())),
        delete=tuple(data.get("delete_files", ())),
        params=_file_params(data.get("file_params", {})),
        # Preview never opens files: any key will do, so none is needed.
        keys={path: b"" for kind in kinds for path in data.get(kind, ())},
    )


def parse_request(data: Mapping[str, Any]) -> PreviewInput:
    kind = str(data.get("request", ""))
    schema = str(data.get("schema", ""))
    configuration = {str(k): str(v) for k, v in data.get("configuration", {}).items()}
    check_known_keys(configuration)
    config = parse_config(configuration)
    table = parse_table(data["table"]) if "table" in data else None
    existing = parse_table(data["existing_table"]) if "existing_table" in data else table
    table_name = table.name if table else str(data.get("table_name", ""))
    request: Request
    match kind:
        case "create_table":
            assert table is not None
            request = CreateTableRequest(schema=schema, table=table)
            existing = parse_table(data["existing_table"]) if "existing_table" in data else None
        case "alter_table":
            assert table is not None
            request = AlterTableRequest(
                schema=schema, table=table, drop_columns=bool(data.get("drop_columns", False))
            )
        case "describe_table":
            request = DescribeTableRequest(target=TableName(schema=schema, table=table_name))
        case "truncate":
            deleted = data.get("soft_deleted_column")
            request = TruncateRequest(
                target=TableName(schema=schema, table=table_name),
                synced_column=str(data.get("synced_column", "_fivetran_synced")),
                utc_delete_before=utc_instant(str(data["utc_delete_before"])),
                soft=SoftTruncate(deleted_column=str(deleted)) if deleted else None,
            )
        case "write_batch":
            assert table is not None
            request = WriteBatchRequest(schema=schema, table=table, files=_batch_files(data))
        case "write_history_batch":
            assert table is not None
            request = WriteHistoryBatchRequest(
                schema=schema,
                table=table,
                files=_batch_files(data, "earliest_start_files"),
                earliest_start_files=tuple(data.get("earliest_start_files", ())),
            )
        case "flush":
            request = FlushRequest(schema=schema, table=table_name)
        case "migrate":
            name = str(data.get("table_name", table.name if table else ""))
            request = MigrateRequest(
                schema=schema, table=name, operation=parse_migration(data.get("operation"))
            )
            others = {
                str(n): None if spec is None else parse_table(spec, str(n))
                for n, spec in data.get("existing_tables", {}).items()
            }
            return PreviewInput(
                request=request, config=config, existing=existing, existing_tables=others
            )
        case _:
            raise InvalidRequestError(
                f"unknown request {kind!r}; expected create_table, alter_table, describe_table, "
                "truncate, write_batch, write_history_batch, migrate or flush"
            )
    return PreviewInput(
        request=request,
        config=config,
        existing=existing,
        intermediate_table_exists=bool(data.get("intermediate_table_exists", True)),
    )


def parse_migration(data: Any) -> MigrationOperation:
    """One ``{"<entity>": {...}}`` object -> the Migrate operation dataclass."""
    if not isinstance(data, Mapping) or len(data) != 1:
        raise InvalidRequestError("'operation' must be an object with exactly one operation")
    name, spec = next(iter(data.items()))
    spec = spec if isinstance(spec, Mapping) else {}

    def text(key: str, default: str | None = None) -> str:
        if key not in spec:
            if default is None:
                raise InvalidRequestError(f"operation {name!r} lacks {key!r}")
            return default
        return "NULL" if spec[key] is None else str(spec[key])

    def data_type() -> DataType:
        try:
            return DataType[text("column_type").upper()]
        except KeyError:
            raise InvalidRequestError(
                f"operation {name!r} has an unknown column_type {spec.get('column_type')!r}"
            ) from None

    match name:
        case "drop_table":
            return DropTable()
        case "drop_column_in_history_mode":
            return DropColumnInHistoryMode(
                column=text("column"), operation_timestamp=text("operation_timestamp")
            )
        case "copy_table":
            return CopyTable(from_table=text("from_table", ""), to_table=text("to_table"))
        case "rename_table":
            return RenameTable(from_table=text("from_table", ""), to_table=text("to_table"))
        case "copy_column":
            return CopyColumn(from_column=text("from_column"), to_column=text("to_column"))
        case "rename_column":
            return RenameColumn(from_column=text("from_column"), to_column=text("to_column"))
        case "copy_table_to_history_mode":
            return CopyTableToHistoryMode(
                from_table=text("from_table", ""),
                to_table=text("to_table"),
                soft_deleted_column=text("soft_deleted_column", ""),
            )
        case "add_column_with_default_value":
            return AddColumnWithDefaultValue(
                column=text("column"),
                column_type=data_type(),
                default_value=text("default_value", ""),
            )
        case "add_column_in_history_mode":
            return AddColumnInHistoryMode(
                column=text("column"),
                column_type=data_type(),
                default_value=text("default_value", ""),
                operation_timestamp=text("operation_timestamp"),
            )
        case "update_column_value":
            return UpdateColumnValue(column=text("column"), value=text("value", "NULL"))
        case "table_sync_mode_migration":
            try:
                kind = SyncModeMigrationType[text("type").upper()]
            except KeyError:
                raise InvalidRequestError(
                    f"unknown table_sync_mode_migration type {spec.get('type')!r}"
                ) from None
            return TableSyncModeMigration(
                type=kind,
                soft_deleted_column=text("soft_deleted_column", ""),
                keep_deleted_rows=bool(spec.get("keep_deleted_rows", False)),
            )
        case _:
            raise InvalidRequestError(f"unknown Migrate operation {name!r}")
