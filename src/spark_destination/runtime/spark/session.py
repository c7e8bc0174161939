"""The one place a SparkSession is created, and the checks that keep it the only one.

A JVM is started once per process (5-7 s) and its start-up settings (master, driver memory,
jars) are fixed for its lifetime. So ``build_session`` refuses to run twice, a later request
is compared against the live session with ``check_compatible``, and an extra warehouse is
attached to the live session with ``register_catalog`` (catalog settings are read lazily, the
first time a catalog name is used, so they can be added at run time).

pyspark is imported inside the functions: importing this module must stay cheap for the
processes and tests that never start Spark.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from spark_destination.core.config import (
    CatalogAuth,
    CatalogType,
    DestinationConfig,
    JarSource,
    TableFormat,
)
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.parsers import memory_bytes
from spark_destination.runtime.spark import scratch
from spark_destination.runtime.spark.artifacts import (
    ICEBERG_RUNTIME,
    ICEBERG_VERSION,
    JarGroup,
    artifacts_of,
)
from spark_destination.runtime.spark.catalogs import (
    DEFAULT_SIGNING_NAME,
    CatalogSpec,
    is_managed_key,
    is_secret_property,
)
from spark_destination.runtime.spark.jars import INSTALL_COMMAND, live_groups, session_jars
from spark_destination.runtime.spark.java import ensure_java_env
from spark_destination.runtime.spark.java_values import per_jvm
from spark_destination.runtime.spark.storage import (
    MANAGED_S3A_PROPERTIES,
    S3Storage,
    is_s3_location,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


APP_NAME = "spark-destination"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# Delta Lake in the same JVM: its SQL extension beside Iceberg's, and its catalog as Spark's
# session catalog (DeltaCatalog works only there). Iceberg keeps its own catalog name, so
# ``lake.db.t`` is Iceberg and ``spark_catalog.db.t`` is Delta (or a plain Spark table).
DELTA_EXTENSIONS: Final = "io.delta.sql.DeltaSparkSessionExtension"
SESSION_CATALOG: Final = "spark_catalog"
SESSION_CATALOG_CONF: Final = f"spark.sql.catalog.{SESSION_CATALOG}"
DELTA_CATALOG_CLASS: Final = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
PARQUET_REBASE_CONFS: Final = (
    "spark.sql.parquet.datetimeRebaseModeInWrite",
    "spark.sql.parquet.int96RebaseModeInWrite",
    "spark.sql.parquet.datetimeRebaseModeInRead",
    "spark.sql.parquet.int96RebaseModeInRead",
)
# Where the session catalog puts a managed table: ``<dir>/<schema>.db/<table>``.
SESSION_WAREHOUSE_CONF: Final = "spark.sql.warehouse.dir"
# Spark passes its settings with this prefix to Hadoop's configuration, without it.
HADOOP_PREFIX: Final = "spark.hadoop."
# What keeps the session catalog's tables: ``in-memory`` (Spark's default, gone with the JVM)
# or ``hive``, a Hive metastore (``SESSION_METASTORE_CONF``). Both are read once, when the JVM
# starts.
CATALOG_IMPLEMENTATION_CONF: Final = "spark.sql.catalogImplementation"
HIVE_IMPLEMENTATION: Final = "hive"
SESSION_METASTORE_CONF: Final = f"{HADOOP_PREFIX}hive.metastore.uris"


# The configuration's defaults (core.config declares them) are the settings' defaults too.
_DEFAULT: Final = DestinationConfig()
# The fewest shuffle partitions a request runs with: a request on two task slots or fewer
# (``request_shuffle_partitions``).
FEWEST_SHUFFLE_PARTITIONS: Final = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkSettings:
    """Everything that decides how the SparkSession is built.

    ``warehouse`` is made absolute when the settings are created (for a Hadoop or Hive
    catalog), against the current directory at that moment, so a later ``chdir`` cannot move
    the data. URIs (``file://``, ``s3a://``) and REST warehouse names are kept as given.
    """

    master: str = _DEFAULT.spark_master
    warehouse: str = _DEFAULT.warehouse
    catalog: str = _DEFAULT.catalog
    driver_memory: str = _DEFAULT.driver_memory
    # Per executor, on a cluster (spark.executor.memory / .cores); empty keeps Spark's default.
    executor_memory: str = ""
    executor_cores: int | None = None
    catalog_type: CatalogType = CatalogType.HADOOP
    catalog_uri: str = ""
    catalog_credential: str = field(default="", repr=False)
    catalog_auth: CatalogAuth = CatalogAuth.OAUTH2
    catalog_signing_name: str = DEFAULT_SIGNING_NAME
    # The tables' files on S3 (Iceberg's S3FileIO), or None: local storage.
    s3: S3Storage | None = None
    # Maven coordinates added to spark.jars.packages (resolved by Spark when it starts).
    extra_packages: tuple[str, ...] = ()
    jars_mode: JarSource = JarSource.INSTALLED
    # The jar groups this JVM must have (``artifacts``); Iceberg's runtime always.
    jar_groups: frozenset[JarGroup] = frozenset({JarGroup.ICEBERG})
    # Arbitrary ``spark.*`` settings, applied last. Keys this module sets itself are refused
    # (they have their own field, or are invariants (ANSI casts, UTC) the SQL relies on),
    # except the shuffle partitions, which an operator may set per request.
    extra_conf: tuple[tuple[str, str], ...] = ()
    shuffle_partitions: int = FEWEST_SHUFFLE_PARTITIONS
    # Delta Lake beside Iceberg in this JVM (``DELTA_EXTENSIONS``): Delta's jars, extension
    # and session catalog, its managed tables under the warehouse when that is local. On by
    # default: ``table_format`` is a request's setting, and the JVM starts before any request.
    delta: bool = True
    # The table format of the configuration the JVM starts for: Delta reaches S3 through
    # Hadoop's S3A (``delta_s3``), whose jars a JVM for Iceberg on S3 goes without.
    table_format: TableFormat = TableFormat.ICEBERG

    def __post_init__(self) -> None:
        if not self.master.strip():
            raise ConfigurationError("Spark master is empty; expected e.g. 'local[*]'")
        spec = self.catalog_spec  # validates the catalog settings
        object.__setattr__(self, "warehouse", spec.warehouse)
        object.__setattr__(self, "catalog_type", spec.type)
        memory_bytes(self.driver_memory)  # validates
        if self.executor_memory:
            memory_bytes(self.executor_memory)
        if self.executor_cores is not None and not (
            isinstance(self.executor_cores, int) and self.executor_cores >= 1
        ):
            raise ConfigurationError(
                f"executor_cores must be a positive integer, got {self.executor_cores!r}"
            )
        object.__setattr__(self, "jars_mode", _jar_source(self.jars_mode))
        needed = {JarGroup.ICEBERG} | ({JarGroup.S3} if self.s3 is not None else set())
        needed |= {JarGroup.DELTA} if self.delta else set()
        needed |= {JarGroup.S3A} if self.delta_s3 else set()
        object.__setattr__(self, "jar_groups", self.jar_groups | needed)
        if isinstance(self.shuffle_partitions, bool) or not (
            isinstance(self.shuffle_partitions, int) and self.shuffle_partitions >= 1
        ):
            raise ConfigurationError(
                f"shuffle_partitions must be a positive integer, got {self.shuffle_partitions!r}"
            )
        object.__setattr__(self, "extra_conf", _checked_extra_conf(self.extra_conf, self.catalog))

    @property
    def delta_s3(self) -> bool:
        """Whether this JVM writes Delta tables on S3 (through S3A)."""
        return self.delta and self.s3 is not None and self.table_format is TableFormat.DELTA

    @property
    def delta_warehouse(self) -> str | None:
        """Where the session catalog, Delta's, puts new schemas: the warehouse, when it is a
        local path or on S3 for a JVM that writes Delta there; else Spark's default."""
        spec = self.catalog_spec
        if spec.local_warehouse is not None:
            return spec.local_warehouse
        if spec.type is CatalogType.REST:
            return None  # a REST catalog's warehouse is a name, not a place
        return spec.warehouse if self.delta_s3 or not is_s3_location(spec.warehouse) else None

    @property
    def is_local(self) -> bool:
        return self.master.strip().startswith("local")

    @property
    def catalog_spec(self) -> CatalogSpec:
        return CatalogSpec(
            name=self.catalog,
            type=self.catalog_type,
            warehouse=self.warehouse,
            uri=self.catalog_uri,
            credential=self.catalog_credential,
            s3=self.s3,
            auth=self.catalog_auth,
            signing_name=self.catalog_signing_name,
            table_format=self.table_format,
        )


# --- Validation helpers --------------------------------------------------------------------


def _jar_source(value: JarSource | str) -> JarSource:
    try:
        return JarSource(value)
    except ValueError:
        choices = ", ".join(source.value for source in JarSource)
        raise ConfigurationError(f"jar source {value!r} is not one of: {choices}") from None


_RESERVED_KEYS = frozenset(
    {
        "spark.master",
        "spark.app.name",
        "spark.driver.memory",
        "spark.jars",
        "spark.jars.packages",
        "spark.sql.extensions",
        SESSION_CATALOG_CONF,
        CATALOG_IMPLEMENTATION_CONF,
        SESSION_METASTORE_CONF,
        "spark.sql.defaultCatalog",
        "spark.sql.session.timeZone",
        "spark.sql.ansi.enabled",
        "spark.ui.enabled",
    }
)


def _checked_extra_conf(
    pairs: tuple[tuple[str, str], ...], catalog: str
) -> tuple[tuple[str, str], ...]:
    checked: list[tuple[str, str]] = []
    for pair in pairs:
        key, value = pair
        if not (isinstance(key, str) and key.startswith("spark.")):
            raise ConfigurationError(f"extra Spark setting {key!r} does not start with 'spark.'")
        hadoop = key.removeprefix(HADOOP_PREFIX) if key.startswith(HADOOP_PREFIX) else ""
        if (
            key in _RESERVED_KEYS
            or is_managed_key(key, catalog)
            or hadoop in MANAGED_S3A_PROPERTIES
        ):
            raise ConfigurationError(
                f"extra Spark setting {key!r} is managed by the destination; use the "
                f"dedicated setting instead"
            )
        checked.append((key, str(value)))
    return tuple(checked)


# --- Configuration -------------------------------------------------------------------------


def _jar_conf(settings: SparkSettings) -> tuple[tuple[str, str], ...]:
    """``spark.jars`` (the installed jars) or ``spark.jars.packages`` (Spark resolves the same
    pinned coordinates when it starts), plus the operator's extra packages."""
    extra = settings.extra_packages
    if settings.jars_mode is JarSource.MAVEN:
        pinned = tuple(a.coordinate for a in artifacts_of(settings.jar_groups))
        return (("spark.jars.packages", ",".join((*pinned, *extra))),)
    jars = session_jars(settings.jar_groups)
    resolved = (("spark.jars.packages", ",".join(extra)),) if extra else ()
    return (("spark.jars", ",".join(str(jar) for jar in jars)), *resolved)


def extensions(settings: SparkSettings) -> str:
    """``spark.sql.extensions``: Iceberg's, and Delta's before it when Delta is on."""
    # Delta's first: with Iceberg's first, Iceberg's rewrite of UPDATE took a Delta table for
    # its own and failed (scala.MatchError on DeltaTableV2); in this order UPDATE, DELETE and
    # MERGE ran on tables of both formats in one session.
    return ",".join((*((DELTA_EXTENSIONS,) if settings.delta else ()), ICEBERG_EXTENSIONS))


def _delta_conf(settings: SparkSettings) -> tuple[tuple[str, str], ...]:
    if not settings.delta:
        return ()
    conf = [(SESSION_CATALOG_CONF, DELTA_CATALOG_CLASS)]
    # Delta writes Parquet through Spark's own writer, which by default refuses timestamps
    # and dates before 1582-10-15 (the calendar switch) as ambiguous: History mode's
    # 0001-01-01 start of a deleted row failed the copy into a history table. CORRECTED
    # writes and reads them as the proleptic Gregorian values they are, as Iceberg's own
    # writer and delta-rs do.
    conf += [(key, "CORRECTED") for key in PARQUET_REBASE_CONFS]
    spec = settings.catalog_spec
    if spec.type is CatalogType.HIVE:
        # Delta's catalog is the session catalog, which keeps its tables in a Hive metastore
        # only if told so when the JVM starts: the metastore Iceberg's catalog names, so that
        # a Delta table is registered where Delta users and other engines look for it. The
        # metastore is first reached on the first Delta request, not at start-up.
        conf += [
            (CATALOG_IMPLEMENTATION_CONF, HIVE_IMPLEMENTATION),
            (SESSION_METASTORE_CONF, spec.uri),
        ]
    if settings.delta_s3:
        assert settings.s3 is not None
        conf += [(HADOOP_PREFIX + key, value) for key, value in settings.s3.hadoop_properties()]
    warehouse = settings.delta_warehouse
    if warehouse is not None:
        # Spark's default is ./spark-warehouse, wherever the server happened to start.
        conf.append((SESSION_WAREHOUSE_CONF, warehouse))
    return tuple(conf)


def session_conf(settings: SparkSettings) -> tuple[tuple[str, str], ...]:
    """Every setting ``build_session`` passes to the builder, in order."""
    conf: list[tuple[str, str]] = [
        ("spark.master", settings.master),
        ("spark.app.name", APP_NAME),
        # Read by spark-submit when it starts the driver JVM (-Xmx), so it works here and
        # only here: after start-up it cannot change.
        ("spark.driver.memory", settings.driver_memory),
        *_jar_conf(settings),
        ("spark.sql.extensions", extensions(settings)),
        *settings.catalog_spec.conf(),
        *_delta_conf(settings),
        # A named SparkCatalog (not spark_catalog): namespaces and table lists persist in the
        # warehouse, and unqualified ``db.t`` resolves to it.
        ("spark.sql.defaultCatalog", settings.catalog),
        # String-to-timestamp casts use the session zone; Fivetran's values are UTC.
        ("spark.sql.session.timeZone", "UTC"),
        # Without ANSI mode a bad cast ('abc' AS INT, month 13, decimal overflow) silently
        # becomes NULL; with it, the statement fails and the batch is not half-written.
        ("spark.sql.ansi.enabled", "true"),
        (SHUFFLE_PARTITIONS_CONF, str(settings.shuffle_partitions)),
        # Adaptive execution merges shuffle partitions down to Spark's default parallelism (a
        # local master's cores) by default: on two cores a 1M-key history MERGE's 4 write
        # partitions became 3 tasks, the third running alone while a core idled. Keeping the
        # 4 made that MERGE 4 % faster (8.19 against 8.52 s, means of 4 alternated runs;
        # docs/benchmarks.md, "JVM and Spark settings"). Partitions under 1 MiB (Spark's
        # minPartitionSize) are still merged: a small batch's shuffle still runs as one task.
        (COALESCE_MIN_PARTITIONS_CONF, str(settings.shuffle_partitions)),
        ("spark.ui.enabled", "false"),
        # The console progress bar writes carriage-return noise into the server's stderr.
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.sql.execution.arrow.pyspark.enabled", "true"),
        # Concurrent requests (different tables) share executors fairly instead of queueing
        # behind one another's jobs; each request runs in its own pool (engine).
        ("spark.scheduler.mode", "FAIR"),
        # Shuffle, spill and cached blocks of a MERGE hold decrypted rows and may leave RAM
        # (spark.local.dir on disk, or a tmpfs too small for them): Spark encrypts them with a
        # per-application key. It also makes PySpark send createDataFrame's Arrow batches over
        # a socket instead of writing them to a plaintext temp file.
        ("spark.io.encryption.enabled", "true"),
        # Spark rewrites ${name} in SQL text with configuration values before parsing, even
        # inside quoted identifiers: a column named ${x} broke CREATE TABLE, and a table named
        # ${spark.some.setting} would have read a setting into the statement.
        ("spark.sql.variable.substitute", "false"),
        # Spark keeps the classes it generated for 100 plans' pieces by default, and a MERGE
        # has 13-46: a server writing a dozen tables of different columns evicted them and
        # compiled them again (Janino, then the JIT) on every sync. Twelve tables written in
        # rotation (benchmarks/many_tables.py), 200k-row upserts, round medians: 1.46-1.71 s
        # with Spark's defaults, 1.22-1.45 s as shipped (docs/benchmarks.md). Read
        # at start-up; an operator's setting wins below.
        ("spark.sql.codegen.cache.maxEntries", str(CODEGEN_CACHE_ENTRIES)),
    ]
    if settings.executor_memory:
        conf.append(("spark.executor.memory", settings.executor_memory))
    if settings.executor_cores is not None:
        conf.append(("spark.executor.cores", str(settings.executor_cores)))
    if settings.is_local:
        # A local driver talks only to itself; binding to loopback avoids hostname lookups
        # (slow or failing in containers) and exposes no port to the network.
        conf += [("spark.driver.bindAddress", "127.0.0.1"), ("spark.driver.host", "127.0.0.1")]
        scratch_dir = ram_scratch_dir()
        if scratch_dir is not None:
            # Shuffle and spill files of a MERGE hold decrypted rows: keep them in RAM-backed
            # tmpfs where it is roomy (an operator's spark.local.dir still wins below). A small
            # one (Docker's 64 MB /dev/shm) would fail large MERGEs with "no space left";
            # there Spark's default folder is used, and I/O encryption protects the files.
            conf.append(("spark.local.dir", scratch_dir))
            # Hadoop's object-store clients buffer the blocks of a file they upload on disk by
            # default, under hadoop.tmp.dir (/tmp/hadoop-<user>): S3A in fs.s3a.buffer.dir,
            # ABFS in fs.azure.buffer.dir. Those blocks are data files of decrypted rows.
            conf.append((HADOOP_TMP_DIR_CONF, str(Path(scratch_dir) / "hadoop")))
    if settings.catalog_spec.local_warehouse is not None:
        # Hadoop's local file system reads through a buffer of io.file.buffer.size, which Spark
        # sets from spark.buffer.size (64 KiB), so each small read of a key-filtered scan (a
        # bloom filter, a dictionary page, a footer) cost at least 64 KiB: a random-key batch
        # into a 16.5M-row table read 40.6 MB at 64 KiB and 31.9 MB at 8 KiB; full scans
        # showed no consistent change (docs/benchmarks.md, "Lake scale"). An operator's
        # setting wins below.
        conf.append(("spark.buffer.size", str(LOCAL_READ_BUFFER_BYTES)))
    conf += [pair for pair in settings.extra_conf if pair[0] != DRIVER_JAVA_OPTIONS]
    conf.append((DRIVER_JAVA_OPTIONS, driver_java_options(settings)))
    return tuple(conf)


def _took(live: str, key: str, settings: SparkSettings) -> bool:
    """Whether the running JVM's ``live`` value of ``key`` is the one ``settings`` give it.

    Spark puts its own options (module opens, IPv4) before the Java options it was given,
    and the driver's were given with ours (``driver_java_options``) before the operator's
    own: the operator's must end the live value. Ours are not compared: the temporary folder
    depends on the free room when the JVM started.
    """
    given = dict(settings.extra_conf)[key]
    if key.endswith(JAVA_OPTIONS_SUFFIX):
        return live == given or live.endswith(" " + given)
    return live == given


def driver_java_options(settings: SparkSettings) -> str:
    """The driver JVM's options: the log configuration, ``KEEP_HEAP_OPTION`` and its temporary
    folder, then the operator's own (so their -D and -XX settings win: the JVM takes an
    option's last value)."""
    java_options = dict(settings.extra_conf).get(DRIVER_JAVA_OPTIONS, "")
    own = [log4j_option(), KEEP_HEAP_OPTION, temp_dir_option()]
    return " ".join(option for option in (*own, java_options) if option)


def temp_dir_option() -> str:
    """The driver JVM's ``java.io.tmpdir``: this process's scratch folder (``jvm_temp_dir``),
    or "" (the JVM's default, /tmp) where there is none."""
    folder = jvm_temp_dir()
    return "" if folder is None else f"-D{TEMP_DIR_PROPERTY}={folder}"


def jvm_temp_dir() -> str | None:
    """This process's scratch folder as the JVM's temporary folder, or None where it is
    missing, too small for Spark's scratch files (``ram_scratch_dir``) or mounted noexec.

    Iceberg's S3FileIO stages the parts of the data files it uploads in ``java.io.tmpdir``
    (``s3.staging-dir``): decrypted rows, which belong in RAM, not on /tmp's disk. The JVM
    also extracts lz4-java's, snappy-java's and commons-crypto's native libraries there at
    every start and makes Spark's own ``spark-<uuid>`` folders; a clean exit deletes them, a
    killed JVM left them in /tmp for good (the test machine's /tmp held 394 folders and 344,
    346 and 220 copies of the libraries). In the scratch folder they go with the folder
    (``scratch.clean_orphans``). The libraries cannot be loaded from a noexec mount (Docker
    mounts ``/dev/shm`` so); there the JVM keeps its default.
    """
    folder = ram_scratch_dir()
    if folder is None or os.statvfs(folder).f_flag & os.ST_NOEXEC:
        return None
    return folder


DRIVER_JAVA_OPTIONS: Final = "spark.driver.extraJavaOptions"
SHUFFLE_PARTITIONS_CONF: Final = "spark.sql.shuffle.partitions"
# A request's shuffle partitions per task slot: more partitions than slots, so that uneven
# partitions still keep every slot busy (see session_conf), and as many more tasks as a cluster
# has slots. Spark 3.5 never splits a shuffle into more partitions than this setting: with a
# fixed 4, every MERGE's join and write ran as at most 4 tasks on any cluster.
SHUFFLE_PARTITIONS_PER_SLOT: Final = 2
# The partitions Delta rebuilds a table's state from its log into (Delta's default: 50), set to
# the request's shuffle partitions: every Delta statement rebuilds the state first, and on two
# task slots a 5-row MERGE into a small table took 2.1 s with 50 and 1.0-1.2 s with 2, 4 or 8
# (twelve MERGEs each, after the JVM's warm-up).
DELTA_SNAPSHOT_PARTITIONS_CONF: Final = "spark.databricks.delta.snapshotPartitions"
# The fewest partitions adaptive execution merges a shuffle into; see session_conf.
COALESCE_MIN_PARTITIONS_CONF: Final = "spark.sql.adaptive.coalescePartitions.minPartitionNum"
# Generated classes Spark keeps compiled (its default: 100); see session_conf.
CODEGEN_CACHE_ENTRIES: Final = 2000
# G1 gives heap back to the OS after a request whose garbage it collected, and the next big
# request touches it again: every 1M-row write re-faulted 0.65-0.8 GB of heap (170-200k page
# faults, ~2.3 us each on the benchmark VM). A server keeps the heap its biggest request
# needed, up to spark.driver.memory, even when idle (docs/benchmarks.md, "What a fresh server
# pays").
KEEP_HEAP_OPTION: Final = "-XX:MaxHeapFreeRatio=100"
JAVA_OPTIONS_SUFFIX: Final = ".extraJavaOptions"
# The JVM's temporary folder (``File.createTempFile``, native libraries, S3FileIO's staging).
TEMP_DIR_PROPERTY: Final = "java.io.tmpdir"
# Hadoop's temporary folder, the root of its object-store clients' upload buffers.
HADOOP_TMP_DIR_CONF: Final = "spark.hadoop.hadoop.tmp.dir"
# The read buffer of a local warehouse's file system (``spark.buffer.size``; Spark's is 64 KiB).
LOCAL_READ_BUFFER_BYTES: Final = 8 << 10


def log4j_option() -> str:
    """The JVM option that writes Spark's log lines as Fivetran JSON lines (log4j2.properties)."""
    config = Path(__file__).with_name("log4j2.properties")
    # A URI: spark-submit splits extraJavaOptions on spaces, and a URI has none.
    return f"-Dlog4j2.configurationFile={config.resolve().as_uri()}"


# Below this much free room /dev/shm is not used for Spark's scratch files.
MIN_RAM_SCRATCH_BYTES: Final = 2 << 30


def ram_scratch_dir() -> str | None:
    """This process's folder on ``/dev/shm`` (RAM-backed on Linux), or None where there is none
    or it is too small for a MERGE's shuffle files.

    Per process (see ``runtime.spark.scratch``), so a server killed mid-request leaves a folder the
    next server start removes, without touching the live folders of other processes.
    """
    shm = scratch.SHM
    if shm.is_dir() and shutil.disk_usage(shm).free < MIN_RAM_SCRATCH_BYTES:
        return None
    folder = scratch.process_dir()
    return None if folder is None else str(folder)


# --- Session lifecycle ---------------------------------------------------------------------


def _ensure_python_worker_env() -> None:
    """Make Python workers run this interpreter, not whatever ``python3`` is on ``PATH``.

    PySpark starts Python workers (UDFs, RDD functions) with ``$PYSPARK_PYTHON``, else
    ``python3`` from ``PATH``: with a venv that is not activated that is another Python
    without pyspark, and on a bare machine there is none ("Cannot run program "python3"",
    seen with ``env -i``). A value the operator set is kept.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def build_session(settings: SparkSettings) -> SparkSession:
    """Start the JVM and return the process's only SparkSession."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    # getOrCreate would hand back a running session and silently ignore every start-up
    # setting that differs; refuse instead, so the caller reuses its session explicitly.
    if SparkContext._active_spark_context is not None:
        raise ConfigurationError(
            "a Spark session is already running in this process; reuse it (see "
            "check_compatible) instead of building a second one"
        )
    ensure_java_env()
    _ensure_python_worker_env()
    builder = SparkSession.builder
    for key, value in session_conf(settings):
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    _silence_task_failure_logs(session)
    return session


# Spark logs a failed task with its exception's message, and a cast error's message quotes the
# value ("The value '…' of the type STRING cannot be cast…"): a row value in the server's
# stderr. The request's own failure is logged by the server (without values), so these loggers
# are switched off in the driver (local executors included; a cluster's executors log on their
# workers, outside this process).
TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
)


