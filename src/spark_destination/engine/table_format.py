"""A request's table format: the dialect its SQL is rendered in, the Spark catalog its tables
are named in, and the settings the format needs (checked before anything runs)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final
from urllib.parse import urlsplit

from spark_destination.core.config import (
    CatalogType,
    DestinationConfig,
    Storage,
    TableFormat,
)
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.parsers import is_uri
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.spark_delta import SPARK_DELTA
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.runtime.spark.session import SESSION_CATALOG

# The executed dialect of each table format but Iceberg's (the engine is given that one).
OTHER_DIALECTS: Final = MappingProxyType({TableFormat.DELTA: SPARK_DELTA})


def configured_dialect(config: DestinationConfig) -> Dialect:
    """The executed dialect of ``config``'s table format."""
    return OTHER_DIALECTS.get(config.table_format, SPARK_ICEBERG)


def catalog_of(config: DestinationConfig) -> str:
    """The Spark catalog a request's tables are named in: Iceberg's own, or Spark's session
    catalog, which Delta's catalog is (``runtime.spark.session``)."""
    match config.table_format:
        case TableFormat.ICEBERG:
            return config.catalog
        case TableFormat.DELTA:
            return SESSION_CATALOG


def catalog_for(dialect: Dialect, config: DestinationConfig) -> str:
    """The Spark catalog ``dialect``'s statements name for ``config`` (a preview may choose a
    dialect other than the configuration's): Spark's session catalog for Delta as it runs
    here, else the configured catalog (on Databricks, the Unity Catalog name)."""
    return SESSION_CATALOG if dialect is SPARK_DELTA else config.catalog


def check_table_format(config: DestinationConfig) -> None:
    """Refuse settings the table format cannot work with, naming each."""
    if config.table_format is not TableFormat.DELTA:
        return
    problems = []
    if config.catalog_type is CatalogType.REST:
        problems.append(
            "catalog_type rest (Delta tables are registered in Spark's session catalog: in a "
            "Hive metastore with hive, else found again in the warehouse folder with hadoop)"
        )
    scheme = urlsplit(config.warehouse).scheme.lower() if is_uri(config.warehouse) else "file"
    if config.storage is Storage.LOCAL and scheme != "file":
        problems.append(
            "a warehouse URI other than file:// or, with storage s3, s3:// (Delta reaches "
            "other stores through Hadoop file systems this destination does not carry)"
        )
    if problems:
        raise ConfigurationError(
            "table_format delta does not work with " + "; ".join(problems) + " in this version"
        )
