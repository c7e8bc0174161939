"""The documented JSON form of every request, for ``preview`` (pure: no Spark, no files read).

```json
{
  "request": "write_batch",              // create_table | alter_table | describe_table |
                                         // truncate | write_batch | write_history_batch
  "configuration": {"catalog": "lake"},  // optional
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
  "soft_deleted_column": "_fivetran_deleted"         // truncate; omit for a hard truncate
}
```

Columns may also be given the destination tester's way: ``{"columns": {"id": "INT", "amount":
{"type": "DECIMAL", "precision": 10, "scale": 2}}, "primary_key": ["id"]}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from spark_destination.errors import InvalidRequestError
from spark_destination.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.requests import (
    AlterTableRequest,
    CreateTableRequest,
    DescribeTableRequest,
    Request,
    SoftTruncate,
    TableName,
    TruncateRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PreviewInput:
    request: Request
    configuration: Mapping[str, str]
    existing: Table | None


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


def parse_timestamp(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _file_params(data: Mapping[str, Any]) -> FileParams:
    return FileParams(
        compression=Compression[str(data.get("compression", "ZSTD")).upper()],
        encryption=Encryption[str(data.get("encryption", "AES")).upper()],
        null_string=str(data.get("null_string", "")),
        unmodified_string=str(data.get("unmodified_string", "")),
    )


def parse_request(data: Mapping[str, Any]) -> PreviewInput:
    kind = str(data.get("request", ""))
    schema = str(data.get("schema", ""))
    configuration = {str(k): str(v) for k, v in data.get("configuration", {}).items()}
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
                utc_delete_before=parse_timestamp(str(data["utc_delete_before"])),
                soft=SoftTruncate(deleted_column=str(deleted)) if deleted else None,
            )
        case "write_batch":
            assert table is not None
            request = WriteBatchRequest(
                schema=schema,
                table=table,
                replace_files=tuple(data.get("replace_files", ())),
                update_files=tuple(data.get("update_files", ())),
                delete_files=tuple(data.get("delete_files", ())),
                file_params=_file_params(data.get("file_params", {})),
                # Preview never opens files: any key will do, so none is needed.
                keys={
                    p: b""
                    for k in ("replace_files", "update_files", "delete_files")
                    for p in data.get(k, ())
                },
            )
        case "write_history_batch":
            assert table is not None
            kinds = ("earliest_start_files", "replace_files", "update_files", "delete_files")
            request = WriteHistoryBatchRequest(
                schema=schema,
                table=table,
                earliest_start_files=tuple(data.get("earliest_start_files", ())),
                replace_files=tuple(data.get("replace_files", ())),
                update_files=tuple(data.get("update_files", ())),
                delete_files=tuple(data.get("delete_files", ())),
                file_params=_file_params(data.get("file_params", {})),
                keys={p: b"" for k in kinds for p in data.get(k, ())},
            )
        case _:
            raise InvalidRequestError(
                f"unknown request {kind!r}; expected create_table, alter_table, describe_table, "
                "truncate, write_batch or write_history_batch"
            )
    return PreviewInput(request=request, configuration=configuration, existing=existing)
