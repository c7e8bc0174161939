"""The ``configuration`` map every request carries, parsed and validated (pure).

Keys (all optional; documented in the README and in ConfigurationForm):

- ``warehouse``: Iceberg warehouse location (path or URI), default ``./warehouse``.
- ``catalog``: the Iceberg catalog name used in SQL, default ``lake``.
- ``spark_master``: Spark master URL, default ``local[*]``. Fixed when the JVM starts.
- ``driver_memory``: e.g. ``2g``. Fixed when the JVM starts.
- ``jar_source``: ``bundled`` (Iceberg jar from PyPI, works offline) or ``maven``
  (``spark.jars.packages``). Fixed when the JVM starts.
- ``spark_conf``: extra ``spark.*`` settings, ``key=value`` pairs separated by newlines or ``;``.
  Fixed when the JVM starts.
- ``batch_file_format``: ``csv`` (default) or ``parquet``: the batch-file format Capabilities
  announce (Capabilities carries no configuration, so the ``serve`` default decides what
  Fivetran sends) and the reader used for a request's files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from spark_destination.errors import ConfigurationError

DEFAULT_WAREHOUSE: Final = "./warehouse"
DEFAULT_CATALOG: Final = "lake"
DEFAULT_MASTER: Final = "local[*]"
DEFAULT_DRIVER_MEMORY: Final = "2g"
JAR_SOURCES: Final = ("bundled", "maven")
BATCH_FILE_FORMATS: Final = ("csv", "parquet")
DEFAULT_BATCH_FILE_FORMAT: Final = "csv"

# A catalog name goes into Spark conf keys and SQL: a plain identifier only.
_CATALOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Spark's byte-size syntax (JavaUtils.byteStringAs); a bare number is MiB for driver memory.
_MEMORY = re.compile(r"(\d+)\s*([kmgtp]?)b?", re.IGNORECASE)
_MEMORY_SHIFT: Final = {"": 20, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
# A warehouse location with a scheme (``file://``, ``s3a://``) rather than a local path.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def check_catalog_name(name: str) -> str:
    """``name``, if it is a plain identifier (letters, digits, underscores)."""
    if not _CATALOG_NAME.fullmatch(name):
        raise ConfigurationError(
            f"catalog name {name!r} must be a plain name (letters, digits, underscores)"
        )
    return name


def memory_bytes(size: str) -> int:
    """Spark's memory syntax (``512m``, ``2g``, ``2048`` = MiB) in bytes."""
    match = _MEMORY.fullmatch(size.strip())
    if not match:
        raise ConfigurationError(f"driver memory {size!r} must look like '2g' or '512m'")
    return int(match.group(1)) << _MEMORY_SHIFT[match.group(2).lower()]


def is_uri(location: str) -> bool:
    return _URI.match(location) is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class DestinationConfig:
    warehouse: str = DEFAULT_WAREHOUSE
    catalog: str = DEFAULT_CATALOG
    spark_master: str = DEFAULT_MASTER
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    jar_source: str = "bundled"
    spark_conf: tuple[tuple[str, str], ...] = ()
    batch_file_format: str = DEFAULT_BATCH_FILE_FORMAT


def _value(configuration: Mapping[str, str], key: str, default: str) -> str:
    value = configuration.get(key, "").strip()
    return value or default


def parse_spark_conf(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in re.split(r"[;\n]", text):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.startswith("spark."):
            raise ConfigurationError(
                f"spark_conf entry {key or item!r} must look like 'spark.some.setting=value'"
            )
        pairs.append((key, value))
    return tuple(pairs)


def parse_config(configuration: Mapping[str, str]) -> DestinationConfig:
    catalog = check_catalog_name(_value(configuration, "catalog", DEFAULT_CATALOG))
    memory = _value(configuration, "driver_memory", DEFAULT_DRIVER_MEMORY)
    memory_bytes(memory)  # validates
    jar_source = _value(configuration, "jar_source", "bundled").lower()
    if jar_source not in JAR_SOURCES:
        raise ConfigurationError(
            f"jar_source {jar_source!r} must be one of: {', '.join(JAR_SOURCES)}"
        )
    batch_file_format = _value(
        configuration, "batch_file_format", DEFAULT_BATCH_FILE_FORMAT
    ).lower()
    if batch_file_format not in BATCH_FILE_FORMATS:
        raise ConfigurationError(
            f"batch_file_format {batch_file_format!r} must be one of: "
            f"{', '.join(BATCH_FILE_FORMATS)}"
        )
    return DestinationConfig(
        warehouse=_value(configuration, "warehouse", DEFAULT_WAREHOUSE),
        catalog=catalog,
        spark_master=_value(configuration, "spark_master", DEFAULT_MASTER),
        driver_memory=memory,
        jar_source=jar_source,
        spark_conf=parse_spark_conf(configuration.get("spark_conf", "")),
        batch_file_format=batch_file_format,
    )
