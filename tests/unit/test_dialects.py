"""The dialect registry: each dialect is complete, and its goldens were reviewed with the
sqlglot version the project pins."""

from __future__ import annotations

import dataclasses
from importlib import resources

import jinja2
import pytest
import sqlglot

from spark_destination.core.errors import ConfigurationError
from spark_destination.core.model import Column, DataType
from spark_destination.dialects.base import Dialect, KeyStyle
from spark_destination.dialects.registry import DEFAULT, DIALECTS, dialect


@pytest.mark.parametrize("name", list(DIALECTS))
def test_each_dialect_matches_the_pinned_sqlglot_and_has_its_templates(name: str) -> None:
    chosen = DIALECTS[name]
    assert sqlglot.__version__.startswith(chosen.sqlglot_version + ".")
    folder = resources.files("spark_destination") / "templates" / chosen.skeletons.folder
    assert folder.is_dir()
    assert set(chosen.key_style.templates) <= chosen.skeletons.available


def test_a_dialect_must_name_every_type() -> None:
    spark = DIALECTS["spark_iceberg"]
    partial = {t: n for t, n in spark.type_names.items() if t is not DataType.JSON}
    with pytest.raises(ValueError, match="every type"):
        dataclasses.replace(spark, name="partial", type_names=partial)


def test_iceberg_and_open_source_delta_run_here_and_databricks_sql_does_not() -> None:
    assert DEFAULT.executable and DIALECTS["spark_delta"].executable
    assert not DIALECTS["databricks_delta"].executable
    assert all(d.missing for d in DIALECTS.values() if not d.executable)
    with pytest.raises(ConfigurationError, match="unknown dialect"):
        dialect("oracle")


@pytest.mark.parametrize(
    ("source", "target", "iceberg", "delta", "oss_delta"),
    [
        (DataType.SHORT, DataType.INT, "same", "widen", "rewrite"),
        (DataType.INT, DataType.LONG, "widen", "widen", "rewrite"),
        (DataType.SHORT, DataType.LONG, "widen", "widen", "rewrite"),
        (DataType.NAIVE_DATE, DataType.NAIVE_DATETIME, "rewrite", "widen", "rewrite"),
        (DataType.INT, DataType.DOUBLE, "rewrite", "widen", "rewrite"),
        (DataType.LONG, DataType.INT, "rewrite", "rewrite", "rewrite"),
        (DataType.STRING, DataType.JSON, "same", "same", "same"),
    ],
)
def test_storage_and_widening_answers_per_target(
    source: DataType, target: DataType, iceberg: str, delta: str, oss_delta: str
) -> None:
    def answer(chosen: Dialect) -> str:
        old, new = Column(name="c", type=source), Column(name="c", type=target)
        if chosen.same_storage(old, new):
            return "same"
        return "widen" if chosen.widens_in_place(old, new) else "rewrite"

    assert answer(DIALECTS["spark_iceberg"]) == iceberg
    assert answer(DIALECTS["databricks_delta"]) == delta
    # delta-spark 3.3 widens nothing the destination uses in place (spark_delta's docstring).
    assert answer(DIALECTS["spark_delta"]) == oss_delta


def _with_skeletons(**changes: object) -> object:
    spark = DIALECTS["spark_iceberg"]
    return dataclasses.replace(spark, skeletons=dataclasses.replace(spark.skeletons, **changes))


def test_a_declared_template_that_is_missing_fails_when_the_dialect_is_built() -> None:
    """A dialect module builds its ``Dialect`` at import: a declared override or own template
    that is not in its folder stops the import, never a silent fallback at render time."""
    with pytest.raises(ValueError, match=r"declared but missing in templates/spark_iceberg"):
        _with_skeletons(own=frozenset({"set_primary_key", "maintenance_call", "table_health", "x"}))


def test_an_override_that_shadows_nothing_fails_when_the_dialect_is_built() -> None:
    with pytest.raises(ValueError, match="overrides shadowing no common template"):
        _with_skeletons(
            own=frozenset({"maintenance_call", "table_health"}),
            overrides=frozenset({"set_primary_key"}),
        )


def test_a_template_nobody_declared_fails_when_the_dialect_is_built() -> None:
    with pytest.raises(ValueError, match=r"has undeclared \['table_health'\]"):
        _with_skeletons(
            own=frozenset(
                {
                    "set_primary_key",
                    "maintenance_call",
                    "set_write_order",
                    "add_partition_field",
                    "drop_partition_field",
                }
            )
        )


def test_a_capability_without_its_templates_fails_when_the_dialect_is_built() -> None:
    """The key style and the maintenance style each name the templates they render with."""
    spark = DIALECTS["spark_iceberg"]
    with pytest.raises(ValueError, match="PRIMARY_KEY_CONSTRAINT needs templates"):
        dataclasses.replace(spark, key_style=KeyStyle.PRIMARY_KEY_CONSTRAINT)


def test_the_environment_loads_each_template_from_the_folder_the_dialect_declares() -> None:
    from spark_destination.dialects.skeletons import environment

    delta = environment(DIALECTS["databricks_delta"].skeletons)
    spark = environment(DIALECTS["spark_iceberg"].skeletons)
    assert "CREATE SCHEMA" in delta.loader.get_source(delta, "create_namespace")[0]
    assert "CREATE NAMESPACE" in spark.loader.get_source(spark, "create_namespace")[0]
    with pytest.raises(jinja2.TemplateNotFound):
        spark.get_template("optimize")  # Delta's own: no fallback for another dialect
