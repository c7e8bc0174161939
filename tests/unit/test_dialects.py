"""The dialect registry: each dialect is complete, and its goldens were reviewed with the
sqlglot version the project pins."""

from __future__ import annotations

import dataclasses
from importlib import resources

import pytest
import sqlglot

from spark_destination.core.errors import ConfigurationError
from spark_destination.core.model import Column, DataType
from spark_destination.dialects.base import Dialect
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


def test_only_the_default_dialect_runs_here() -> None:
    assert DEFAULT.executable
    assert [d.name for d in DIALECTS.values() if not d.executable] == ["databricks_delta"]
    assert all(d.missing for d in DIALECTS.values() if not d.executable)
    with pytest.raises(ConfigurationError, match="unknown dialect"):
        dialect("oracle")


@pytest.mark.parametrize(
    ("source", "target", "iceberg", "delta"),
    [
        (DataType.SHORT, DataType.INT, "same", "widen"),
        (DataType.INT, DataType.LONG, "widen", "widen"),
        (DataType.SHORT, DataType.LONG, "widen", "widen"),
        (DataType.NAIVE_DATE, DataType.NAIVE_DATETIME, "rewrite", "widen"),
        (DataType.INT, DataType.DOUBLE, "rewrite", "widen"),
        (DataType.LONG, DataType.INT, "rewrite", "rewrite"),
        (DataType.STRING, DataType.JSON, "same", "same"),
    ],
)
def test_storage_and_widening_answers_per_target(
    source: DataType, target: DataType, iceberg: str, delta: str
) -> None:
    def answer(chosen: Dialect) -> str:
        old, new = Column(name="c", type=source), Column(name="c", type=target)
        if chosen.same_storage(old, new):
            return "same"
        return "widen" if chosen.widens_in_place(old, new) else "rewrite"

    assert answer(DIALECTS["spark_iceberg"]) == iceberg
    assert answer(DIALECTS["databricks_delta"]) == delta
