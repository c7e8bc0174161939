"""Plain, protocol-independent descriptions of tables and batch files.

No protobuf past the server layer: the server maps proto messages into these frozen dataclasses,
and every other layer (planner, dialects, runtime, preview) speaks only these.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final


class DataType(enum.Enum):
    """Fivetran's column types (``fivetran_sdk.v2.DataType``; values are the proto numbers)."""

    UNSPECIFIED = 0
    BOOLEAN = 1
    SHORT = 2
    INT = 3
    LONG = 4
    DECIMAL = 5
    FLOAT = 6
    DOUBLE = 7
    NAIVE_DATE = 8
    NAIVE_DATETIME = 9
    UTC_DATETIME = 10
    BINARY = 11
    XML = 12
    STRING = 13
    JSON = 14
    NAIVE_TIME = 15


class Compression(enum.Enum):
    OFF = 0
    ZSTD = 1
    GZIP = 2


class Encryption(enum.Enum):
    NONE = 0
    AES = 1


class FileKind(enum.Enum):
    """What a batch file means (WriteBatch applies replace, then update, then delete)."""

    REPLACE = "replace"
    UPDATE = "update"
    DELETE = "delete"
    EARLIEST_START = "earliest_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class DecimalParams:
    precision: int
    scale: int


# Fivetran's documented default when a DECIMAL column arrives without params.
DEFAULT_DECIMAL: Final = DecimalParams(precision=38, scale=10)
MAX_DECIMAL_PRECISION: Final = 38


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One column as Fivetran describes it."""

    name: str
    type: DataType
    primary_key: bool = False
    decimal: DecimalParams | None = None
    string_byte_length: int | None = None

    @property
    def decimal_params(self) -> DecimalParams:
        """The precision and scale a DECIMAL column is stored with (Fivetran's default if none)."""
        return self.decimal or DEFAULT_DECIMAL

    @property
    def fivetran_type(self) -> str:
        """The Fivetran type as users read it in messages: ``DECIMAL(p, s)`` or the type name."""
        if self.type is DataType.DECIMAL:
            params = self.decimal_params
            return f"DECIMAL({params.precision}, {params.scale})"
        return self.type.name


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    name: str
    columns: tuple[Column, ...]

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.primary_key)

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileParams:
    compression: Compression = Compression.ZSTD
    encryption: Encryption = Encryption.AES
    null_string: str = ""
    unmodified_string: str = ""


SYNCED = "_fivetran_synced"
DELETED = "_fivetran_deleted"
FIVETRAN_ID = "_fivetran_id"
HISTORY_START = "_fivetran_start"
HISTORY_END = "_fivetran_end"
HISTORY_ACTIVE = "_fivetran_active"


def utc_instant(text: str) -> datetime:
    """An ISO-8601 instant (``Z`` or an offset; none means UTC) as an aware UTC datetime.

    Raises ValueError for text that is not one.
    """
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


# The text a NAIVE_TIME value must match (stored as text: nothing else checks its format).
NAIVE_TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?$"
