"""Catalog types, cluster settings and the shared-warehouse check: the Spark settings each
configuration produces (pure; only the Hadoop catalog can run on this machine)."""

from __future__ import annotations

import os

import pytest

from spark_destination.core.config import CatalogType, parse_config
from spark_destination.core.errors import ConfigurationError
from spark_destination.engine.engine import settings_for
from spark_destination.runtime.spark.artifacts import ICEBERG_RUNTIME
from spark_destination.runtime.spark.catalogs import CatalogSpec, unshared_warehouse_problem
from spark_destination.runtime.spark.session import (
    LOCAL_READ_BUFFER_BYTES,
    SparkSettings,
    session_conf,
)


def _conf(configuration: dict[str, str]) -> dict[str, str]:
    settings = settings_for(parse_config(configuration))
    return dict(session_conf(settings))


def test_hadoop_is_the_default_with_an_absolute_warehouse() -> None:
    conf = _conf({"warehouse": "rel/wh"})
    assert conf["spark.sql.catalog.lake"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.type"] == "hadoop"
    assert conf["spark.sql.catalog.lake.warehouse"] == os.path.abspath("rel/wh")
    assert "spark.sql.catalog.lake.uri" not in conf
    assert conf["spark.sql.defaultCatalog"] == "lake"


def test_an_object_store_warehouse_is_kept_as_given_with_maven_jars_and_spark_conf() -> None:
    conf = _conf(
        {
            "warehouse": "s3a://bucket/warehouse",
            "jar_source": "maven",
            "extra_packages": "org.apache.hadoop:hadoop-aws:3.3.4",
            "spark_conf": "spark.hadoop.fs.s3a.endpoint=http://minio:9000",
        }
    )
    assert conf["spark.sql.catalog.lake.warehouse"] == "s3a://bucket/warehouse"
    assert conf["spark.jars.packages"] == (
        f"{ICEBERG_RUNTIME.coordinate},org.apache.hadoop:hadoop-aws:3.3.4"
    )
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://minio:9000"


def test_a_local_warehouse_reads_through_small_buffers_unless_the_operator_sets_them() -> None:
    # Spark gives Hadoop's io.file.buffer.size the value of spark.buffer.size.
    assert _conf({"warehouse": "rel/wh"})["spark.buffer.size"] == str(LOCAL_READ_BUFFER_BYTES)
    assert "spark.buffer.size" not in _conf({"warehouse": "s3a://bucket/warehouse"})
    operator = _conf({"warehouse": "rel/wh", "spark_conf": "spark.buffer.size=131072"})
    assert operator["spark.buffer.size"] == "131072"


def test_rest_catalog_settings() -> None:
    conf = _conf(
        {
            "catalog_type": "REST",
            "catalog_uri": "https://polaris.example.com/api/catalog",
            "catalog_credential": "client-id:client-secret",
            "warehouse": "analytics",
            "jar_source": "maven",
            # Further catalog properties pass through spark_conf.
            "spark_conf": "spark.sql.catalog.lake.scope=PRINCIPAL_ROLE:ALL",
        }
    )
    assert conf["spark.sql.catalog.lake.type"] == "rest"
    assert conf["spark.sql.catalog.lake.uri"] == "https://polaris.example.com/api/catalog"
    assert conf["spark.sql.catalog.lake.credential"] == "client-id:client-secret"
    # A REST warehouse is a name the service defines, not a local path.
    assert conf["spark.sql.catalog.lake.warehouse"] == "analytics"
    assert conf["spark.sql.catalog.lake.scope"] == "PRINCIPAL_ROLE:ALL"


def test_the_rest_credential_never_shows_in_reprs() -> None:
    config = parse_config(
        {"catalog_type": "rest", "catalog_uri": "https://r", "catalog_credential": "id:TOPSECRET",
         "jar_source": "maven"}
    )  # fmt: skip
    settings = settings_for(config)
    for text in (repr(config), repr(settings), repr(settings.catalog_spec),
                 settings.catalog_spec.describe()):  # fmt: skip
        assert "TOPSECRET" not in text


def test_hive_catalog_settings() -> None:
    conf = _conf({"catalog_type": "hive", "catalog_uri": "thrift://metastore:9083"})
    assert conf["spark.sql.catalog.lake.type"] == "hive"
    assert conf["spark.sql.catalog.lake.uri"] == "thrift://metastore:9083"


def test_executor_memory_and_cores_reach_spark() -> None:
    conf = _conf({"spark_master": "spark://h:7077", "executor_memory": "4g", "executor_cores": "2"})
    assert conf["spark.executor.memory"] == "4g"
    assert conf["spark.executor.cores"] == "2"
    # A cluster driver is not pinned to loopback (executors on other hosts must reach it).
    assert "spark.driver.host" not in conf
    assert "spark.executor.memory" not in _conf({})


@pytest.mark.parametrize(
    ("configuration", "message"),
    [
        ({"catalog_type": "glue"}, "catalog_type 'glue' must be one of"),
        ({"catalog_type": "rest", "jar_source": "maven"}, "needs catalog_uri"),
        ({"catalog_type": "hive"}, "needs catalog_uri"),
        ({"catalog_uri": "https://r"}, "not hadoop"),
        ({"executor_memory": "lots"}, "executor_memory"),
        ({"executor_cores": "0"}, "executor_cores"),
        ({"extra_packages": "hadoop-aws"}, "Maven coordinate"),
        ({"maintenance_every_commits": "-1"}, "maintenance_every_commits"),
        ({"spark_conf": "spark.sql.catalog.lake.uri=x"}, "managed by the destination"),
        ({"spark_conf": "spark.sql.catalog.lake=x"}, "managed by the destination"),
    ],
)
def test_bad_catalog_and_cluster_settings_are_refused(
    configuration: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        settings_for(parse_config(configuration))


LOCAL = {"vm", "10.0.0.5"}


def test_a_local_path_warehouse_is_refused_when_executors_run_elsewhere() -> None:
    spec = CatalogSpec(name="lake", warehouse="/data/wh")
    problem = unshared_warehouse_problem(
        spec, master="spark://head:7077", executor_hosts={"vm", "10.0.0.7"}, local_hosts=LOCAL
    )
    assert problem is not None
    assert "/data/wh is a local path" in problem and "10.0.0.7" in problem
    assert "file://" in problem  # says how to state a shared mount


@pytest.mark.parametrize(
    ("master", "warehouse", "hosts"),
    [
        ("local[*]", "/data/wh", {"10.0.0.7"}),  # local master: one machine
        ("spark://127.0.0.1:7077", "/data/wh", {"127.0.0.1", "vm"}),  # executors on this host
        ("spark://head:7077", "file:///mnt/nfs/wh", {"10.0.0.7"}),  # a URI: declared shared
        ("spark://head:7077", "s3a://bucket/wh", {"10.0.0.7"}),
    ],
)
def test_shared_or_single_host_warehouses_pass(
    master: str, warehouse: str, hosts: set[str]
) -> None:
    spec = CatalogSpec(name="lake", warehouse=warehouse)
    assert (
        unshared_warehouse_problem(spec, master=master, executor_hosts=hosts, local_hosts=LOCAL)
        is None
    )


def test_rest_catalogs_are_not_checked_for_local_paths() -> None:
    spec = CatalogSpec(name="lake", type=CatalogType.REST, uri="https://r", warehouse="wh")
    assert spec.local_warehouse is None
    assert SparkSettings(catalog_type=CatalogType.REST, catalog_uri="https://r",
                         warehouse="wh").warehouse == "wh"  # fmt: skip


def test_the_configuration_form_offers_every_new_key_with_valid_defaults() -> None:
    from spark_destination.server.form import configuration_form, every_field

    fields = {f.name: f for f in every_field(configuration_form())}
    for key in ("executor_memory", "executor_cores", "catalog_type", "catalog_uri",
                "catalog_credential", "extra_packages", "maintenance_every_commits",
                "maintenance_delete_files", "snapshot_retention_hours"):  # fmt: skip
        assert key in fields
    assert fields["catalog_credential"].text_field == 1  # Password: masked in the UI
    parse_config({name: field.default_value for name, field in fields.items()})
