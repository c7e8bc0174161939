"""One configuration model: the README, the flags and the JSON request form follow it (pure)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from spark_destination.cli.flags import config_defaults, operator_settings
from spark_destination.cli.main import build_parser
from spark_destination.core.config import DestinationConfig, OperatorConfig, parse_config
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.warehouses import ALLOWED_WAREHOUSES_ENV
from spark_destination.engine.request_json import parse_request

ROOT = Path(__file__).resolve().parents[2]
KEYS = [f.name for f in dataclasses.fields(DestinationConfig)]


def readme_keys(text: str) -> list[str]:
    """The first-column names of every Markdown table whose first header cell is ``key``."""
    keys: list[str] = []
    in_key_table = False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
        if not cells:
            in_key_table = False
        elif cells[0] == "key":
            in_key_table = True
        elif in_key_table and (name := re.fullmatch(r"`([a-z0-9_]+)`", cells[0])):
            keys.append(name.group(1))
    return keys


def test_the_readme_lists_exactly_the_models_keys() -> None:
    listed = readme_keys((ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(listed) == set(KEYS), (set(KEYS) - set(listed), set(listed) - set(KEYS))


def test_readme_key_tables_are_found_wherever_they_stand() -> None:
    text = "intro\n\n| key | meaning |\n|---|---|\n| `a_b` | x |\n\n| other | x |\n| `c` | y |\n"
    assert readme_keys(text) == ["a_b"]


@pytest.mark.parametrize("command", ["serve", "replay", "demo", "maintain", "flush"])
def test_every_key_is_a_kebab_case_flag_whose_value_is_a_default(command: str) -> None:
    values = {"catalog": "other", "executor_cores": "3", "spark_conf": "spark.a=1"}
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in values.items()]
    positional = {"replay": ["x.json"], "maintain": ["s", "t"]}.get(command, [])
    args = build_parser().parse_args([command, *positional, *flags])
    assert config_defaults(args) == values
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[union-attr]
    options = {o for action in sub._actions for o in action.option_strings}
    assert {f"--{k.replace('_', '-')}" for k in KEYS} <= options


def test_the_short_names_people_use_stay_aliases() -> None:
    args = build_parser().parse_args(["serve", "--master", "local[2]"])
    assert config_defaults(args) == {"spark_master": "local[2]"}


def test_a_bad_flag_value_is_refused_at_once_naming_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--catalog", "my-lake"])
    assert "catalog 'my-lake' must be a plain name" in capsys.readouterr().err


def test_the_allow_list_comes_from_flags_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ALLOWED_WAREHOUSES_ENV, "/env/a, /env/b")
    plain = build_parser().parse_args(["serve"])
    assert operator_settings(plain).allowed_warehouses == ("/env/a", "/env/b")
    flagged = build_parser().parse_args(
        ["serve", "--allowed-warehouse", "/x", "--allowed-warehouses", "/y,/z"]
    )
    assert operator_settings(flagged).allowed_warehouses == ("/x", "/y", "/z")
    assert config_defaults(flagged) == {}


def test_a_request_can_never_set_the_allow_list() -> None:
    operator_keys = {f.name for f in dataclasses.fields(OperatorConfig)}
    assert not operator_keys & set(KEYS)
    request = {"request": "describe_table", "schema": "s", "table_name": "t"}
    with pytest.raises(ConfigurationError, match="unknown configuration key.*allowed_warehouses"):
        parse_request({**request, "configuration": {"allowed_warehouses": "/"}})


def test_the_json_request_form_refuses_unknown_keys_and_bad_values() -> None:
    request = {"request": "describe_table", "schema": "s", "table_name": "t"}
    with pytest.raises(ConfigurationError, match=r"unknown configuration key\(s\) 'warehous'"):
        parse_request({**request, "configuration": {"warehous": "/w"}})
    with pytest.raises(ConfigurationError, match="spark_master"):
        parse_request({**request, "configuration": {"spark_master": "nope"}})
    parsed = parse_request({**request, "configuration": {"catalog": "other"}})
    assert parsed.config == parse_config({"catalog": "other"})


def test_a_secret_is_never_in_the_repr() -> None:
    shown = repr(parse_config({"catalog_credential": "id:s3cret"}))
    assert "s3cret" not in shown and "catalog_credential" not in shown
