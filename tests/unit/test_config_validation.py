"""Malformed configuration is refused by name before any Spark work (pure)."""

from __future__ import annotations

import pytest

from spark_destination.core.config import parse_config
from spark_destination.core.errors import ConfigurationError


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
