"""The destination's configuration: every key declared once (pure).

A request's ``configuration`` map (the ConfigurationForm's fields) is parsed into
``DestinationConfig``; keys a request leaves empty take the server's flags, then the defaults
declared here. Each field of ``DestinationConfig`` *is* a key's declaration: its name, its type
(the annotation), its default, and — through ``setting(...)`` — its parser (text -> value, the
validation), its label and description, its form kind (text, secret, dropdown with choices,
toggle) and whether it is fixed when Spark starts (needs a new JVM). Everything else derives
from that one declaration by iterating ``dataclasses.fields``:

- the ConfigurationForm (``server/form.py``),
- one ``--kebab-case`` flag per key on ``serve`` and on ``main.py`` (``cli/flags.py``), whose
  values are the defaults a request's empty keys take,
- the keys the JSON request form accepts (``engine/request_json.py``: an unknown key fails),
- ``parse_config`` (each key's parser; a rule between keys is ``__post_init__``).

**Adding a key** is one field here plus its use: declare it with ``setting(default, parse=...,
label=..., description=...)`` (and ``kind``/``new_jvm``/``placeholder`` where they apply), read
it as ``config.your_key`` where it matters, and add a row to the README's configuration table (a
test checks the README lists exactly these keys). Nothing else lists keys.

``OperatorConfig`` declares, the same way, what only the operator sets (flags and environment,
never a request): the warehouse allow-list.

Beside it, one job each: ``core.settings`` (what a declaration is, and parsing a settings
dataclass from text), ``core.parsers`` (each key's text -> value parser), ``core.warehouses``
(checking a request's warehouse against the operator's allow-list).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_destination.core import parsers
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.names import OWN_PREFIX
from spark_destination.core.parsers import OFF
from spark_destination.core.settings import (
    FormKind,
    InvalidValue,
    parse_settings,
    setting,
    settings_of,
)
from spark_destination.core.warehouses import ALLOWED_WAREHOUSES_ENV


@dataclass(frozen=True, slots=True, kw_only=True)
class TableOverride:
    """One layout key set for one table: ``table`` is ``schema.table`` as the request names it."""

    table: str
    key: str
    value: Any


def parse_table_overrides(text: str) -> tuple[TableOverride, ...]:
    """``schema.table: key=value, key=value; …`` -> overrides, each value parsed by its key's
    own parser (so an override is validated exactly as the key is)."""
    parsers = {key: meta.parse for key, meta in settings_of(DestinationConfig)}
    overrides = []
    for entry in re.split(r"[;\n]", text):
        if not entry.strip():
            continue
        table, sep, pairs = entry.rpartition(":")
        table = table.strip()
        if not sep or not table:
            raise InvalidValue(f"entry {entry.strip()!r} must look like 'schema.table: key=value'")
        for pair in pairs.split(","):
            key, sep, value = (part.strip() for part in pair.partition("="))
            if not sep or key not in LAYOUT_KEYS or not value:
                raise InvalidValue(
                    f"{pair.strip()!r} for {table!r} must be key=value with a key among "
                    + ", ".join(LAYOUT_KEYS)
                )
            try:
                parsed = parsers[key](value)
            except InvalidValue as exc:
                raise InvalidValue(f"{key} of {table!r}: {exc}") from None
            overrides.append(TableOverride(table=table, key=key, value=parsed))
    return tuple(overrides)


# --- The keys --------------------------------------------------------------------------------


class JarSource(enum.StrEnum):
    """Where the JVM's jars (Iceberg, its AWS bundle, Delta) come from; the same pinned
    artifacts either way (``runtime/spark/artifacts.py``)."""

    # The jars `spark-destination install-jars` fetched and checked once, at install (a frozen
    # program carries them): nothing is fetched while serving.
    INSTALLED = "installed"
    # spark.jars.packages: Spark's resolver fetches the pinned coordinates when the JVM
    # starts (a machine that reaches a Maven repository at every start).
    MAVEN = "maven"


class WriteMode(enum.StrEnum):
    """How a WriteBatch reaches its table."""

    # One MERGE into the table per request.
    MERGE = "merge"
    # Append to the table's intermediate table; merge flushes fold the pending batches in later.
    DEFERRED = "deferred"


class TableFormat(enum.StrEnum):
    """The open table format the destination's tables are written in."""

    # Apache Iceberg, in the configured catalog.
    ICEBERG = "iceberg"
    # Delta Lake (delta-spark in the same JVM), in Spark's session catalog, one folder per
    # table under the warehouse.
    DELTA = "delta"


