"""Where the installed jars are, and which go on a new JVM's class path (never fetches).

The pinned artifacts (``artifacts``) are installed once by ``spark-destination install-jars``
(``jar_install``) into ``installed_jars_dir()``; a frozen program carries them in its bundle
(``bundled_jars_dir()``, filled by the PyInstaller hook), which is looked at first. A jar is
taken when its size is the pinned one (the install step checked its SHA-256; hashing 120 MB
again at every start would cost a second), and a missing one is a ``ConfigurationError`` that
names the install command. The Iceberg group also takes the project's own ``jdk.net`` stub jar
(``jdk_net_stubs``), which the install step writes beside the pinned jars.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import jdk_net_stubs
from spark_destination.runtime.spark.artifacts import (
    DESTINATION_GROUPS,
    Artifact,
    JarGroup,
    artifacts_of,
)

INSTALL_COMMAND: Final = "spark-destination install-jars"
CACHE_ENV: Final = "SPARK_DESTINATION_CACHE"
# The folder of a frozen bundle that holds the jars (``_pyinstaller/hook-spark_destination``).
BUNDLED_FOLDER: Final = "spark_destination_jars"


def default_cache_dir() -> Path:
    """``$SPARK_DESTINATION_CACHE`` or ``~/.cache/spark-destination``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "spark-destination"


def installed_jars_dir() -> Path:
    return default_cache_dir() / "jars"


def bundled_jars_dir() -> Path | None:
    """The jar folder inside a frozen program, or None when not frozen."""
    root = getattr(sys, "_MEIPASS", None)
    return Path(root) / BUNDLED_FOLDER if root else None


def pyspark_jars_dir() -> Path:
    # find_spec locates the package without importing it: importing pyspark costs time.
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            "Python package 'pyspark' is not installed (pip install -r requirements.lock)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def _folders() -> tuple[Path, ...]:
    bundled = bundled_jars_dir()
    return (*((bundled,) if bundled else ()), installed_jars_dir())


def _find(name: str, size: int) -> Path | None:
    for folder in _folders():
        path = folder / name
        if path.is_file() and path.stat().st_size == size:
            return path.absolute()
    return None


def find_jar(artifact: Artifact) -> Path | None:
    """``artifact``'s jar (bundled first, then installed) when present at its pinned size."""
    return _find(artifact.file_name, artifact.size)


def stub_jar() -> Path | None:
    """The ``jdk.net`` stub jar, when installed as ``jdk_net_stubs`` writes it."""
    return _find(jdk_net_stubs.JAR_NAME, len(jdk_net_stubs.jar_bytes()))


def missing_jar_message(names: Iterable[str], what: str, group: JarGroup) -> str:
    # The install step's default is the destination's groups; another one must be named.
    command = INSTALL_COMMAND if group in DESTINATION_GROUPS else f"{INSTALL_COMMAND} {group}"
    return (
        f"{what} needs jars that are not installed ({', '.join(names)}); run `{command}` "
        f"(scripts/bootstrap.sh and build.sh run it), then restart the destination"
    )


def group_jars(group: JarGroup, what: str) -> tuple[Path, ...]:
    """The jars of ``group``; a ``ConfigurationError`` naming the install command if one is
    missing."""
    artifacts = artifacts_of({group})
    found = [find_jar(a) for a in artifacts]
    absent = [a.coordinate for a, path in zip(artifacts, found, strict=True) if path is None]
    if group is JarGroup.ICEBERG:
        found.append(stub_jar())
        if found[-1] is None:
            absent.append(jdk_net_stubs.JAR_NAME)
    if absent:
        raise ConfigurationError(missing_jar_message(absent, what, group))
    return tuple(path for path in found if path is not None)


def session_jars(required: frozenset[JarGroup]) -> tuple[Path, ...]:
    """The jars a new destination JVM starts with: every group in ``required`` (or a
    ``ConfigurationError``), plus each other destination group that is installed whole, so a
    later request may use it (jars are fixed when the JVM starts)."""
    jars: list[Path] = []
    for group in sorted(DESTINATION_GROUPS | required):
        if group in required:
            jars += group_jars(group, f"jar group {group.value!r}")
            continue
        found = [find_jar(a) for a in artifacts_of({group})]
        if all(found):
            jars += [path for path in found if path is not None]
    for jar in jars:
        if "," in str(jar):
            # spark.jars is comma-separated, with no escaping.
            raise ConfigurationError(f"jar path {jar} contains a comma; move the jar folder")
    return tuple(jars)


def live_groups(spark_jars: str) -> frozenset[JarGroup]:
    """The groups whose jars are all on a running JVM's ``spark.jars`` (its start-up value)."""
    names = {Path(entry.strip()).name for entry in spark_jars.split(",") if entry.strip()}
    return frozenset(
        group for group in JarGroup if all(a.file_name in names for a in artifacts_of({group}))
    )
