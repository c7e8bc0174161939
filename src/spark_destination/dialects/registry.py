"""Every dialect the engine renders, by name."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.databricks_delta import DATABRICKS_DELTA
from spark_destination.dialects.spark_delta import SPARK_DELTA
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG

DIALECTS: Final = MappingProxyType(
    {d.name: d for d in (SPARK_ICEBERG, SPARK_DELTA, DATABRICKS_DELTA)}
)
DEFAULT: Final = SPARK_ICEBERG


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        known = ", ".join(DIALECTS)
        raise ConfigurationError(f"unknown dialect {name!r} (known: {known})") from None
