"""Fivetran column metadata kept in an Iceberg table property.

Iceberg cannot tell SHORT from INT, has no TIME type, and stores STRING, XML and JSON alike, so
the types, key flags and params CreateTable received are stored as JSON in one table property.
DescribeTable answers from the physical schema (which columns exist, in which order) joined with
this metadata (what Fivetran called them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from spark_destination.core.errors import TableMetadataError
from spark_destination.core.model import Column, DataType, DecimalParams, Table

PROPERTY: Final = "fivetran.columns"

# Physical Spark type (simpleString, lower case) -> Fivetran type, for columns with no metadata
# (tables not created by this destination).
_PHYSICAL_DEFAULTS: Final[Mapping[str, DataType]] = {
    "boolean": DataType.BOOLEAN,
    "smallint": DataType.SHORT,
    "tinyint": DataType.SHORT,
    "int": DataType.INT,
    "bigint": DataType.LONG,
    "float": DataType.FLOAT,
    "double": DataType.DOUBLE,
    "date": DataType.NAIVE_DATE,
    "timestamp_ntz": DataType.NAIVE_DATETIME,
    "timestamp": DataType.UTC_DATETIME,
    "binary": DataType.BINARY,
    "string": DataType.STRING,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PhysicalColumn:
    """A column as Spark reports it: name and ``simpleString`` type (e.g. ``decimal(10,2)``)."""

    name: str
    type: str
    nullable: bool = True


def encode(columns: Sequence[Column]) -> str:
    """The property value for ``columns`` (compact, key-sorted JSON: stable in snapshots)."""
    entries = []
    for column in columns:
        entry: dict[str, object] = {"name": column.name, "type": column.type.name}
        if column.primary_key:
            entry["primary_key"] = True
        if column.decimal is not None:
            entry["precision"] = column.decimal.precision
            entry["scale"] = column.decimal.scale
        if column.string_byte_length is not None:
            entry["string_byte_length"] = column.string_byte_length
        entries.append(entry)
    return json.dumps(entries, separators=(",", ":"), sort_keys=True)


def decode(value: str | None, *, table: str = "?") -> dict[str, Column]:
    """Stored metadata by column name; empty when the property is absent.

    A property that is present but unreadable fails: answering from the physical schema instead
    would silently change what DescribeTable reports, and Fivetran would then send AlterTable
    requests for type changes that never happened.
    """
    if value is None:
        return {}
    try:
        entries = json.loads(value)
        if not isinstance(entries, list):
            raise TypeError("not a JSON list")
        stored: dict[str, Column] = {}
        for entry in entries:
            decimal = None
            if "precision" in entry:
                decimal = DecimalParams(
                    precision=int(entry["precision"]), scale=int(entry["scale"])
                )
            length = entry.get("string_byte_length")
            stored[str(entry["name"])] = Column(
                name=str(entry["name"]),
                type=DataType[entry["type"]],
                primary_key=bool(entry.get("primary_key", False)),
                decimal=decimal,
                string_byte_length=None if length is None else int(length),
            )
    except (ValueError, TypeError, KeyError) as exc:
        # The reason names the JSON problem (position, missing key), never the property's text.
        reason = type(exc).__name__ if isinstance(exc, KeyError) else str(exc).split(":")[0]
        raise TableMetadataError(
            f"table {table!r}: its Fivetran column metadata (table property {PROPERTY!r}) is "
            f"unreadable ({reason}); the table was not changed. Restore the property, or remove "
            f"it (ALTER TABLE … UNSET TBLPROPERTIES ('{PROPERTY}')) to have the table described "
            "from its physical schema"
        ) from None
    return stored


def _from_physical(column: PhysicalColumn, identifier_fields: frozenset[str]) -> Column:
    physical = column.type.lower()
    key = column.name in identifier_fields
    if physical.startswith("decimal("):
        precision, scale = physical[len("decimal(") : -1].split(",")
        return Column(
            name=column.name,
            type=DataType.DECIMAL,
            primary_key=key,
            decimal=DecimalParams(precision=int(precision), scale=int(scale)),
        )
    return Column(
        name=column.name,
        type=_PHYSICAL_DEFAULTS.get(physical, DataType.STRING),
        primary_key=key,
    )


def _compatible(stored: Column, physical: Column) -> bool:
    """Stored metadata is trusted only while it still describes the physical column."""
    if stored.type is physical.type:
        return stored.type is not DataType.DECIMAL or stored.decimal == physical.decimal
    same_storage = {
        DataType.SHORT: {DataType.INT, DataType.SHORT},
        DataType.NAIVE_TIME: {DataType.STRING},
        DataType.XML: {DataType.STRING},
        DataType.JSON: {DataType.STRING},
    }
    return physical.type in same_storage.get(stored.type, set())


def reconcile(
    name: str,
    physical: Sequence[PhysicalColumn],
    property_value: str | None,
    identifier_fields: Sequence[str] = (),
    *,
    on_mismatch: Callable[[str], None] | None = None,
) -> Table:
    """The table as Fivetran should see it: physical columns, Fivetran types where known.

    Where the stored metadata no longer describes a physical column (changed outside Fivetran),
    the physical type wins and ``on_mismatch`` is told which table and column, so the caller can
    log it: the answer changes, but never silently.
    """
    stored = decode(property_value, table=name)
    keys = frozenset(identifier_fields)
    columns = []
    for column in physical:
        derived = _from_physical(column, keys)
        known = stored.get(column.name)
        if known is not None and _compatible(known, derived):
            columns.append(known)
            continue
        columns.append(derived)
        if on_mismatch is None or property_value is None:
            continue
        if known is None:
            on_mismatch(
                f"table {name!r}: column {column.name!r} is not in the Fivetran column metadata "
                f"(table property {PROPERTY!r}); it is described from its physical type "
                f"{column.type}"
            )
        else:
            on_mismatch(
                f"table {name!r}: column {column.name!r} is stored as {column.type}, which does "
                f"not hold the Fivetran type {known.type.name} its metadata records; it is "
                "described from its physical type"
            )
    return Table(name=name, columns=tuple(columns))
