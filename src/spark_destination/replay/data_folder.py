"""The destination tester's data folder: its configuration file and its input files.

The tester reads one folder. ``configuration.json`` in it is the destination's configuration (a
JSON object of string keys to string values), sent with every request; it is never an input
file. Every other ``*.json`` file directly in the folder (not in its sub-folders) is an input
file, and the tester runs them in the alphabetical order of their names. ``--input-file NAME``
runs that one file instead, still with the folder's configuration.

``replay`` takes folders and files: a folder stands for its input files in that order, the
paths run in the order given, and a ``configuration.json`` given as a path (as a shell's
``DIR/*.json`` gives it) is read as the configuration too, never run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from spark_destination.replay.values import TesterInputError

__all__ = [
    "CONFIGURATION_FILE",
    "DataFolder",
    "expand_inputs",
    "folder_inputs",
    "is_configuration",
    "load_configuration",
    "read_data_folder",
]

CONFIGURATION_FILE: Final = "configuration.json"


def is_configuration(path: Path) -> bool:
    return path.name == CONFIGURATION_FILE


def folder_inputs(folder: Path) -> list[Path]:
    """A folder's input files in the tester's order: alphabetical by name.

    The tester takes the folder's regular files whose names end in ``.json``, except the
    configuration file; sub-folders are not searched.
    """
    files = (
        p
        for p in folder.iterdir()
        if p.name.endswith(".json") and not is_configuration(p) and p.is_file()
    )
    return sorted(files, key=lambda p: p.name)


def expand_inputs(paths: Iterable[Path]) -> list[Path]:
    """The input files to run, in order: files as given, a folder's in the tester's order."""
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            expanded += folder_inputs(path)
        elif not is_configuration(path):
            expanded.append(path)
    return expanded


def _json_kind(value: Any) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case _:
            return "an object"


def load_configuration(path: Path) -> dict[str, str]:
    """The configuration a ``configuration.json`` holds; every error names the file.

    Messages name keys and JSON types, never values: the file holds secrets.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TesterInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TesterInputError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise TesterInputError(
            f"{path}: the configuration must be a JSON object of string values, "
            f"not {_json_kind(data)}"
        )
    wrong = [f"{key!r} is {_json_kind(v)}" for key, v in data.items() if not isinstance(v, str)]
    if wrong:
        raise TesterInputError(
            f"{path}: every configuration value must be a string; {', '.join(wrong)}"
        )
    return dict(data)


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFolder:
    """What a replay runs: its input files and folders, and the configuration read beside them."""

    paths: tuple[Path, ...]
    configuration: Mapping[str, str]
    # The configuration files read, in the order given (for the report).
    configuration_files: tuple[Path, ...]


def _configuration_of(files: Sequence[Path]) -> dict[str, str]:
    """The files' configurations together; two files giving one key two values is an error,
    as no order between folders says which should win."""
    merged: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for path in files:
        for key, value in load_configuration(path).items():
            if key in merged and merged[key] != value:
                raise TesterInputError(
                    f"{path}: configuration key {key!r} differs from its value in {origin[key]}"
                )
            merged[key] = value
            origin.setdefault(key, path)
    return merged


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    unique = []
    for path in paths:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append(path)
    return unique


def read_data_folder(given: Sequence[Path], *, input_files: Sequence[str], cwd: Path) -> DataFolder:
    """The input paths and the configuration of a replay's positional paths and ``--input-file``.

    Folders given are data folders: their ``configuration.json`` is read. With ``--input-file``
    only the files named run, looked up as given, then in those folders; with no folder given,
    ``cwd`` is the data folder (the tester runs in its data folder).
    """
    folders = [p for p in given if p.is_dir()]
    configuration_files = [p for p in given if is_configuration(p) and not p.is_dir()]
    chosen = [p for p in given if p.is_dir() or not is_configuration(p)]
    if input_files:
        folders = folders or [cwd]
        chosen = [p for p in chosen if not p.is_dir()]
        for name in input_files:
            if Path(name).name == CONFIGURATION_FILE:
                raise TesterInputError(
                    f"--input-file {name}: {CONFIGURATION_FILE} is the configuration, "
                    "never an input file"
                )
            candidates = [Path(name), *(folder / name for folder in folders)]
            found = next((c for c in candidates if c.is_file()), None)
            if found is None:
                where = ", ".join(str(f) for f in folders)
                raise TesterInputError(f"--input-file {name}: no such file (looked in {where})")
            chosen.append(found)
    elif not chosen:
        raise TesterInputError("replay needs input files or folders (or --input-file)")
    beside = [folder / CONFIGURATION_FILE for folder in folders]
    configuration_files += [p for p in beside if p.is_file()]
    configuration_files = _unique(configuration_files)
    return DataFolder(
        paths=tuple(chosen),
        configuration=MappingProxyType(_configuration_of(configuration_files)),
        configuration_files=tuple(configuration_files),
    )
