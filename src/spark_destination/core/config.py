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
- ``extra_packages``: Maven coordinates (comma-separated) added to ``spark.jars.packages``.
- ``executor_memory`` / ``executor_cores``: per executor on a cluster. Fixed when the JVM starts.
- ``catalog_type``: ``hadoop`` (default), ``rest`` or ``hive``; ``catalog_uri`` (REST base URL
  or ``thrift://`` metastore) and ``catalog_credential`` (REST OAuth2 ``id:secret``).
- ``maintenance_every_commits`` / ``maintenance_delete_files``: opt-in automatic table
  maintenance after that many commits to a table, or once it has that many delete files
  (0 = off); ``snapshot_retention_hours``: how long ``maintain`` keeps old snapshots.
- ``batch_file_format``: ``csv`` (default) or ``parquet``: the batch-file format Capabilities
  announce (Capabilities carries no configuration, so the ``serve`` default decides what
  Fivetran sends) and the reader used for a request's files.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote, urlsplit

from spark_destination.core.errors import ConfigurationError

DEFAULT_WAREHOUSE: Final = "./warehouse"
DEFAULT_CATALOG: Final = "lake"
DEFAULT_MASTER: Final = "local[*]"
DEFAULT_DRIVER_MEMORY: Final = "2g"
JAR_SOURCES: Final = ("bundled", "maven")
CATALOG_TYPES: Final = ("hadoop", "rest", "hive")
DEFAULT_SNAPSHOT_RETENTION_HOURS: Final = 168  # 7 days
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
# The master URL forms Spark accepts (SparkContext.createTaskScheduler): anything else fails
# deep inside JVM start-up, or, on a running session, reads as "needs a restart".
_MASTER = re.compile(
    r"(local(\[(\*|[0-9]+)(,[0-9]+)?\])?"
    r"|local-cluster\[[0-9]+,[0-9]+,[0-9]+\]"
    r"|spark://[^\s/,]+:[0-9]+(,[^\s/,]+:[0-9]+)*"
    r"|yarn"
    r"|k8s://\S+"
    r"|mesos://\S+)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DestinationConfig:
    warehouse: str = DEFAULT_WAREHOUSE
    catalog: str = DEFAULT_CATALOG
    spark_master: str = DEFAULT_MASTER
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    jar_source: str = "bundled"
    spark_conf: tuple[tuple[str, str], ...] = ()
    executor_memory: str = ""
    executor_cores: int | None = None
    extra_packages: tuple[str, ...] = ()
    catalog_type: str = "hadoop"
    catalog_uri: str = ""
    catalog_credential: str = field(default="", repr=False)
    maintenance_every_commits: int = 0
    maintenance_delete_files: int = 0
    snapshot_retention_hours: int = DEFAULT_SNAPSHOT_RETENTION_HOURS
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


def _count(configuration: Mapping[str, str], key: str, default: int, *, minimum: int) -> int:
    text = _value(configuration, key, str(default))
    if not text.isdigit() or int(text) < minimum:
        raise ConfigurationError(f"{key} {text!r} must be a whole number >= {minimum}")
    return int(text)


_COORDINATE = re.compile(r"^[\w.-]+:[\w.-]+:[\w.+-]+$")


def _packages(text: str) -> tuple[str, ...]:
    packages = tuple(p.strip() for p in text.split(",") if p.strip())
    for package in packages:
        if not _COORDINATE.match(package):
            raise ConfigurationError(
                f"extra_packages entry {package!r} must be a Maven coordinate "
                "'group:artifact:version'"
            )
    return packages


def parse_config(configuration: Mapping[str, str]) -> DestinationConfig:
    catalog = check_catalog_name(_value(configuration, "catalog", DEFAULT_CATALOG))
    memory = _value(configuration, "driver_memory", DEFAULT_DRIVER_MEMORY)
    memory_bytes(memory)  # validates
    jar_source = _value(configuration, "jar_source", "bundled").lower()
    if jar_source not in JAR_SOURCES:
        raise ConfigurationError(
            f"jar_source {jar_source!r} must be one of: {', '.join(JAR_SOURCES)}"
        )
    executor_memory = _value(configuration, "executor_memory", "")
    if executor_memory and not _MEMORY.fullmatch(executor_memory):
        raise ConfigurationError(f"executor_memory {executor_memory!r} must look like '4g'")
    cores = _value(configuration, "executor_cores", "")
    catalog_type = _value(configuration, "catalog_type", "hadoop").lower()
    if catalog_type not in CATALOG_TYPES:
        raise ConfigurationError(
            f"catalog_type {catalog_type!r} must be one of: {', '.join(CATALOG_TYPES)}"
        )
    if catalog_type == "rest" and jar_source == "bundled":
        # The runtime jar on PyPI lacks Iceberg's shaded HttpClient 5, which the REST client
        # needs: it would fail on the first request with a NoClassDefFoundError.
        raise ConfigurationError(
            "catalog_type rest needs jar_source maven (the bundled Iceberg jar lacks the "
            "HTTP client the REST catalog uses)"
        )
    batch_file_format = _value(
        configuration, "batch_file_format", DEFAULT_BATCH_FILE_FORMAT
    ).lower()
    if batch_file_format not in BATCH_FILE_FORMATS:
        raise ConfigurationError(
            f"batch_file_format {batch_file_format!r} must be one of: "
            f"{', '.join(BATCH_FILE_FORMATS)}"
        )
    master = _value(configuration, "spark_master", DEFAULT_MASTER)
    if not _MASTER.fullmatch(master):
        raise ConfigurationError(
            f"spark_master {master!r} is not a Spark master URL (local[*], local[N], "
            "spark://host:port, yarn, k8s://…)"
        )
    return DestinationConfig(
        warehouse=_value(configuration, "warehouse", DEFAULT_WAREHOUSE),
        catalog=catalog,
        spark_master=master,
        driver_memory=memory,
        jar_source=jar_source,
        spark_conf=parse_spark_conf(configuration.get("spark_conf", "")),
        executor_memory=executor_memory,
        extra_packages=_packages(configuration.get("extra_packages", "")),
        executor_cores=_count(configuration, "executor_cores", 1, minimum=1) if cores else None,
        catalog_type=catalog_type,
        catalog_uri=_value(configuration, "catalog_uri", ""),
        catalog_credential=_value(configuration, "catalog_credential", ""),
        maintenance_every_commits=_count(
            configuration, "maintenance_every_commits", 0, minimum=0
        ),
        maintenance_delete_files=_count(configuration, "maintenance_delete_files", 0, minimum=0),
        snapshot_retention_hours=_count(
            configuration, "snapshot_retention_hours", DEFAULT_SNAPSHOT_RETENTION_HOURS, minimum=0
        ),
        batch_file_format=batch_file_format,
    )


# --- Which warehouses a request may name (set by the operator, never by a request) ----------

# The operator's allow-list, when not given as ``serve --allowed-warehouse``: comma-separated.
ALLOWED_WAREHOUSES_ENV: Final = "SPARK_DESTINATION_ALLOWED_WAREHOUSES"


def allowed_warehouses_from_env(environ: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(w.strip() for w in environ.get(ALLOWED_WAREHOUSES_ENV, "").split(",") if w.strip())


def _normalized(location: str) -> tuple[str, str]:
    """``(scheme, path)`` with the path made absolute and free of ``.``/``..`` segments and
    symbolic links (local paths and ``file:`` URIs) or normalised lexically (other URIs, whose
    authority stays part of the scheme)."""
    text = location.strip()
    if is_uri(text):
        parsed = urlsplit(text)
        scheme = parsed.scheme.lower()
        if scheme != "file":
            path = posixpath.normpath("/" + unquote(parsed.path).lstrip("/"))
            return f"{scheme}://{parsed.netloc.lower()}", path
        text = unquote(parsed.path)
    return "", os.path.realpath(os.path.abspath(os.path.expanduser(text)))


def warehouse_allowed(warehouse: str, allowed: tuple[str, ...]) -> bool:
    """``warehouse`` is one of the ``allowed`` roots or inside one (an empty list allows all).

    Local paths compare after resolving symbolic links, so a link inside an allowed root that
    points elsewhere does not lead out of it; ``..`` never does.
    """
    if not allowed:
        return True
    scheme, path = _normalized(warehouse)
    for root in allowed:
        root_scheme, root_path = _normalized(root)
        if scheme == root_scheme and (
            path == root_path or path.startswith(root_path.rstrip("/") + "/")
        ):
            return True
    return False


def check_warehouse_allowed(warehouse: str, allowed: tuple[str, ...]) -> None:
    if not warehouse_allowed(warehouse, allowed):
        raise ConfigurationError(
            f"warehouse {warehouse!r} is not one this server allows: its operator limits "
            f"requests to a list of warehouse locations (serve --allowed-warehouse, "
            f"{ALLOWED_WAREHOUSES_ENV}); choose a warehouse inside one of them"
        )
