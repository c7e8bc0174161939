"""ConfigurationForm reads like a well-made setup form, rendered from the configuration model."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from spark_destination.core import config
from spark_destination.core.settings import FormKind, setting
from spark_destination.server import form


def test_one_field_per_key_each_with_a_label_a_description_and_a_type() -> None:
    response = form.configuration_form()
    keys = [
        f.name
        for f in dataclasses.fields(config.DestinationConfig)
        if f.name not in config.SERVER_ONLY_KEYS
    ]
    fields = form.every_field(response)
    # catalog_uri is in the REST and in the Hive group; every other key appears once.
    names = [f.name for f in fields]
    assert sorted(set(names)) == sorted(keys)
    assert [n for n in names if names.count(n) > 1] == ["catalog_uri", "catalog_uri"]
    for field in fields:
        assert field.label and field.label != field.name
        assert field.description.endswith(".")
        assert field.WhichOneof("type") is not None


def test_defaults_are_what_the_destination_uses_when_a_field_is_empty() -> None:
    fields = form.every_field(form.configuration_form())
    shown = {f.name: f.default_value for f in fields if f.HasField("default_value")}
    assert {"warehouse", "catalog", "spark_master", "driver_memory", "jar_source"} <= set(shown)
    # Every default shown parses to the value an empty key gets.
    assert config.parse_config(shown) == config.parse_config({})


def test_start_up_settings_say_they_are_fixed_when_spark_starts() -> None:
    fields = {f.name: f for f in form.every_field(form.configuration_form())}
    assert "Fixed when the destination starts Spark" in fields["spark_master"].description
    assert "Fixed when the destination starts Spark" not in fields["warehouse"].description


def test_choices_are_a_dropdown_whose_default_is_one_of_them() -> None:
    fields = form.every_field(form.configuration_form())
    (jar_source,) = [f for f in fields if f.name == "jar_source"]
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
        "spark_reaches_warehouse": "Starting Spark and reading the warehouse",
        "catalog_takes_commits": (
            "Creating, locking, altering and dropping a probe table in the catalog"
        ),
    }


def _groups(response: Any) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for field in response.fields:
        if field.WhichOneof("type") != "conditional_fields":
            continue
        condition = field.conditional_fields.condition
        shown = condition.WhichOneof("visible_when")
        value = str(getattr(condition, shown)).lower()
        found[(condition.condition_field, value)] = [
            f.name for f in field.conditional_fields.fields
        ]
    return found


def test_a_first_time_user_sees_the_few_fields_a_sync_needs() -> None:
    response = form.configuration_form()
    top = [f.name for f in response.fields if f.WhichOneof("type") != "conditional_fields"]
    assert top == [
        "storage",
        "warehouse",
        "table_format",
        "write_mode",
        "catalog_type",
        "bad_value_policy",
        "advanced_settings",
    ]


def test_fields_appear_for_the_choices_that_use_them() -> None:
    groups = _groups(form.configuration_form())
    assert groups[("storage", "s3")] == [
        "s3_region",
        "s3_endpoint",
        "s3_credentials",
        "s3_access_key_id",
        "s3_secret_access_key",
    ]
    assert ("storage", "local") not in groups
    assert groups[("catalog_type", "rest")] == [
        "catalog_uri",
        "catalog_auth",
        "catalog_credential",
        "catalog_signing_name",
    ]
    assert groups[("catalog_type", "hive")] == ["catalog_uri"]
    assert ("catalog_type", "hadoop") not in groups
    assert groups[("write_mode", "deferred")] == [
        "merge_interval_ms",
        "merge_records_threshold",
        "intermediate_table_prefix",
    ]
    assert groups[("bad_value_policy", "null")] == ["changes_table"]
    assert "spark_master" in groups[("advanced_settings", "true")]


def test_every_condition_names_a_key_and_one_of_its_values() -> None:
    specs = dict(config.settings_of(config.DestinationConfig))
    for name, spec in specs.items():
        for key, value in spec.shown_when:
            assert key in specs and not specs[key].shown_when, (name, key)
            choices = specs[key].choices or ("true", "false")
            assert value in choices, (name, key, value)


def test_the_advanced_toggle_is_a_key_every_request_may_carry() -> None:
    assert config.parse_config({"advanced_settings": "true"}).advanced_settings is True
    assert config.parse_config({}).advanced_settings is False
