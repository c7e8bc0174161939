"""Fivetran column metadata kept in an Iceberg table property.

Iceberg cannot tell SHORT from INT, has no TIME type, and stores STRING, XML and JSON alike, so
the types, key flags and params CreateTable received are stored as JSON in one table property.
DescribeTable answers from the physical schema (which columns exist, in which order) joined with
this metadata (what Fivetran called them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from spark_destination.model import Column, DataType, DecimalParams, Table

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


def decode(value: str | None) -> dict[str, Column]:
    """Stored metadata by column name; empty when the property is absent or unreadable."""
    if not value:
        return {}
    try:
        entries = json.loads(value)
    except json.JSONDecodeError:
        return {}
    stored: dict[str, Column] = {}
    for entry in entries:
        decimal = None
        if "precision" in entry:
            decimal = DecimalParams(precision=int(entry["precision"]), scale=int(entry["scale"]))
        stored[entry["name"]] = Column(
            name=entry["name"],
            type=DataType[entry["type"]],
            primary_key=bool(entry.get("primary_key", False)),
            decimal=decimal,
            string_byte_length=entry.get("string_byte_length"),
        )
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
) -> Table:
    """The table as Fivetran should see it: physical columns, Fivetran types where known."""
    stored = decode(property_value)
    keys = frozenset(identifier_fields)
    columns = []
    for column in physical:
        derived = _from_physical(column, keys)
        known = stored.get(column.name)
        if known is not None and _compatible(known, derived):
            columns.append(known)
        else:
            columns.append(derived)
    return Table(name=name, columns=tuple(columns))
