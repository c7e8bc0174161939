"""Which statement skeletons a dialect renders with, declared by the dialect and checked when it
is built (so at import): ``templates/common`` holds the skeletons every dialect shares; a
dialect's own folder holds exactly the ones it declares, each either an override of a common
skeleton or one no other dialect has. A declared skeleton that is missing, a file nobody
declared, an override that shadows nothing and an own skeleton that shadows a common one all
fail there, never by a silent fallback at render time.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Final

import jinja2

from spark_destination.dialects import edge

COMMON: Final = "common"
SUFFIX: Final = ".sql.j2"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skeletons:
    """A dialect's templates: its folder under ``templates/``, the common skeletons it
    overrides there, the ones only it has, and which of its statements sqlglot's grammar for
    it does not cover (rendered on ``edge``'s command path)."""

    folder: str
    overrides: frozenset[str] = frozenset()
    own: frozenset[str] = frozenset()
    commands: frozenset[str] = frozenset()

    def check(self, dialect: str) -> None:
        """Raise ``ValueError`` naming what does not match the folder."""
        common, here = names(COMMON), names(self.folder)
        problems = []
        if missing := (self.overrides | self.own) - here:
            problems.append(f"declared but missing in templates/{self.folder}: {sorted(missing)}")
        if undeclared := here - self.overrides - self.own:
            problems.append(f"templates/{self.folder} has undeclared {sorted(undeclared)}")
        if shadowing_nothing := self.overrides - common:
            problems.append(f"overrides shadowing no common template: {sorted(shadowing_nothing)}")
        if shadowing := self.own & common:
            problems.append(f"own templates shadowing common ones: {sorted(shadowing)}")
        if unknown := self.commands - common - self.own:
            problems.append(f"commands naming no template: {sorted(unknown)}")
        if problems:
            raise ValueError(f"dialect {dialect}: " + "; ".join(problems))

    @property
    def available(self) -> frozenset[str]:
        """Every template name this dialect can render."""
        return names(COMMON) | self.own


@functools.cache
def names(folder: str) -> frozenset[str]:
    """The skeleton names (without suffix) in ``templates/<folder>``."""
    root = resources.files("spark_destination") / "templates" / folder
    if not root.is_dir():
        return frozenset()
    return frozenset(
        entry.name.removesuffix(SUFFIX) for entry in root.iterdir() if entry.name.endswith(SUFFIX)
    )


def _source(folder: str, name: str) -> str:
    return (resources.files("spark_destination") / "templates" / folder / name).read_text(
        encoding="utf-8"
    )


@functools.cache
def environment(skeletons: Skeletons) -> jinja2.Environment:
    """The Jinja environment of one dialect: each name from the folder the declaration says
    (an include resolves the same way)."""
    folders = dict.fromkeys(names(COMMON), COMMON)
    folders.update(dict.fromkeys(skeletons.overrides | skeletons.own, skeletons.folder))

    def load(template: str) -> str:
        name = template.removesuffix(SUFFIX)
        if name not in folders:
            raise jinja2.TemplateNotFound(template)
        return _source(folders[name], name + SUFFIX)

    return edge.environment(jinja2.FunctionLoader(load))
