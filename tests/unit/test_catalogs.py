"""Catalog types, cluster settings and the shared-warehouse check: the Spark settings each
configuration produces (pure; only the Hadoop catalog can run on this machine)."""

from __future__ import annotations

import os

import pytest

from spark_destination.core.config import CatalogType, parse_config
from spark_destination.core.errors import ConfigurationError
from spark_destination.engine.engine import settings_for
from spark_destination.runtime.spark.artifacts import ICEBERG_RUNTIME
from spark_destination.runtime.spark.catalogs import (
    CatalogSpec,
    is_secret_property,
    unshared_warehouse_problem,
)
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


S3 = {
    "storage": "s3",
    "s3_region": "eu-west-3",
    "s3_endpoint": "http://127.0.0.1:8333",
    "s3_access_key_id": "AKIDEXAMPLE",
    "s3_secret_access_key": "TOPSECRET",
}


def test_a_rest_catalog_on_s3_gets_s3_file_io_with_its_region_and_keys_and_sigv4() -> None:
    conf = _conf(
        {
            **S3,
            "catalog_type": "rest",
            "catalog_uri": "http://127.0.0.1:8181",
            "catalog_auth": "sigv4",
            "catalog_signing_name": "s3",
            "warehouse": "s3://tables",
        }
    )
    prefix = "spark.sql.catalog.lake."
    assert conf[prefix + "io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert conf[prefix + "client.region"] == "eu-west-3"
    assert conf[prefix + "s3.endpoint"] == "http://127.0.0.1:8333"
    assert conf[prefix + "s3.path-style-access"] == "true"
    assert conf[prefix + "s3.access-key-id"] == "AKIDEXAMPLE"
    assert conf[prefix + "s3.secret-access-key"] == "TOPSECRET"
    assert conf[prefix + "rest.auth.type"] == "sigv4"
    assert conf[prefix + "rest.signing-region"] == "eu-west-3"
    assert conf[prefix + "rest.signing-name"] == "s3"
    assert conf[prefix + "warehouse"] == "s3://tables"
    # The AWS bundle goes on the class path.
    assert "iceberg-aws-bundle" in conf.get("spark.jars", "")


def test_the_default_credential_chain_sets_no_keys_but_always_a_region() -> None:
    configuration = {
        "storage": "s3",
        "s3_region": "us-east-1",
        "s3_credentials": "default_chain",
        "catalog_type": "hive",
        "catalog_uri": "thrift://hms:9083",
        "warehouse": "s3://bucket/lake",
    }
    conf = _conf(configuration)
    assert conf["spark.sql.catalog.lake.client.region"] == "us-east-1"
    assert not [k for k in conf if "access-key" in k]
    assert "spark.sql.catalog.lake.s3.endpoint" not in conf  # AWS's own endpoint
    with pytest.raises(ConfigurationError, match="apply to s3_credentials keys"):
        _conf({**configuration, "s3_access_key_id": "AKID"})


@pytest.mark.parametrize(
    ("configuration", "message"),
    [
        # The Hadoop catalog commits by rename: refused on S3, naming what to use.
        ({**S3, "warehouse": "s3://bucket/wh"}, "cannot keep tables on S3.*catalog_type rest"),
        ({"warehouse": "s3a://bucket/wh"}, "cannot keep tables on S3"),
        (
            {"catalog_type": "hive", "catalog_uri": "thrift://h:9083", "warehouse": "s3://b/w"},
            "is on S3: set storage s3",
        ),
        (
            {**S3, "catalog_type": "hive", "catalog_uri": "thrift://h:9083", "warehouse": "/w"},
            "needs warehouse s3://",
        ),
        ({**S3, "s3_region": ""}, "needs s3_region"),
        ({**S3, "s3_secret_access_key": ""}, "needs s3_secret_access_key"),
        ({"s3_access_key_id": "AKID"}, "apply to storage s3"),
        ({"s3_region": "EU West"}, "region name"),
        ({"s3_endpoint": "minio:9000"}, "http:// or https:// URL"),
        (
            {"catalog_type": "rest", "catalog_uri": "https://r", "catalog_auth": "sigv4"},
            "signs with the S3 region and credentials",
        ),
    ],
)
def test_storage_settings_that_cannot_work_are_refused(
    configuration: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        settings_for(parse_config(configuration))


def test_s3_secrets_never_show_in_reprs_or_descriptions() -> None:
    settings = settings_for(
        parse_config(
            {**S3, "catalog_type": "rest", "catalog_uri": "http://r", "catalog_auth": "sigv4"}
        )
    )
    for text in (repr(settings), repr(settings.catalog_spec), settings.catalog_spec.describe()):
        assert "TOPSECRET" not in text
    assert "AKIDEXAMPLE" in settings.catalog_spec.describe()


def test_maven_jars_take_the_pinned_coordinates_and_extra_packages() -> None:
    conf = _conf(
        {
            **S3,
            "catalog_type": "rest",
            "catalog_uri": "http://r",
            "jar_source": "maven",
            "extra_packages": "org.example:extra:1.0",
        }
    )
    packages = conf["spark.jars.packages"].split(",")
    assert packages[0] == ICEBERG_RUNTIME.coordinate
    assert "org.apache.iceberg:iceberg-aws-bundle:" + ICEBERG_RUNTIME.version in packages
    assert packages[-1] == "org.example:extra:1.0"


def test_a_local_warehouse_reads_through_small_buffers_unless_the_operator_sets_them() -> None:
    # Spark gives Hadoop's io.file.buffer.size the value of spark.buffer.size.
    assert _conf({"warehouse": "rel/wh"})["spark.buffer.size"] == str(LOCAL_READ_BUFFER_BYTES)
    on_s3 = {**S3, "catalog_type": "rest", "catalog_uri": "http://r", "warehouse": "s3://t"}
    assert "spark.buffer.size" not in _conf(on_s3)
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
        ("spark://head:7077", "hdfs://nn:8020/wh", {"10.0.0.7"}),
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
    assert fields["s3_secret_access_key"].text_field == 1
    parse_config({name: field.default_value for name, field in fields.items()})


def test_a_hive_catalog_keeps_the_session_catalogs_tables_in_the_same_metastore() -> None:
    """Delta's catalog is the session catalog: for a ``hive`` catalog it is Hive-backed, on
    the metastore Iceberg's catalog names; otherwise Spark keeps it in memory."""
    hive = _conf({"catalog_type": "hive", "catalog_uri": "thrift://hms:9083", "warehouse": "/w"})
    assert hive["spark.sql.catalogImplementation"] == "hive"
    assert hive["spark.hadoop.hive.metastore.uris"] == "thrift://hms:9083"
    assert hive["spark.sql.catalog.lake.uri"] == "thrift://hms:9083"
    assert hive["spark.sql.warehouse.dir"] == "/w"
    hadoop = _conf({"warehouse": "/w"})
    assert "spark.sql.catalogImplementation" not in hadoop
    assert "spark.hadoop.hive.metastore.uris" not in hadoop


@pytest.mark.parametrize(
    "key", ["spark.sql.catalogImplementation", "spark.hadoop.hive.metastore.uris"]
)
def test_the_session_catalogs_store_is_not_an_extra_spark_setting(key: str) -> None:
    with pytest.raises(ConfigurationError, match="managed by the destination"):
        SparkSettings(extra_conf=((key, "in-memory"),))


def test_every_key_and_secret_of_a_catalog_is_kept_out_of_messages() -> None:
    """The properties whose values a message comparing two catalogs never shows: every one
    the S3 keys and a REST catalog's credentials produce, and none of the places."""
    settings = settings_for(
        parse_config(
            {
                **S3,
                "catalog_type": "rest",
                "catalog_uri": "http://127.0.0.1:8181",
                "catalog_credential": "id:secret",
                "warehouse": "s3://bucket/wh",
            }
        )
    )
    conf = dict(settings.catalog_spec.conf())
    hidden = {key for key in conf if is_secret_property(key)}
    values = {conf[key] for key in hidden}
    assert {"AKIDEXAMPLE", "id:secret"} <= values
    assert S3["s3_secret_access_key"] in values
    for key in ("uri", "warehouse", "s3.endpoint", "client.region"):
        shown = [name for name in conf if name.endswith("." + key)]
        assert shown and not any(is_secret_property(name) for name in shown), key
