"""The jar install step and the jar lookup: Ivy resolving from a Maven-layout repository on
disk (a real resolve, no network), the pinned-hash check, and the task a missing jar gives."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
from pathlib import Path

import pytest

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import jar_install, jars, jdk_net_stubs
from spark_destination.runtime.spark.artifacts import (
    ARTIFACTS,
    DESTINATION_GROUPS,
    ICEBERG_RUNTIME,
    Artifact,
    JarGroup,
)

_JAR_BYTES = b"PK\x05\x06" + b"\0" * 18  # an empty zip archive


def _repository(root: Path, artifact: Artifact, data: bytes) -> str:
    """A Maven-layout repository holding ``artifact`` (its pom and jar) under ``root``."""
    folder = root.joinpath(*artifact.group_id.split("."), artifact.artifact_id, artifact.version)
    folder.mkdir(parents=True)
    stem = f"{artifact.artifact_id}-{artifact.version}"
    (folder / f"{stem}.pom").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>{artifact.group_id}</groupId><artifactId>{artifact.artifact_id}</artifactId>"
        f"<version>{artifact.version}</version></project>"
    )
    (folder / f"{stem}.jar").write_bytes(data)
    return root.as_uri()


def _pinned(data: bytes, **changes: object) -> Artifact:
    fields: dict[str, object] = {
        "group_id": "org.example.test",
        "artifact_id": "probe",
        "version": "1.0",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "jar_group": JarGroup.ICEBERG,
        **changes,
    }
    return Artifact(**fields)  # type: ignore[arg-type]


def _only(monkeypatch: pytest.MonkeyPatch, artifact: Artifact) -> None:
    monkeypatch.setattr(jar_install, "artifacts_of", lambda groups: (artifact,))


def test_install_resolves_checks_and_caches_a_pinned_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _pinned(_JAR_BYTES)
    _only(monkeypatch, artifact)
    repository = _repository(tmp_path / "repo", artifact, _JAR_BYTES)
    folder = tmp_path / "jars"

    assert jar_install.install(folder=folder, repository=repository) == (artifact,)
    assert (folder / artifact.file_name).read_bytes() == _JAR_BYTES
    # Beside it only the project's jdk.net stubs: Ivy's cache and module files were temporary.
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [artifact.file_name, jdk_net_stubs.JAR_NAME]
    )
    # Installed and intact: a second install fetches nothing.
    assert jar_install.install(folder=folder, repository=repository) == ()


def test_a_jar_that_does_not_match_its_pinned_hash_is_refused_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _pinned(_JAR_BYTES, sha256="0" * 64)
    _only(monkeypatch, artifact)
    repository = _repository(tmp_path / "repo", artifact, _JAR_BYTES)
    folder = tmp_path / "jars"

    with pytest.raises(ConfigurationError, match=r"org\.example\.test:probe:1\.0"):
        jar_install.install(folder=folder, repository=repository)
    assert [p.name for p in folder.iterdir()] == [jdk_net_stubs.JAR_NAME]


def test_a_jar_the_repository_lacks_fails_the_install_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _pinned(_JAR_BYTES)
    _only(monkeypatch, artifact)
    (tmp_path / "empty").mkdir()

    with pytest.raises(ConfigurationError, match=r"resolving the pinned jars failed(.|\n)*probe"):
        jar_install.install(folder=tmp_path / "jars", repository=(tmp_path / "empty").as_uri())


def test_a_corrupt_cached_jar_is_fetched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _pinned(_JAR_BYTES)
    _only(monkeypatch, artifact)
    repository = _repository(tmp_path / "repo", artifact, _JAR_BYTES)
    folder = tmp_path / "jars"
    folder.mkdir()
    # Same size, other bytes: only the hash tells.
    (folder / artifact.file_name).write_bytes(b"X" * len(_JAR_BYTES))

    assert jar_install.install(folder=folder, repository=repository) == (artifact,)
    assert (folder / artifact.file_name).read_bytes() == _JAR_BYTES


def test_a_missing_jar_is_a_configuration_error_naming_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(jars.CACHE_ENV, str(tmp_path))
    with pytest.raises(ConfigurationError) as raised:
        jars.session_jars(frozenset({JarGroup.ICEBERG}))
    assert jars.INSTALL_COMMAND in str(raised.value)
    assert ICEBERG_RUNTIME.coordinate in str(raised.value)
    # A file of another size is not the pinned jar either.
    (tmp_path / "jars").mkdir()
    (tmp_path / "jars" / ICEBERG_RUNTIME.file_name).write_bytes(b"truncated")
    with pytest.raises(ConfigurationError, match="install-jars"):
        jars.session_jars(frozenset({JarGroup.ICEBERG}))


def test_a_missing_group_the_install_step_leaves_out_by_default_is_named_in_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3A's jars (Delta on S3) are not among the groups ``install-jars`` installs unasked."""
    monkeypatch.setenv(jars.CACHE_ENV, str(tmp_path))
    assert JarGroup.S3A not in DESTINATION_GROUPS
    with pytest.raises(ConfigurationError) as raised:
        jars.group_jars(JarGroup.S3A, "Delta on S3")
    assert f"`{jars.INSTALL_COMMAND} s3a`" in str(raised.value)
    with pytest.raises(ConfigurationError) as raised:
        jars.group_jars(JarGroup.DELTA, "Delta")
    assert f"`{jars.INSTALL_COMMAND}`" in str(raised.value)


def test_session_jars_add_the_other_installed_groups_and_skip_incomplete_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(jars.CACHE_ENV, str(tmp_path))
    folder = tmp_path / "jars"
    folder.mkdir()
    small = tuple(dataclasses.replace(a, size=len(a.file_name)) for a in ARTIFACTS)
    monkeypatch.setattr("spark_destination.runtime.spark.artifacts.ARTIFACTS", small)
    for artifact in small:
        if artifact.jar_group is not JarGroup.DELTA or artifact.artifact_id == "delta-spark_2.12":
            (folder / artifact.file_name).write_text(artifact.file_name)
    (folder / jdk_net_stubs.JAR_NAME).write_bytes(jdk_net_stubs.jar_bytes())

    names = [p.name for p in jars.session_jars(frozenset({JarGroup.ICEBERG}))]
    # Iceberg with the jdk.net stubs, and its AWS bundle; not Delta (one of its jars is
    # missing), not s3a (the metastore's, never the destination's).
    assert names == [
        *(a.file_name for a in small if a.jar_group is JarGroup.ICEBERG),
        jdk_net_stubs.JAR_NAME,
        *(a.file_name for a in small if a.jar_group is JarGroup.S3),
    ]
    assert jars.live_groups(",".join(str(folder / n) for n in names)) == {
        JarGroup.ICEBERG,
        JarGroup.S3,
    }


def test_the_pinned_jars_are_installed_here(tmp_path: Path) -> None:
    # scripts/bootstrap.sh ran the install step: every group is present and intact.
    args = argparse.Namespace(all=True, groups=[], folder=None, check=True, repository=None)
    assert jar_install.run(args) == 0
    assert set(JarGroup) > DESTINATION_GROUPS


def test_the_jdk_net_stub_jar_is_byte_identical_and_holds_both_classes() -> None:
    import io
    import zipfile

    data = jdk_net_stubs.jar_bytes()
    assert data == jdk_net_stubs.jar_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as jar:
        assert jar.namelist() == [
            "META-INF/MANIFEST.MF",
            "jdk/net/Sockets.class",
            "jdk/net/ExtendedSocketOptions.class",
        ]
        assert all(jar.read(n)[:4] == b"\xca\xfe\xba\xbe" for n in jar.namelist()[1:])
