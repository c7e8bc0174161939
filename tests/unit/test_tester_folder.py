"""The destination tester's data folder: configuration.json beside the input files (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_destination.core.errors import DestinationError
from spark_destination.replay.data_folder import (
    CONFIGURATION_FILE,
    expand_inputs,
    folder_inputs,
    load_configuration,
    read_data_folder,
)
from tests.support.data_folder import CONFIGURATION, make_data_folder


def test_a_folder_runs_its_input_files_alphabetically_and_never_its_configuration(
    tmp_path: Path,
) -> None:
    folder = make_data_folder(tmp_path)
    # Names sort as text, as the tester sorts them: input_10 before input_2.
    expected = [folder / n for n in ("input_10.json", "input_2.json")]
    expected.append(folder / "schema_migrations_input_ddl.json")
    assert folder_inputs(folder) == expected
    assert expand_inputs([folder, folder / CONFIGURATION_FILE]) == expected


def test_the_folders_configuration_is_read_beside_its_input_files(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    found = read_data_folder([folder], input_files=[], cwd=tmp_path)
    assert found.paths == (folder,)
    assert dict(found.configuration) == CONFIGURATION
    assert found.configuration_files == (folder / CONFIGURATION_FILE,)


def test_a_shell_glob_of_the_folder_gives_the_same_run(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    globbed = sorted(folder.glob("*.json"))
    found = read_data_folder(globbed, input_files=[], cwd=tmp_path)
    assert dict(found.configuration) == CONFIGURATION
    assert list(found.paths) == folder_inputs(folder)


def test_input_file_runs_one_file_with_the_folders_configuration(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    found = read_data_folder([folder], input_files=["input_2.json"], cwd=tmp_path)
    assert found.paths == (folder / "input_2.json",)
    assert dict(found.configuration) == CONFIGURATION
    # With no folder given, the current folder is the data folder, as the tester's is.
    found = read_data_folder([], input_files=["input_10.json"], cwd=folder)
    assert found.paths == (folder / "input_10.json",)
    assert dict(found.configuration) == CONFIGURATION


def test_paths_run_in_the_order_given(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    last = folder / "input_10.json"
    found = read_data_folder([last, folder], input_files=[], cwd=tmp_path)
    assert found.paths == (last, folder)
    assert expand_inputs(found.paths) == [last, *folder_inputs(folder)]


def test_input_file_never_names_the_configuration(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    with pytest.raises(DestinationError, match="is the configuration, never an input file"):
        read_data_folder([folder], input_files=[CONFIGURATION_FILE], cwd=tmp_path)


def test_a_folder_without_configuration_sends_none(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    (folder / CONFIGURATION_FILE).unlink()
    found = read_data_folder([folder], input_files=[], cwd=tmp_path)
    assert (dict(found.configuration), found.configuration_files) == ({}, ())


def test_nothing_to_run_is_an_error(tmp_path: Path) -> None:
    folder = make_data_folder(tmp_path)
    with pytest.raises(DestinationError, match="needs input files or folders"):
        read_data_folder([folder / CONFIGURATION_FILE], input_files=[], cwd=tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('["warehouse", "/lake"]', "must be a JSON object of string values, not an array"),
        ('"warehouse"', "must be a JSON object of string values, not a string"),
        ('{"warehouse": "/lake", "port": 5432}', "must be a string; 'port' is a number"),
        ('{"a": true, "b": null, "c": {}}', "'a' is a boolean, 'b' is null, 'c' is an object"),
        ('{"warehouse": ', "not valid JSON"),
    ],
)
def test_a_malformed_configuration_names_its_file(tmp_path: Path, text: str, message: str) -> None:
    folder = make_data_folder(tmp_path)
    path = folder / CONFIGURATION_FILE
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DestinationError, match=message) as raised:
        read_data_folder([folder], input_files=[], cwd=tmp_path)
    assert str(raised.value).startswith(f"{path}: ")


def test_a_configuration_error_never_shows_a_value(tmp_path: Path) -> None:
    path = tmp_path / CONFIGURATION_FILE
    path.write_text('{"secret": ["hunter2"]}', encoding="utf-8")
    with pytest.raises(DestinationError) as raised:
        load_configuration(path)
    assert "hunter2" not in str(raised.value)


def test_two_folders_giving_one_key_two_values_is_an_error(tmp_path: Path) -> None:
    first, second = make_data_folder(tmp_path / "a"), make_data_folder(tmp_path / "b")
    (second / CONFIGURATION_FILE).write_text('{"catalog": "other"}', encoding="utf-8")
    with pytest.raises(DestinationError, match="'catalog' differs from its value in"):
        read_data_folder([first, second], input_files=[], cwd=tmp_path)
    (second / CONFIGURATION_FILE).write_text('{"catalog": "from_file"}', encoding="utf-8")
    found = read_data_folder([first, second], input_files=[], cwd=tmp_path)
    assert dict(found.configuration) == CONFIGURATION