def _silence_task_failure_logs(session: SparkSession) -> None:
    jvm = session.sparkContext._jvm
    assert jvm is not None
    log4j = jvm.org.apache.logging.log4j
    for name in TASK_FAILURE_LOGGERS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)


def register_catalog(
    session: SparkSession, catalog: CatalogSpec | str, warehouse: str = ""
) -> None:
    """Attach another Iceberg catalog to the live session (a name and warehouse: Hadoop).

    Idempotent for the same settings. A name already bound to something else is refused:
    Spark loads a catalog once per name and caches it, so changing its settings later would
    be ignored and writes would go to the old catalog.
    """
    spec = (
        catalog
        if isinstance(catalog, CatalogSpec)
        else CatalogSpec(name=catalog, warehouse=warehouse)
    )
    entries = spec.conf()
    class_key = spec.prefix
    current_class = session.conf.get(class_key, None)
    if current_class is not None:
        current = {key: session.conf.get(key, None) for key, _ in entries}
        if current == dict(entries):
            return
        where = current.get(f"{class_key}.uri") or current.get(f"{class_key}.warehouse")
        raise ConfigurationError(
            f"catalog {spec.name!r} is already bound to {where or current_class} in the "
            f"running Spark session; it cannot be re-pointed at {spec.describe()}, use another "
            f"name"
        )
    for key, value in entries:
        session.conf.set(key, value)


