"""The Spark settings that define an Iceberg catalog, per catalog type (pure: no pyspark).

Iceberg's ``SparkCatalog`` reads ``spark.sql.catalog.<name>.*`` the first time a name is used:

- ``hadoop`` (default): metadata and data under one warehouse path or URI; commits by atomic
  rename on that file system, so one writer process per warehouse.
- ``rest``: an Iceberg REST catalog service (Polaris, Unity Catalog, Nessie, Glue, Tabular…):
  ``uri``, optional ``credential`` (OAuth2 ``client_id:client_secret``) and ``warehouse``
  (a warehouse *name* or location, as the service defines it).
- ``hive``: a Hive metastore (``thrift://host:9083``); ``warehouse`` is optional.

A catalog's tables live on local storage (a path, or a URI every node shares) or on S3
(``storage``: Iceberg's ``S3FileIO`` with the properties ``runtime.spark.storage`` makes). The
Hadoop catalog is refused on S3: it commits by renaming a file, which S3 cannot do atomically
(Iceberg's documentation says it needs an atomic rename), so a second writer or a crash in the
middle of a commit can lose a commit; the message names the catalogs to use instead.

Further catalog properties (``header.*``, ``scope``…) go through ``spark_conf`` as
``spark.sql.catalog.<name>.<property>``; the keys below are managed here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Final

from spark_destination.core.config import CatalogAuth, CatalogType, TableFormat
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.parsers import check_catalog_name, is_uri
from spark_destination.runtime.spark.storage import (
    MANAGED_S3_PROPERTIES,
    S3Storage,
    is_s3_location,
)

ICEBERG_CATALOG_CLASS: Final = "org.apache.iceberg.spark.SparkCatalog"


# How long Iceberg's Hive catalog keeps asking a metastore to *create* a commit lock (not to
# wait for one another writer holds). Iceberg's default is 3 minutes: a metastore that cannot
# create locks at all (no transaction tables) then stalls every commit that long before it
# fails. A metastore that answers creates a lock in milliseconds.
HIVE_LOCK_CREATION_TIMEOUT: Final = ("hadoop.iceberg.hive.lock-creation-timeout-ms", "5000")

# Catalog properties the destination sets itself; spark_conf may set any other one.
MANAGED_PROPERTIES: Final = frozenset(
    {
        "type",
        "warehouse",
        "uri",
        "credential",
        "use-nullable-query-schema",
        HIVE_LOCK_CREATION_TIMEOUT[0],
        *MANAGED_S3_PROPERTIES,
    }
)
# A catalog property whose value is a key or a secret: never in a message. "key" covers the
# access key id beside the secret key: a message that compared catalogs showed the id.
_SECRET_WORDS: Final = ("key", "secret", "credential", "password", "token")
# The default service name a REST catalog's SigV4 requests are signed for (S3 Tables).
DEFAULT_SIGNING_NAME: Final = "s3tables"


def is_secret_property(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in _SECRET_WORDS)


_NOT_ON_S3: Final = (
    "the Hadoop catalog cannot keep tables on S3: it commits by renaming a file, which S3 "
    "cannot do atomically, so a second writer or a crash in the middle of a commit can lose "
    "commits. Use catalog_type rest (S3 Tables, Glue's Iceberg REST endpoint, Polaris, Nessie, "
    "…) or hive (a Hive metastore)"
)


def absolute_warehouse(location: str | os.PathLike[str]) -> str:
    """A warehouse location with local paths made absolute; URIs are kept as they are."""
    text = os.fspath(location)
    if not text.strip():
        raise ConfigurationError("warehouse location is empty")
    if is_uri(text):
        return text
    return os.path.abspath(os.path.expanduser(text))


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogSpec:
    """One Iceberg catalog as Spark sees it. Hadoop warehouses are made absolute here."""

    name: str
    type: CatalogType = CatalogType.HADOOP
    warehouse: str = ""
    uri: str = ""
    # An OAuth2 client credential: never in logs or reprs.
    credential: str = field(default="", repr=False)
    # Where the tables' files are: None for local storage.
    s3: S3Storage | None = None
    auth: CatalogAuth = CatalogAuth.OAUTH2
    signing_name: str = DEFAULT_SIGNING_NAME
    # The format the request's tables are in. The Hadoop catalog's refusal of S3 is Iceberg's
    # (its commit is a rename); Delta tables commit through Delta's own log, so Delta on S3
    # may go without a metastore (its tables found again in the bucket, ``delta_tables``).
    table_format: TableFormat = TableFormat.ICEBERG

    def __post_init__(self) -> None:
        check_catalog_name(self.name)
        object.__setattr__(self, "type", _catalog_type(self.type))
        self._check_storage()
        match self.type:
            case CatalogType.HADOOP:
                object.__setattr__(self, "warehouse", absolute_warehouse(self.warehouse))
                if self.uri or self.credential:
                    raise ConfigurationError(
                        "catalog_uri and catalog_credential apply to catalog_type rest or hive, "
                        "not hadoop"
                    )
            case CatalogType.REST:
                if not self.uri:
                    raise ConfigurationError(
                        "catalog_type rest needs catalog_uri (the REST service's base URL)"
                    )
            case CatalogType.HIVE:
                if not self.uri:
                    raise ConfigurationError(
                        "catalog_type hive needs catalog_uri (thrift://metastore-host:9083)"
                    )
                if self.credential:
                    raise ConfigurationError("catalog_credential applies to catalog_type rest")
                if self.warehouse and not is_uri(self.warehouse):
                    object.__setattr__(self, "warehouse", absolute_warehouse(self.warehouse))

    def _check_storage(self) -> None:
        """The rules between the catalog, its warehouse and the storage."""
        on_s3 = bool(self.warehouse) and is_s3_location(self.warehouse)
        iceberg = self.table_format is TableFormat.ICEBERG
        if self.type is CatalogType.HADOOP and (self.s3 is not None or on_s3) and iceberg:
            raise ConfigurationError(_NOT_ON_S3)
        if self.type is CatalogType.HIVE and self.s3 is not None and not on_s3:
            raise ConfigurationError(
                "catalog_type hive with storage s3 needs warehouse s3://bucket/prefix: the "
                "namespaces' default location (the metastore's own default is a local path)"
            )
        if self.s3 is None and on_s3:
            raise ConfigurationError(
                f"warehouse {self.warehouse!r} is on S3: set storage s3 (with s3_region and "
                "credentials)"
            )
        if self.auth is CatalogAuth.SIGV4:
            if self.type is not CatalogType.REST:
                raise ConfigurationError("catalog_auth sigv4 applies to catalog_type rest")
            if self.s3 is None:
                raise ConfigurationError(
                    "catalog_auth sigv4 signs with the S3 region and credentials: set storage s3"
                )
            if self.credential:
                raise ConfigurationError(
                    "catalog_credential applies to catalog_auth oauth2, not sigv4"
                )

    @property
    def prefix(self) -> str:
        return f"spark.sql.catalog.{self.name}"

    @property
    def local_warehouse(self) -> str | None:
        """The warehouse's path on this host, when it is a plain local path."""
        if self.type is CatalogType.REST or not self.warehouse or is_uri(self.warehouse):
            return None
        return self.warehouse

    def conf(self) -> tuple[tuple[str, str], ...]:
        """The settings that define this catalog. The class key comes last: catalogs are loaded
        on first use by name, so a reader that sees the class also sees the rest."""
        entries: list[tuple[str, str]] = [(f"{self.prefix}.type", self.type.value)]
        if self.uri:
            entries.append((f"{self.prefix}.uri", self.uri))
        if self.credential:
            entries.append((f"{self.prefix}.credential", self.credential))
        if self.warehouse:
            entries.append((f"{self.prefix}.warehouse", self.warehouse))
        if self.type is CatalogType.HIVE:
            key, value = HIVE_LOCK_CREATION_TIMEOUT
            entries.append((f"{self.prefix}.{key}", value))
        if self.s3 is not None:
            entries += [(f"{self.prefix}.{k}", v) for k, v in self.s3.file_io_properties()]
            if self.auth is CatalogAuth.SIGV4:
                signing = self.s3.sigv4_properties(self.signing_name)
                entries += [(f"{self.prefix}.{k}", v) for k, v in signing]
        # REPLACE TABLE ... AS SELECT (the AlterTable rewrite) keeps the query's nullability,
        # so key columns stay required, which identifier fields need. Iceberg's default makes
        # every column of such a table nullable.
        entries.append((f"{self.prefix}.use-nullable-query-schema", "false"))
        entries.append((self.prefix, ICEBERG_CATALOG_CLASS))
        return tuple(entries)

    def describe(self) -> str:
        """For messages: the type and where it points (never a credential)."""
        where = self.uri or self.warehouse
        if self.type is CatalogType.REST and self.warehouse:
            where = f"{self.uri} (warehouse {self.warehouse})"
        on = f", files on {self.s3.describe()}" if self.s3 is not None else ""
        return f"{self.type.value} catalog at {where}{on}"


