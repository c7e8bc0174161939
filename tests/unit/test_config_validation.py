"""Malformed configuration is refused by name before any Spark work (pure)."""

from __future__ import annotations

import pytest

from spark_destination.core.config import parse_config
from spark_destination.core.errors import ConfigurationError
from spark_destination.engine.table_format import check_table_format
from spark_destination.runtime.spark.provider import settings_for


@pytest.mark.parametrize(
    "master",
    [
        "local",
        "local[*]",
        "local[4]",
        "local[2,3]",
        "local-cluster[2,1,1024]",
        "spark://127.0.0.1:7077",
        "spark://a:1,b:2",
        "yarn",
        "k8s://https://host:443",
    ],
)
def test_spark_master_urls_spark_accepts(master: str) -> None:
    assert parse_config({"spark_master": master}).spark_master == master


@pytest.mark.parametrize(
    ("configuration", "named"),
    [
        ({"spark_master": "foo://bar:1"}, "spark_master"),
        ({"spark_master": "local[x]"}, "spark_master"),
        ({"spark_master": "spark://host"}, "spark_master"),
        ({"catalog": "my-lake"}, "catalog"),
        ({"catalog": "x; DROP TABLE t"}, "catalog"),
        ({"catalog": "1lake"}, "catalog"),
        ({"spark_conf": "spark.sql.foo"}, "spark_conf"),
        ({"spark_conf": "java.x=1"}, "spark_conf"),
        ({"spark_conf": "spark.a=1\n=2"}, "spark_conf"),
        ({"driver_memory": "lots"}, "driver_memory"),
        ({"jar_source": "ftp"}, "jar_source"),
    ],
)
def test_malformed_configuration_is_refused_by_name(
    configuration: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        parse_config(configuration)


S3_KEYS = {
    "storage": "s3",
    "s3_region": "us-east-1",
    "s3_access_key_id": "AKIDEXAMPLE",
    "s3_secret_access_key": "TOPSECRET",
}


@pytest.mark.parametrize(
    "configuration",
    [
        {"warehouse": "/lake"},
        {"warehouse": "file:///mnt/shared/lake"},
        {"catalog_type": "hive", "catalog_uri": "thrift://hms:9083", "warehouse": "/lake"},
        {**S3_KEYS, "warehouse": "s3://bucket/lake"},
        {
            **S3_KEYS,
            "catalog_type": "hive",
            "catalog_uri": "thrift://hms:9083",
            "warehouse": "s3://b/l",
        },
    ],
)
def test_delta_takes_a_local_or_s3_warehouse_with_or_without_a_metastore(
    configuration: dict[str, str],
) -> None:
    config = parse_config({**configuration, "table_format": "delta"})
    check_table_format(config)
    # The Hadoop catalog's refusal of S3 is Iceberg's: Delta on S3 may go without a metastore.
    assert settings_for(config).catalog_spec.warehouse.endswith(("lake", "l"))


@pytest.mark.parametrize(
    ("configuration", "named"),
    [
        ({"catalog_type": "rest", "catalog_uri": "http://rest:8181"}, "catalog_type rest"),
        ({"warehouse": "gs://bucket/lake"}, "a warehouse URI other than file://"),
    ],
)
def test_delta_refuses_what_it_cannot_work_with_naming_it(
    configuration: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        check_table_format(parse_config({**configuration, "table_format": "delta"}))


def test_iceberg_still_refuses_the_hadoop_catalog_on_s3() -> None:
    with pytest.raises(ConfigurationError, match="Hadoop catalog cannot keep tables on S3"):
        settings_for(parse_config({**S3_KEYS, "warehouse": "s3://bucket/lake"}))