class CatalogType(enum.StrEnum):
    HADOOP = "hadoop"
    REST = "rest"
    HIVE = "hive"


class Storage(enum.StrEnum):
    """Where the lake's files live."""

    # A path on this machine, or a URI every Spark node reaches (file:// on a shared mount).
    LOCAL = "local"
    # Amazon S3 or an S3-compatible store (by endpoint), through Iceberg's S3FileIO.
    S3 = "s3"


class S3Credentials(enum.StrEnum):
    """How the destination signs its S3 requests."""

    # An access key id and secret access key given in the configuration.
    KEYS = "keys"
    # The AWS SDK's default chain (environment, web identity, the instance's or container's
    # role): for a destination running inside the account that owns the bucket.
    DEFAULT_CHAIN = "default_chain"


class CatalogAuth(enum.StrEnum):
    """How the destination authenticates to a REST catalog."""

    # OAuth2 client credentials (catalog_credential), or none when that is empty.
    OAUTH2 = "oauth2"
    # AWS Signature V4 with the S3 credentials and region (S3 Tables, Glue's Iceberg REST
    # endpoint, SeaweedFS).
    SIGV4 = "sigv4"


class LayoutStyle(enum.StrEnum):
    """How a table's rows are laid out in its data files (``docs/architecture.md``, "Lake-scale
    layout"): what lets a small batch's key filter skip most of a large table."""

    # Rows sorted by the primary key within every file written (Iceberg's ``WRITE LOCALLY
    # ORDERED BY``), small Parquet row groups, a bloom filter on each key column; maintenance
    # compacts with the sort strategy, so the table ends up sorted as a whole.
    SORTED = "sorted"
    # ``bucket(bucket_count, <first key column>)`` partitions plus the sorted layout's row
    # groups and bloom filters.
    BUCKETED = "bucketed"
    # No order (files in arrival order), 4 MiB row groups: the layout of tables created before.
    PLAIN = "plain"


class FormatVersion(enum.StrEnum):
    """Iceberg's table format version: 3 records deletes as deletion vectors."""

    V2 = "2"
    V3 = "3"


class BatchFileFormat(enum.StrEnum):
    """The batch-file format the destination announces in Capabilities and reads."""

    CSV = "csv"
    PARQUET = "parquet"


class BadValuePolicy(enum.StrEnum):
    """What a batch write does with a non-key value its column cannot hold."""

    # The request fails, naming file, row, column and type; the table stays as it was.
    FAIL = "fail"
    # The value is written as NULL, the row kept, the change recorded in the changes table
    # and the request answers a Warning (``planner.bad_values``).
    NULL = "null"


# The keys whose values decide which other fields the form shows (``Setting.shown_when``).
STORAGE: Final = "storage"
CATALOG_TYPE: Final = "catalog_type"
WRITE_MODE: Final = "write_mode"
BAD_VALUE_POLICY: Final = "bad_value_policy"
ADVANCED: Final = (("advanced_settings", "true"),)