def startup_conf(session: SparkSession) -> Mapping[str, str]:
    """The running JVM's start-up settings (its SparkConf), read once per JVM: they cannot
    change while it runs, and a read through py4j (a round trip per setting) took ~11 ms,
    on every request (docs/benchmarks.md, "Small syncs")."""
    context = session.sparkContext
    return per_jvm(
        session, "start-up settings", lambda: MappingProxyType(dict(context.getConf().getAll()))
    )


def jar_groups_of(session: SparkSession) -> frozenset[JarGroup]:
    """The jar groups the running JVM started with (its ``spark.jars``, or every group whose
    pinned coordinates it resolved through ``spark.jars.packages``)."""
    conf = startup_conf(session)
    packages = {c.strip() for c in (conf.get("spark.jars.packages") or "").split(",")}
    resolved = frozenset(
        group for group in JarGroup if {a.coordinate for a in artifacts_of({group})} <= packages
    )
    return live_groups(conf.get("spark.jars") or "") | resolved


def request_shuffle_partitions(slots: int, fewest: int) -> int:
    """The shuffle partitions of a request on ``slots`` task slots (Spark's default
    parallelism): ``SHUFFLE_PARTITIONS_PER_SLOT`` per slot, at least ``fewest``."""
    return max(fewest, SHUFFLE_PARTITIONS_PER_SLOT * slots)


