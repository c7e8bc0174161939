"""ConfigurationForm reads like a well-made setup form, rendered from the configuration model."""

from __future__ import annotations

import dataclasses
import enum

from spark_destination.core import config
from spark_destination.core.config import FormKind, setting
from spark_destination.server import form


def test_one_field_per_key_each_with_a_label_a_description_and_a_type() -> None:
    response = form.configuration_form()
    keys = [f.name for f in dataclasses.fields(config.DestinationConfig)]
    assert [f.name for f in response.fields] == keys
    for field in response.fields:
        assert field.label and field.label != field.name
        assert field.description.endswith(".")
        assert field.WhichOneof("type") is not None


def test_defaults_are_what_the_destination_uses_when_a_field_is_empty() -> None:
    fields = form.configuration_form().fields
    shown = {f.name: f.default_value for f in fields if f.HasField("default_value")}
    assert {"warehouse", "catalog", "spark_master", "driver_memory", "jar_source"} <= set(shown)
    # Every default shown parses to the value an empty key gets.
    assert config.parse_config(shown) == config.parse_config({})


def test_start_up_settings_say_they_are_fixed_when_spark_starts() -> None:
    fields = {f.name: f for f in form.configuration_form().fields}
    assert "Fixed when the destination starts Spark" in fields["spark_master"].description
    assert "Fixed when the destination starts Spark" not in fields["warehouse"].description


def test_choices_are_a_dropdown_whose_default_is_one_of_them() -> None:
    (jar_source,) = [f for f in form.configuration_form().fields if f.name == "jar_source"]
    assert jar_source.WhichOneof("type") == "dropdown_field"
    assert list(jar_source.dropdown_field.dropdown_field) == [s.value for s in config.JarSource]
    assert jar_source.default_value in list(jar_source.dropdown_field.dropdown_field)


class _Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Kinds:
    t: str = setting("", parse=str, label="T", description="t.")
    s: str = setting("", parse=str, label="S", description="s.", kind=FormKind.SECRET)
    d: _Colour = setting(
        _Colour.RED, parse=_Colour, label="D", description="d.", kind=FormKind.DROPDOWN
    )
    b: bool = setting(False, parse=bool, label="B", description="b.", kind=FormKind.TOGGLE)


def test_each_kind_renders_as_its_fivetran_type() -> None:
    fields = {f.name: f for f in form.configuration_form(_Kinds).fields}
    assert fields["t"].WhichOneof("type") == "text_field"
    assert fields["t"].text_field == form.common.PlainText
    assert fields["s"].text_field == form.common.Password
    assert fields["d"].WhichOneof("type") == "dropdown_field"
    assert list(fields["d"].dropdown_field.dropdown_field) == ["red"]
    assert fields["b"].WhichOneof("type") == "toggle_field"


def test_tests_are_named_for_what_they_check() -> None:
    tests = {t.name: t.label for t in form.configuration_form().tests}
    assert tests == {
        "settings_are_valid": "Checking the settings are valid",
        "spark_reaches_warehouse": "Starting Spark and reading the Iceberg warehouse",
        "catalog_takes_commits": (
            "Creating, locking, altering and dropping a probe table in the catalog"
        ),
    }