@dataclass(frozen=True, slots=True, kw_only=True)
class DestinationConfig:
    """One request's configuration: the declaration of every key (see the module docstring)."""

    storage: Storage = setting(
        Storage.LOCAL,
        parse=parsers.choice(Storage),
        label="Storage",
        description="Where the lake's files live: local (a path, or a mount every Spark node "
        "shares) or s3 (Amazon S3 or an S3-compatible store).",
        kind=FormKind.DROPDOWN,
    )
    s3_region: str = setting(
        "",
        shown_when=((STORAGE, "s3"),),
        parse=parsers.region,
        label="S3 region",
        description="The bucket's region, e.g. us-east-1 (required: it is never looked up, so "
        "no sync waits on the EC2 metadata service). Stores without regions take any.",
        placeholder="us-east-1",
    )
    s3_endpoint: str = setting(
        "",
        shown_when=((STORAGE, "s3"),),
        parse=parsers.http_url,
        label="S3 endpoint",
        description="For an S3-compatible store (MinIO, SeaweedFS, Ceph, R2…): its URL; "
        "requests then use path-style addressing. Empty: AWS's endpoint for the region.",
        placeholder="https://storage.example.com",
    )
    s3_credentials: S3Credentials = setting(
        S3Credentials.KEYS,
        shown_when=((STORAGE, "s3"),),
        parse=parsers.choice(S3Credentials),
        label="S3 credentials",
        description="keys: the access key below. default_chain: the AWS SDK's default "
        "credential chain (environment, web identity, instance or container role), for a "
        "destination that runs inside the AWS account owning the bucket.",
        kind=FormKind.DROPDOWN,
    )
    s3_access_key_id: str = setting(
        "",
        shown_when=((STORAGE, "s3"),),
        parse=parsers.text,
        label="S3 access key id",
        description="With credentials keys: the access key id.",
    )
    s3_secret_access_key: str = setting(
        "",
        shown_when=((STORAGE, "s3"),),
        parse=parsers.text,
        label="S3 secret access key",
        description="With credentials keys: the secret access key (never logged or shown).",
        kind=FormKind.SECRET,
    )
    warehouse: str = setting(
        "./warehouse",
        parse=parsers.text,
        label="Warehouse",
        description="Where the tables live: a path (local storage), s3://bucket/prefix (S3 "
        "with a Hive metastore), or the warehouse a REST catalog names (e.g. s3://table-bucket "
        "or a catalog name). Every Spark executor must be able to reach it.",
        placeholder="/data/warehouse or s3://bucket/lake",
    )
    catalog: str = setting(
        "lake",
        shown_when=ADVANCED,
        parse=parsers.catalog_name,
        label="Catalog name",
        description="Name of the Iceberg catalog in Spark SQL (letters, digits, underscores).",
        placeholder="lake",
    )
    spark_master: str = setting(
        "local[*]",
        shown_when=ADVANCED,
        parse=parsers.master_url,
        label="Spark master URL",
        description="Where Spark runs: local[*] runs it inside the destination.",
        placeholder="local[*] or spark://host:7077",
        new_jvm=True,
        flag_aliases=("master",),
    )
    driver_memory: str = setting(
        "2g",
        shown_when=ADVANCED,
        parse=parsers.memory,
        label="Spark driver memory",
        description="Memory of the Spark driver, e.g. 2g or 512m.",
        placeholder="2g",
        new_jvm=True,
    )
    jar_source: JarSource = setting(
        JarSource.INSTALLED,
        shown_when=ADVANCED,
        parse=parsers.choice(JarSource, aliases={"bundled": JarSource.INSTALLED}),
        label="Jar source",
        description="installed: the pinned jars installed with the destination (no network "
        "while serving). maven: the same jars resolved from Maven when Spark starts.",
        kind=FormKind.DROPDOWN,
        new_jvm=True,
    )
    spark_conf: tuple[tuple[str, str], ...] = setting(
        (),
        shown_when=ADVANCED,
        parse=parsers.spark_conf,
        label="Extra Spark settings",
        description="spark.* settings as key=value pairs separated by ';' or new lines, e.g. "
        "spark.executor.memory=4g. Runtime SQL settings apply to the request's own session; "
        "the others are fixed when the destination starts Spark.",
        placeholder="spark.executor.memory=4g; spark.executor.cores=2",
    )
    batch_file_format: BatchFileFormat = setting(
        BatchFileFormat.CSV,
        parse=parsers.choice(BatchFileFormat),
        label="Batch file format",
        description="The format Fivetran writes batch files in: CSV or Parquet. Set when the "
        "server starts (serve --batch-file-format); Capabilities announce it and the reader "
        "expects it. Not a form field: Capabilities carry no configuration, so a request's value "
        "could only disagree with the files Fivetran sends.",
        kind=FormKind.DROPDOWN,
        server_only=True,
    )
    table_format: TableFormat = setting(
        TableFormat.ICEBERG,
        parse=parsers.choice(TableFormat),
        label="Table format",
        description="iceberg: Apache Iceberg tables in the configured catalog. delta: Delta "
        "Lake tables, one folder per table under the warehouse (a local or shared-mount path, "
        "or S3), registered in the Hive metastore with the hive catalog type (not rest).",
        kind=FormKind.DROPDOWN,
    )
    write_mode: WriteMode = setting(
        WriteMode.MERGE,
        parse=parsers.choice(WriteMode),
        label="Write mode",
        description="merge: each WriteBatch merges into its table at once. deferred: each "
        "WriteBatch appends to the table's intermediate table without reading the table, and "
        "a merge flush folds the pending batches into it later (on the timer, the threshold, "
        "before schema changes, truncates, migrations and history batches, and at stop); "
        "readers see the table as of the last flush.",
        kind=FormKind.DROPDOWN,
    )
    merge_interval_ms: int = setting(
        60_000,
        shown_when=((WRITE_MODE, "deferred"),),
        parse=parsers.count_or_off(1),
        label="Merge interval (ms)",
        description="deferred mode: a table's pending batches are merged at most this long after "
        "the first of them was appended (-1: no timer).",
    )
    merge_records_threshold: int = setting(
        OFF,
        shown_when=((WRITE_MODE, "deferred"),),
        parse=parsers.count_or_off(1),
        label="Merge records threshold",
        description="deferred mode: merge a table as soon as it has this many pending rows "
        "(-1: off).",
    )
    intermediate_table_prefix: str = setting(
        OWN_PREFIX + "pending__",
        shown_when=((WRITE_MODE, "deferred"),),
        parse=parsers.reserved_prefix,
        label="Intermediate table prefix",
        description="deferred mode: a table's pending batches are kept in the table of this "
        f"name plus the table's name, in the same schema; it must start with {OWN_PREFIX} "
        "(a name Fivetran never gives a table).",
    )
    executor_memory: str = setting(
        "",
        shown_when=ADVANCED,
        parse=parsers.memory,
        label="Executor memory",
        description="spark.executor.memory on a cluster, e.g. 4g.",
        placeholder="4g",
        new_jvm=True,
    )
    executor_cores: int | None = setting(
        None,
        shown_when=ADVANCED,
        parse=parsers.count(1),
        label="Executor cores",
        description="spark.executor.cores on a cluster.",
        placeholder="2",
        new_jvm=True,
    )
    catalog_type: CatalogType = setting(
        CatalogType.HADOOP,
        parse=parsers.choice(CatalogType),
        label="Catalog type",
        description="hadoop: metadata in the warehouse folder; rest: an Iceberg REST catalog "
        "(Polaris, Unity Catalog, Nessie, Glue, S3 Tables); hive: a Hive metastore.",
        kind=FormKind.DROPDOWN,
    )
    catalog_uri: str = setting(
        "",
        shown_when=((CATALOG_TYPE, "rest"), (CATALOG_TYPE, "hive")),
        parse=parsers.text,
        label="Catalog URI",
        description="REST: the service's base URL; Hive: the metastore URI.",
        placeholder="https://catalog.example.com/api or thrift://metastore:9083",
    )
    catalog_auth: CatalogAuth = setting(
        CatalogAuth.OAUTH2,
        shown_when=((CATALOG_TYPE, "rest"),),
        parse=parsers.choice(CatalogAuth),
        label="Catalog authentication",
        description="REST: oauth2 (the credential below; none when it is empty) or sigv4 "
        "(AWS Signature V4 with the S3 credentials and region: S3 Tables, Glue's Iceberg REST "
        "endpoint).",
        kind=FormKind.DROPDOWN,
    )
    catalog_credential: str = setting(
        "",
        shown_when=((CATALOG_TYPE, "rest"),),
        parse=parsers.text,
        label="Catalog credential",
        description="REST with oauth2: the client credential 'client_id:client_secret'.",
        kind=FormKind.SECRET,
    )
    catalog_signing_name: str = setting(
        "s3tables",
        shown_when=((CATALOG_TYPE, "rest"),),
        parse=parsers.signing_name,
        label="Catalog signing name",
        description="REST with sigv4: the service name requests are signed for: s3tables (S3 "
        "Tables), glue (Glue), s3 (SeaweedFS).",
        placeholder="s3tables",
    )
    extra_packages: tuple[str, ...] = setting(
        (),
        shown_when=ADVANCED,
        parse=parsers.packages,
        label="Extra packages",
        description="Maven coordinates added to spark.jars.packages, comma-separated, "
        "resolved when Spark starts (the destination's own jars need none).",
        placeholder="org.example:some-library:1.0",
        new_jvm=True,
    )
    maintenance_every_commits: int = setting(
        # Lake scale: without it every small batch leaves a file and a snapshot behind, and
        # reads and MERGEs slow down; with a layout, a run rewrites only what batches added.
        100,
        shown_when=ADVANCED,
        parse=parsers.count(0),
        label="Maintain every N commits",
        description="Compact files and expire snapshots of a table after this many committed "
        "requests to it, between requests (0: off).",
    )
    maintenance_delete_files: int = setting(
        0,
        shown_when=ADVANCED,
        parse=parsers.count(0),
        label="Maintain past N delete files",
        description="Maintain a table once it has this many live delete files (0: off).",
    )
    maintenance_rewritten_deletes: int = setting(
        # Iceberg folds a data file's earlier position deletes into each new delete file: after
        # a big write, every small one rewrites its deletes until compaction (docs/operations.md).
        100_000,
        shown_when=ADVANCED,
        parse=parsers.count(0),
        label="Maintain after rewriting N deletes",
        description="Maintain a table, between requests, after a small write had to rewrite at "
        "least this many of its earlier position deletes while many of its rows are deleted "
        "(0: off).",
    )
    table_layout: LayoutStyle = setting(
        LayoutStyle.SORTED,
        shown_when=ADVANCED,
        parse=parsers.choice(LayoutStyle),
        label="Table layout",
        description="How new tables keep a key's rows together: sorted (by the primary key, "
        "small row groups, bloom filters on the key; maintenance re-sorts), bucketed "
        "(bucket(N, key) partitions, sorted inside), plain (arrival order). Existing tables "
        "take it at their next maintenance.",
        kind=FormKind.DROPDOWN,
    )
    row_group_size: str = setting(
        "1m",
        shown_when=ADVANCED,
        parse=parsers.row_group_size,
        label="Parquet row-group size",
        description="Target size of a Parquet row group in sorted and bucketed tables (e.g. "
        "1m, 512k): the unit a small batch's key filter skips. Plain tables keep 4m.",
        placeholder="1m",
    )
    bucket_count: int = setting(
        64,
        shown_when=ADVANCED,
        parse=parsers.count(2),
        label="Buckets (bucketed layout)",
        description="N of bucket(N, key) for tables with the bucketed layout.",
        placeholder="64",
    )
    format_version: FormatVersion = setting(
        FormatVersion.V2,
        shown_when=ADVANCED,
        parse=parsers.choice(FormatVersion),
        label="Iceberg format version",
        description="2, or 3 (deletion vectors instead of position-delete files; not every "
        "reader reads v3 tables yet). An existing v2 table is upgraded at its next "
        "maintenance; a v3 table is never downgraded.",
        kind=FormKind.DROPDOWN,
    )
    table_overrides: tuple[TableOverride, ...] = setting(
        (),
        shown_when=ADVANCED,
        parse=parse_table_overrides,
        label="Per-table layout overrides",
        description="Layout keys for single tables: 'schema.table: key=value, key=value' "
        "entries separated by ';' (keys: table_layout, row_group_size, bucket_count, "
        "format_version), e.g. 'sales.orders: table_layout=bucketed, bucket_count=128'.",
        placeholder="sales.orders: table_layout=bucketed, bucket_count=128",
    )
    snapshot_retention_hours: int = setting(
        168,  # 7 days
        shown_when=ADVANCED,
        parse=parsers.count(0),
        label="Snapshot retention (hours)",
        description="Maintenance expires snapshots older than this.",
    )
    bad_value_policy: BadValuePolicy = setting(
        BadValuePolicy.FAIL,
        parse=parsers.choice(BadValuePolicy),
        label="Bad values",
        description="fail: a non-key value its column cannot hold fails the sync and the "
        "table stays as it was. null: the value is written as NULL, the row is kept, the "
        "change is recorded in the changes table and the sync continues with a warning. Keys "
        "and unreadable files fail either way.",
        kind=FormKind.DROPDOWN,
    )
    changes_table: str = setting(
        OWN_PREFIX + "changes",
        shown_when=((BAD_VALUE_POLICY, "null"),),
        parse=parsers.reserved_table_name,
        label="Changes table",
        description="Table of each schema that records the values bad_value_policy null "
        "changed (table, column, NULLED or TRUNCATED, reason, batch file, row, primary key); "
        f"its name starts with {OWN_PREFIX}, which no Fivetran table can.",
        placeholder=OWN_PREFIX + "changes",
    )

    # Last: the form shows the advanced settings after it.
    advanced_settings: bool = setting(
        False,
        parse=parsers.yes_no,
        label="Show advanced settings",
        description="Spark, catalog name, batch files, maintenance and table layout settings; "
        "their defaults suit a first sync.",
        kind=FormKind.TOGGLE,
    )

    def layout_of(self, schema: str, table: str) -> LayoutSettings:
        """The layout keys for ``schema.table``: the table's overrides, else these keys."""
        values: dict[str, Any] = {key: getattr(self, key) for key in LAYOUT_KEYS}
        for override in self.table_overrides:
            if override.table == f"{schema}.{table}":
                values[override.key] = override.value
        return LayoutSettings(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutSettings:
    """The layout keys of one table (``DestinationConfig.layout_of``)."""

    table_layout: LayoutStyle
    row_group_size: str
    bucket_count: int
    format_version: FormatVersion

    @property
    def row_group_bytes(self) -> int:
        return parsers.size_bytes(self.row_group_size)


# The keys a table override may set: ``LayoutSettings``' fields, parsed as the keys are.
LAYOUT_KEYS: Final = tuple(f.name for f in dataclasses.fields(LayoutSettings))


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorConfig:
    """What only the operator sets (flags, environment), never a request."""

    allowed_warehouses: tuple[str, ...] = setting(
        (),
        parse=parsers.locations,
        label="Allowed warehouses",
        description="A warehouse path or URI requests may use, with everything inside it; "
        "repeatable or comma-separated (unset: any).",
        flag_aliases=("allowed-warehouse",),
        env=ALLOWED_WAREHOUSES_ENV,
        repeatable=True,
    )


# The keys only the server's start-up flags set (``Setting.server_only``).
SERVER_ONLY_KEYS: Final = frozenset(k for k, s in settings_of(DestinationConfig) if s.server_only)


def parse_config(configuration: Mapping[str, str]) -> DestinationConfig:
    return parse_settings(DestinationConfig, configuration)


def check_known_keys(configuration: Mapping[str, str]) -> None:
    """Refuse keys the model does not declare (a typo would otherwise be a silent default)."""
    known = [key for key, _ in settings_of(DestinationConfig)]
    unknown = sorted(set(configuration) - set(known))
    if unknown:
        raise ConfigurationError(
            f"unknown configuration key(s) {', '.join(map(repr, unknown))}; known keys: "
            + ", ".join(known)
        )


def operator_config(flags: Mapping[str, str], environ: Mapping[str, str]) -> OperatorConfig:
    """The operator's settings: each from its flag, else its environment variable."""
    texts = {
        key: flags.get(key) or (environ.get(meta.env, "") if meta.env else "")
        for key, meta in settings_of(OperatorConfig)
    }
    return parse_settings(OperatorConfig, texts)