def apply_runtime_conf(session: SparkSession, settings: SparkSettings) -> None:
    """Set the request's shuffle partitions (and Delta's log-state partitions) from the task
    slots the application has now, then the request's ``spark_conf`` entries that a live
    session can take on its own session.

    The slots are read per request: a cluster's executors register after the session starts
    (and come and go with dynamic allocation). Runtime SQL settings (the shuffle partitions,
    ``spark.sql.redaction.options.regex``, …) apply to this request's child session only, the
    operator's over the computed partitions; the others were fixed at start-up and are
    compared by ``check_compatible``, so a request never runs with settings it did not get.
    """
    partitions = str(
        request_shuffle_partitions(
            session.sparkContext.defaultParallelism, settings.shuffle_partitions
        )
    )
    session.conf.set(SHUFFLE_PARTITIONS_CONF, partitions)
    session.conf.set(COALESCE_MIN_PARTITIONS_CONF, partitions)
    if settings.delta:
        session.conf.set(DELTA_SNAPSHOT_PARTITIONS_CONF, partitions)
    for key, value in settings.extra_conf:
        if session.conf.isModifiable(key):
            session.conf.set(key, value)


def _live_jar_source(conf: Mapping[str, str]) -> str:
    for coordinate in (conf.get("spark.jars.packages") or "").split(","):
        if coordinate.strip() == ICEBERG_RUNTIME.coordinate:
            return f"{JarSource.MAVEN.value} (Iceberg {ICEBERG_VERSION})"
    if JarGroup.ICEBERG in live_groups(conf.get("spark.jars") or ""):
        return f"{JarSource.INSTALLED.value} (Iceberg {ICEBERG_VERSION})"
    return "none"


