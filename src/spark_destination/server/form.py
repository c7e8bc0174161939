"""ConfigurationForm: one field per key of ``core.config.DestinationConfig``, and the named tests.

The fields come from the configuration model (label, description, default, kind, choices);
this module only maps them onto the protobuf. Dropdowns offer choices, toggles yes/no,
secrets are password fields, everything else plain text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, assert_never

from spark_destination.core.config import DestinationConfig
from spark_destination.core.settings import FormKind, Setting, settings_of
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common


@dataclass(frozen=True, slots=True)
class Test:
    name: str
    label: str


# Named for what they check; the servicer runs them by name.
TEST_SETTINGS: Final = "settings_are_valid"
TEST_WAREHOUSE: Final = "spark_reaches_warehouse"
TEST_CATALOG: Final = "catalog_takes_commits"
TESTS: Final = (
    Test(TEST_SETTINGS, "Checking the settings are valid"),
    Test(TEST_WAREHOUSE, "Starting Spark and reading the warehouse"),
    Test(TEST_CATALOG, "Creating, locking, altering and dropping a probe table in the catalog"),
)


def _add(fields: Any, name: str, spec: Setting[Any]) -> None:
    field = fields.add(name=name, label=spec.label, description=spec.help, required=False)
    if spec.default_text is not None:
        field.default_value = spec.default_text
    if spec.placeholder is not None:
        field.placeholder = spec.placeholder
    match spec.kind:
        case FormKind.TEXT:
            field.text_field = common.PlainText
        case FormKind.SECRET:
            field.text_field = common.Password
        case FormKind.DROPDOWN:
            field.dropdown_field.dropdown_field.extend(spec.choices)
        case FormKind.TOGGLE:
            field.toggle_field.SetInParent()
        case _:
            assert_never(spec.kind)


def every_field(form: common.ConfigurationFormResponse) -> list[common.FormField]:
    """The form's input fields, those inside conditional groups included (not the groups)."""
    found: list[common.FormField] = []
    for field in form.fields:
        if field.WhichOneof("type") == "conditional_fields":
            found.extend(field.conditional_fields.fields)
        else:
            found.append(field)
    return found


def configuration_form(model: type[Any] = DestinationConfig) -> common.ConfigurationFormResponse:
    """Every key once at the top level, or inside the conditional group(s) of the key whose
    value shows it (``Setting.shown_when``), placed right after that key's field: a
    first-time user sees the few fields every sync needs."""
    form = common.ConfigurationFormResponse(
        schema_selection_supported=True, table_selection_supported=True
    )
    groups: dict[tuple[str, str], list[tuple[str, Setting[Any]]]] = {}
    for name, spec in settings_of(model):
        for condition in spec.shown_when:
            groups.setdefault(condition, []).append((name, spec))
    for name, spec in settings_of(model):
        if spec.shown_when or spec.server_only:
            continue
        _add(form.fields, name, spec)
        for (key, value), members in groups.items():
            if key != name:
                continue
            group = form.fields.add(name=f"{key}_{value}", label=f"{spec.label}: {value}")
            group.conditional_fields.condition.condition_field = key
            if spec.kind is FormKind.TOGGLE:
                group.conditional_fields.condition.bool_value = value == "true"
            else:
                group.conditional_fields.condition.string_value = value
            for member, member_spec in members:
                _add(group.conditional_fields.fields, member, member_spec)
    for test in TESTS:
        form.tests.add(name=test.name, label=test.label)
    return form
