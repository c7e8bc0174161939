"""Write ``requirements.txt`` (the pinned runtime set Fivetran's build installs) from the lock.

``requirements.lock`` is the one home of every pin. ``requirements.txt`` holds the subset the
destination needs at run time: the closure of ``[project.dependencies]`` in ``pyproject.toml``
over the installed packages' metadata, plus ``grpcio-tools``, which ``build.sh`` needs to
generate the stubs. Usage: ``python scripts/runtime_requirements.py [--check]``; ``--check``
exits 1 when the committed file differs (``tests/unit/test_root_files.py`` runs the same check).
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

REPO_ROOT = Path(__file__).resolve().parent.parent
LOCK = REPO_ROOT / "requirements.lock"
OUTPUT = REPO_ROOT / "requirements.txt"
# Needed by build.sh (stub generation), not by the running destination.
BUILD_TOOLS = ("grpcio-tools",)
# grpcio-tools asks for setuptools, which every Python environment with pip already has; the
# lock (what the venv installs) does not pin it either.
ENVIRONMENT_PACKAGES = frozenset({"setuptools", "pip"})
HEADER = (
    "# The pinned runtime set (plus grpcio-tools for build.sh), generated from requirements.lock\n"
    "# by scripts/runtime_requirements.py; edit the lock, then run that script.\n"
)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins() -> dict[str, str]:
    """Canonical name -> the lock's ``name==version`` line."""
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            pins[canonical(Requirement(line).name)] = line
    return pins


def _direct() -> list[Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(text) for text in project["project"]["dependencies"]] + [
        Requirement(name) for name in BUILD_TOOLS
    ]


def runtime_closure() -> set[str]:
    """Canonical names of the direct requirements and everything they need, recursively."""
    environment = {k: str(v) for k, v in default_environment().items()}
    seen: set[str] = set()
    todo = _direct()
    while todo:
        requirement = todo.pop()
        name = canonical(requirement.name)
        if name in seen or name in ENVIRONMENT_PACKAGES:
            continue
        seen.add(name)
        for text in metadata.requires(requirement.name) or []:
            needed = Requirement(text)
            # Extras are never requested here, so a requirement that needs one is skipped.
            if needed.marker is None or needed.marker.evaluate({**environment, "extra": ""}):
                todo.append(needed)
    return seen


def render() -> str:
    pins = lock_pins()
    closure = runtime_closure()
    missing = sorted(closure - set(pins))
    if missing:
        raise SystemExit(f"requirements.lock lacks a pin for: {', '.join(missing)}")
    lines = sorted((pins[name] for name in closure), key=str.lower)
    return HEADER + "".join(f"{line}\n" for line in lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print("requirements.txt is stale: run python scripts/runtime_requirements.py")
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
