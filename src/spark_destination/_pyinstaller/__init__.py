"""PyInstaller hooks, found through the ``pyinstaller40`` entry point in ``pyproject.toml``.

They let a plain ``pyinstaller main.py`` (as Fivetran's build runs it, without a spec file of
ours) produce a program that runs with no Python and no Java on the machine: the hook for
``spark_destination`` adds what static analysis cannot see (docs: shared/reference/packaging.md).
"""

from __future__ import annotations

from pathlib import Path


def get_hook_dirs() -> list[str]:
    return [str(Path(__file__).resolve().parent)]