def _requested_jar_source(settings: SparkSettings) -> str:
    return f"{settings.jars_mode.value} (Iceberg {ICEBERG_VERSION})"


def check_compatible(session: SparkSession, settings: SparkSettings) -> None:
    """Raise ``ConfigurationError`` if ``settings`` need a JVM other than the running one.

    Master, driver memory and the jar source are fixed when the JVM starts. The default
    catalog's warehouse is fixed once the catalog is first used. Runtime settings (shuffle
    partitions, extra SQL settings) are not compared: they can be set on the live session.
    """
    conf = startup_conf(session)
    problems: list[str] = []
    live_master = session.sparkContext.master or ""
    if live_master.strip() != settings.master.strip():
        problems.append(f"master is {live_master!r}, requested {settings.master!r}")
    live_memory = conf.get("spark.driver.memory") or "1g"  # Spark's default
    if memory_bytes(live_memory) != memory_bytes(settings.driver_memory):
        problems.append(f"driver memory is {live_memory!r}, requested {settings.driver_memory!r}")
    live_jars, wanted_jars = _live_jar_source(conf), _requested_jar_source(settings)
    if live_jars != wanted_jars:
        problems.append(f"Iceberg jars are {live_jars}, requested {wanted_jars}")
    if settings.delta and DELTA_EXTENSIONS not in (conf.get("spark.sql.extensions") or ""):
        problems.append("it started without Delta Lake's extension")
    absent = settings.jar_groups - jar_groups_of(session)
    if absent:
        problems.append(
            "it started without the jars of "
            + ", ".join(sorted(group.value for group in absent))
            + f" (install them with `{INSTALL_COMMAND}`)"
        )
    spec = settings.catalog_spec
    if session.conf.get(spec.prefix, None) is not None:
        for key, wanted in spec.conf():
            live = session.conf.get(key, None)
            if live != wanted:
                shown = "…" if is_secret_property(key) else f"{live}, requested {wanted}"
                problems.append(
                    f"catalog {settings.catalog!r} has {key.rsplit('.', 1)[-1]} {shown} "
                    f"(register it under another catalog name instead)"
                )
    if settings.delta_s3:
        assert settings.s3 is not None
        for key, wanted in settings.s3.hadoop_properties():
            if conf.get(HADOOP_PREFIX + key) != wanted:
                # Never the values: one is the secret key.
                problems.append(f"Delta's files on S3 are reached with another {key}")
    for key, _ in settings.extra_conf:
        # Values are not quoted: spark_conf may carry credentials (object-store keys).
        if not session.conf.isModifiable(key) and not _took(conf.get(key, ""), key, settings):
            problems.append(f"spark_conf setting {key!r} differs from the running session's")
    if problems:
        raise ConfigurationError(
            "the running Spark session cannot take the requested settings; they need a new "
            "JVM (restart the destination): " + "; ".join(problems)
        )
