"""ConfigurationForm reads like a well-made setup form (rendered from form.FIELDS)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spark_destination.core import config
from spark_destination.server import form


def test_every_field_has_a_label_a_description_and_a_type() -> None:
    response = form.configuration_form()
    assert [f.name for f in response.fields] == [f.name for f in form.FIELDS]
    for field in response.fields:
        assert field.label and field.label != field.name
        assert field.description.endswith(".")
        assert field.WhichOneof("type") is not None


def test_defaults_are_what_the_destination_uses_when_a_field_is_empty() -> None:
    defaults = {f.name: f.default_value for f in form.configuration_form().fields}
    parsed = config.parse_config({})
    assert defaults["warehouse"] == parsed.warehouse
    assert defaults["catalog"] == parsed.catalog
    assert defaults["spark_master"] == parsed.spark_master
    assert defaults["driver_memory"] == parsed.driver_memory
    assert defaults["jar_source"] == parsed.jar_source


def test_choices_are_a_dropdown_whose_default_is_one_of_them() -> None:
    (jar_source,) = [f for f in form.configuration_form().fields if f.name == "jar_source"]
    assert jar_source.WhichOneof("type") == "dropdown_field"
    assert list(jar_source.dropdown_field.dropdown_field) == list(config.JAR_SOURCES)
    assert jar_source.default_value in config.JAR_SOURCES


def test_each_kind_renders_as_its_fivetran_type(monkeypatch: pytest.MonkeyPatch) -> None:
    base = form.FIELDS[0]
    kinds = {
        "t": form.Kind.TEXT,
        "s": form.Kind.SECRET,
        "d": form.Kind.DROPDOWN,
        "b": form.Kind.TOGGLE,
    }
    specs = tuple(replace(base, name=n, kind=k, choices=("x",)) for n, k in kinds.items())
    monkeypatch.setattr(form, "FIELDS", specs)
    fields = {f.name: f for f in form.configuration_form().fields}
    assert fields["t"].WhichOneof("type") == "text_field"
    assert fields["t"].text_field == form.common.PlainText
    assert fields["s"].text_field == form.common.Password
    assert fields["d"].WhichOneof("type") == "dropdown_field"
    assert fields["b"].WhichOneof("type") == "toggle_field"


def test_tests_are_named_for_what_they_check() -> None:
    tests = {t.name: t.label for t in form.configuration_form().tests}
    assert tests == {
        "settings_are_valid": "Checking the settings are valid",
        "spark_reaches_warehouse": "Starting Spark and reading the Iceberg warehouse",
    }