def _catalog_type(value: CatalogType | str) -> CatalogType:
    try:
        return CatalogType(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(t.value for t in CatalogType)
        raise ConfigurationError(f"catalog_type {value!r} is not one of: {choices}") from None


def is_managed_key(key: str, catalog: str) -> bool:
    """Whether a ``spark.*`` key belongs to the catalog settings the destination manages."""
    prefix = f"spark.sql.catalog.{catalog}"
    if key == prefix:
        return True
    return key.startswith(prefix + ".") and key[len(prefix) + 1 :] in MANAGED_PROPERTIES


def unshared_warehouse_problem(
    spec: CatalogSpec, *, master: str, executor_hosts: set[str], local_hosts: set[str]
) -> str | None:
    """Why executors on other hosts cannot use this warehouse, or None when they can.

    A plain path names a folder on *each* machine: executors on other hosts would write data
    files to their own disks while the driver commits metadata pointing at files it cannot see,
    so the table breaks on the first read. A URI (``file:///mnt/shared/…`` on a mount every
    node has, ``s3a://``, ``hdfs://``…) is taken as the operator's statement that it is shared.
    """
    if master.strip().startswith("local") or spec.local_warehouse is None:
        return None
    remote = sorted(h for h in executor_hosts if h not in local_hosts and not _loopback(h))
    if not remote:
        return None
    return (
        f"warehouse {spec.local_warehouse} is a local path, but Spark executors run on other "
        f"hosts ({', '.join(remote)}): each would write data files to its own disk and the "
        "tables would point at files other nodes cannot read. Use storage every node sees: "
        "an object store (s3a://, gs://, abfss://), HDFS, or a shared mount given as a "
        "file:// URI (file:///mnt/shared/warehouse)"
    )


def _loopback(host: str) -> bool:
    return host == "localhost" or host.startswith("127.") or host == "::1"
