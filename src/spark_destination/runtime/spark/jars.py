"""The jars a local Spark needs for Iceberg, found in installed Python packages (no Maven).

The jars that go on ``spark.jars`` in the bundled mode:

* the Iceberg Spark runtime from the ``snowpark-connect-deps-iceberg`` wheel;
* a jar of Jackson classes relocated to ``org.apache.iceberg.shaded.com.fasterxml.jackson``.
  The runtime jar in that wheel was built without Iceberg's shaded Jackson, so every metadata
  write fails with ``NoClassDefFoundError: org/apache/iceberg/shaded/.../JsonFactoryBuilder``.
  We rebuild the missing classes from the Jackson 2.15.2 jars that pyspark already ships, the
  same relocation maven-shade does: rename the class files and rewrite their constant pools;
* when installed, a jar of Apache HttpClient 5 relocated to
  ``org.apache.iceberg.shaded.org.apache.hc``, which the runtime jar's REST catalog client
  needs and also lacks (``rest_client``: its sources are Debian's jars, installed beforehand).

One engine builds both: a ``RelocatedJarSpec`` says which package moves where and which
resources outside it are kept; ``build_relocated_jar`` writes and caches the jar.

The relocation is pure Python. A class file keeps every cross reference as a constant-pool
index, and the strings that name classes (internal names, descriptors, signatures, dotted
names in string literals) all live in CONSTANT_Utf8 entries. Rewriting those entries in place
never changes an index, so the rest of the class file is copied byte for byte.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import struct
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from spark_destination.core.errors import ConfigurationError

# The Scala 2.12 build: pyspark 3.5 from PyPI is Scala 2.12; the 2.13 twin in the wheel would
# fail at class-load time.
ICEBERG_RUNTIME_GLOB = "iceberg-spark-runtime-3.5_2.12-*.jar"

# The Jackson artifacts Iceberg shades (checked: all 1,141 references from the runtime jar into
# shaded Jackson resolve against these four).
JACKSON_ARTIFACTS: tuple[str, ...] = (
    "jackson-annotations",
    "jackson-core",
    "jackson-databind",
    "jackson-datatype-jsr310",
)

SOURCE_PACKAGE = "com.fasterxml.jackson."
TARGET_PACKAGE = "org.apache.iceberg.shaded.com.fasterxml.jackson."

# Bump when the bytes this module writes change for the same inputs; it is part of the cache
# key, so old cached jars are then ignored rather than reused.
_BUILD_FORMAT = 1

_CLASS_MAGIC = 0xCAFEBABE
_MAX_UTF8_LENGTH = 0xFFFF
# Fixed entry timestamps make the output byte-identical for identical inputs (zip's minimum).
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)

# Payload sizes (bytes after the tag) of the fixed-size constant-pool entries, JVMS §4.4.
_FIXED_SIZES: dict[int, int] = {
    3: 4,  # Integer
    4: 4,  # Float
    5: 8,  # Long: takes two slots
    6: 8,  # Double: takes two slots
    7: 2,  # Class
    8: 2,  # String
    9: 4,  # Fieldref
    10: 4,  # Methodref
    11: 4,  # InterfaceMethodref
    12: 4,  # NameAndType
    15: 3,  # MethodHandle
    16: 2,  # MethodType
    17: 4,  # Dynamic
    18: 4,  # InvokeDynamic
    19: 2,  # Module
    20: 2,  # Package
}
_TAG_UTF8 = 1
_TAG_CLASS = 7
_TWO_SLOT_TAGS = frozenset({5, 6})


# --- Relocation of names -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Relocation:
    """A package prefix move, applied to internal (``a/b/``) and dotted (``a.b.``) forms alike.

    Both prefixes are given dotted and end with a dot, e.g. ``com.fasterxml.jackson.``.
    """

    source: str
    target: str
    _pattern: re.Pattern[bytes] = field(init=False, repr=False, compare=False)
    _needle: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for prefix in (self.source, self.target):
            if not re.fullmatch(r"(?:[A-Za-z_$][A-Za-z0-9_$]*\.)+", prefix):
                raise ConfigurationError(
                    f"relocation prefix {prefix!r} is not a dotted package prefix ending in '.'"
                )
        # Compiled once here: ``apply`` runs on ~100,000 constants per build.
        object.__setattr__(self, "_pattern", self._compile())
        # The longest source segment, for a cheap ``in`` test before the regex.
        needle = max(self.source.rstrip(".").split("."), key=len).encode()
        object.__setattr__(self, "_needle", needle)

    def _compile(self) -> re.Pattern[bytes]:
        # One separator, captured and then required throughout, so both
        # ``com/fasterxml/jackson/`` (internal names, descriptors, paths) and
        # ``com.fasterxml.jackson.`` (string literals, service files) match, but not a mix.
        # The lookbehinds skip names that already carry the target prefix, so applying the
        # relocation twice is harmless.
        first, *rest = (re.escape(part.encode()) for part in self.source.rstrip(".").split("."))
        body = first + rb"(?P<sep>[/.])" + b"".join(part + rb"(?P=sep)" for part in rest)
        added = self.target.removesuffix(self.source) if self.target.endswith(self.source) else ""
        guards = b"".join(
            rb"(?<!" + re.escape(added.replace(".", sep).encode()) + rb")" for sep in "/."
        )
        return re.compile((guards if added else b"") + body)

    def apply(self, data: bytes) -> bytes:
        """Every occurrence of the source prefix in ``data``, in either form, moved to target."""
        if self._needle not in data:
            return data
        return self._pattern.sub(self._replacement, data)

    def apply_text(self, text: str) -> str:
        return self.apply(text.encode("utf-8")).decode("utf-8")

    def _replacement(self, match: re.Match[bytes]) -> bytes:
        return self.target.replace(".", match.group("sep").decode()).encode()


JACKSON_RELOCATION = Relocation(source=SOURCE_PACKAGE, target=TARGET_PACKAGE)


@dataclass(frozen=True, slots=True)
class RelocatedJarSpec:
    """What one relocated jar is: its file-name stem, the package move, and the resources
    outside the moved package that its sources may carry and that are kept as they are."""

    stem: str
    relocation: Relocation
    kept_resources: frozenset[str] = frozenset()
    # (entry name, bytes) written as they are after the relocated entries: classes the
    # sources need that nothing on the class path provides (``jdk_net_stubs``).
    extra_entries: tuple[tuple[str, bytes], ...] = ()


JACKSON_JAR = RelocatedJarSpec(stem="iceberg-shaded-jackson", relocation=JACKSON_RELOCATION)


# --- Class-file constant pool --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Constant:
    """One constant-pool entry: its tag and the bytes that follow the tag."""

    tag: int
    payload: bytes

    @property
    def utf8(self) -> bytes:
        """The (modified UTF-8) bytes of a CONSTANT_Utf8 entry, without the length prefix."""
        if self.tag != _TAG_UTF8:
            raise ValueError(f"constant has tag {self.tag}, not Utf8 (1)")
        return self.payload[2:]


@dataclass(frozen=True, slots=True)
class ConstantPool:
    """A parsed constant pool.

    ``entries[i]`` is the entry at pool index ``i``; index 0 and the second slot of each
    Long/Double are ``None`` (JVMS §4.4.5: those slots exist but are unusable). ``end`` is the
    byte offset just past the pool, where ``access_flags`` starts.
    """

    entries: tuple[Constant | None, ...]
    end: int

    def utf8(self, index: int) -> str:
        """A Utf8 entry decoded for display (ASCII in practice; modified UTF-8 otherwise)."""
        return self._entry(index, _TAG_UTF8).utf8.decode("utf-8", errors="replace")

    def class_name(self, index: int) -> str:
        """The internal name (``a/b/C``) a CONSTANT_Class entry points at."""
        (name_index,) = struct.unpack(">H", self._entry(index, _TAG_CLASS).payload)
        return self.utf8(name_index)

    def _entry(self, index: int, tag: int) -> Constant:
        entry = self.entries[index] if 0 < index < len(self.entries) else None
        if entry is None or entry.tag != tag:
            raise ValueError(f"constant-pool index {index} is not an entry with tag {tag}")
        return entry


_POOL_START = 10  # u4 magic, u2 minor, u2 major, u2 constant_pool_count


def _scan_pool(data: bytes) -> tuple[list[tuple[int, int, int]], int]:
    """The pool's entries as (tag, offset of the tag byte, offset past the entry), and its end.

    Only walks the bytes: building objects per entry made the jar build twice as slow.
    """
    if len(data) < _POOL_START or struct.unpack_from(">I", data)[0] != _CLASS_MAGIC:
        raise ValueError("not a class file (bad magic)")
    (count,) = struct.unpack_from(">H", data, 8)
    spans: list[tuple[int, int, int]] = []
    slot, offset, size_of = 1, _POOL_START, _FIXED_SIZES.get
    try:
        while slot < count:
            tag = data[offset]
            if tag == _TAG_UTF8:
                size = 2 + ((data[offset + 1] << 8) | data[offset + 2])
            else:
                fixed = size_of(tag)
                if fixed is None:
                    raise ValueError(f"unknown constant-pool tag {tag} at offset {offset}")
                size = fixed
            spans.append((tag, offset, offset + 1 + size))
            # Long and Double take two slots (JVMS §4.4.5); the second has no bytes.
            slot += 2 if tag in _TWO_SLOT_TAGS else 1
            offset += 1 + size
    except IndexError as exc:
        raise ValueError("class file truncated inside the constant pool") from exc
    if offset > len(data):
        raise ValueError("class file truncated inside the constant pool")
    if slot != count:
        # A Long/Double in the last slot needs a slot past the declared count.
        raise ValueError("constant pool overruns its declared count")
    return spans, offset


def parse_constant_pool(data: bytes) -> ConstantPool:
    """Parse the constant pool of a class file; ``ValueError`` if it is malformed."""
    spans, end = _scan_pool(data)
    entries: list[Constant | None] = [None]
    for tag, start, stop in spans:
        entries.append(Constant(tag=tag, payload=data[start + 1 : stop]))
        if tag in _TWO_SLOT_TAGS:
            entries.append(None)
    return ConstantPool(entries=tuple(entries), end=end)


def this_class_name(data: bytes) -> str:
    """The internal name of the class a class file defines."""
    pool = parse_constant_pool(data)
    (this_class,) = struct.unpack_from(">H", data, pool.end + 2)  # after u2 access_flags
    return pool.class_name(this_class)


def rewrite_utf8_constants(data: bytes, rewrite: Callable[[bytes], bytes]) -> bytes:
    """A class file with ``rewrite`` applied to every CONSTANT_Utf8 entry.

    Only the pool changes; indices stay put, so everything after it (fields, methods, code,
    attributes: all refer to the pool by index) is copied unchanged. ``rewrite`` works on
    modified-UTF-8 bytes: an ASCII pattern can never match inside a multi-byte sequence
    (those bytes all have the high bit set), so replacing ASCII package prefixes is safe, and
    the new length is simply the new byte count.
    """
    spans, _ = _scan_pool(data)
    out = bytearray()
    copied = 0  # bytes of ``data`` already in ``out``
    for tag, start, stop in spans:
        if tag != _TAG_UTF8:
            continue
        text = data[start + 3 : stop]
        new = rewrite(text)
        if new == text:
            continue
        if len(new) > _MAX_UTF8_LENGTH:
            raise ValueError(f"rewritten Utf8 constant is {len(new)} bytes, over 65535")
        out += data[copied:start]
        out += struct.pack(">BH", _TAG_UTF8, len(new))
        out += new
        copied = stop
    out += data[copied:]
    return bytes(out)


def relocate_class(data: bytes, relocation: Relocation = JACKSON_RELOCATION) -> bytes:
    """A class file with every name under the relocation's source package moved."""
    return rewrite_utf8_constants(data, relocation.apply)


# --- Locating jars in installed packages ---------------------------------------------------


def _package_dir(module: str, pip_name: str) -> Path:
    # find_spec locates the package without importing it: importing pyspark costs time and
    # this module must stay importable in processes that never start Spark.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            f"Python package {pip_name!r} is not installed; expected it to provide jars "
            f"(pip install -r requirements.lock)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _single(folder: Path, pattern: str, what: str) -> Path:
    matches = sorted(folder.glob(pattern))
    if len(matches) != 1:
        found = ", ".join(m.name for m in matches) or "none"
        raise ConfigurationError(
            f"expected exactly one {what} matching {pattern!r} in {folder}, found: {found}"
        )
    return matches[0]


def iceberg_runtime_jar() -> Path:
    """The Iceberg Spark 3.5 / Scala 2.12 runtime jar from ``snowpark-connect-deps-iceberg``."""
    jars_dir = _package_dir("snowpark_connect_deps_iceberg", "snowpark-connect-deps-iceberg")
    return _single(jars_dir / "jars", ICEBERG_RUNTIME_GLOB, "Iceberg runtime jar")


def jackson_source_jars() -> tuple[Path, ...]:
    """pyspark's own Jackson jars, one per artifact in ``JACKSON_ARTIFACTS``, in that order."""
    jars_dir = _package_dir("pyspark", "pyspark") / "jars"
    # ``-2.*`` keeps jackson-core from also matching jackson-core-asl-1.9.13.jar.
    return tuple(_single(jars_dir, f"{a}-2.*.jar", f"{a} jar") for a in JACKSON_ARTIFACTS)


def _jar_version(jar: Path, artifact: str) -> str:
    return jar.name.removeprefix(f"{artifact}-").removesuffix(".jar")


# --- Building the relocated jar ------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$SPARK_DESTINATION_CACHE`` or ``~/.cache/spark-destination``."""
    configured = os.environ.get("SPARK_DESTINATION_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "spark-destination"


def _cache_key(
    sources: tuple[Path, ...], relocation: Relocation, extra: tuple[tuple[str, bytes], ...] = ()
) -> str:
    digest = hashlib.sha256(f"format={_BUILD_FORMAT}\n{relocation}\n".encode())
    for name, data in extra:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    for jar in sources:
        digest.update(jar.name.encode() + b"\0")
        digest.update(hashlib.sha256(jar.read_bytes()).digest())
    return digest.hexdigest()[:16]


def relocated_jackson_jar(cache_dir: Path | None = None) -> Path:
    """The relocated Jackson jar, built on first use and cached by a hash of its inputs."""
    sources = jackson_source_jars()
    version = _jar_version(sources[1], "jackson-core")
    return build_relocated_jar(JACKSON_JAR, sources, version, cache_dir)


def build_relocated_jar(
    spec: RelocatedJarSpec, sources: tuple[Path, ...], version: str, cache_dir: Path | None = None
) -> Path:
    """``spec``'s jar from ``sources``, built on first use and cached by a hash of its inputs.

    The name carries the hash of the source jars and of the build format, so a changed source
    or a changed builder gives a new file rather than a stale one. The jar is written to a temp
    file in the same folder and renamed into place: rename is atomic on one filesystem, so a
    concurrent process sees either no jar or a complete one, never a partial write; two
    processes racing both write identical bytes and the last rename wins.
    """
    cache_dir = (cache_dir or default_cache_dir()).expanduser().absolute()
    key = _cache_key(sources, spec.relocation, spec.extra_entries)
    target = cache_dir / f"{spec.stem}-{version}-{key}.jar"
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=cache_dir, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write_relocated_jar(
                handle, sources, spec.relocation, spec.kept_resources, spec.extra_entries
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return target


_MANIFEST = (
    "Manifest-Version: 1.0\r\n"
    # The jackson-core classes in META-INF/versions/{11,17,19} (FastDoubleParser) are the
    # faster per-JDK variants; keeping the flag keeps Jackson's own behaviour on JDK 17.
    "Multi-Release: true\r\n"
    "Created-By: spark-destination (relocated for Iceberg)\r\n"
    "\r\n"
)


def write_relocated_jar(
    handle: IO[bytes],
    sources: tuple[Path, ...],
    relocation: Relocation,
    kept: frozenset[str] = frozenset(),
    extra: tuple[tuple[str, bytes], ...] = (),
) -> None:
    """Write one jar holding the relocated content of every source jar, then ``extra``."""
    seen: set[str] = set()
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as out:
        # The manifest goes first: JarInputStream only finds it there.
        _write_entry(out, "META-INF/MANIFEST.MF", _MANIFEST.encode())
        for source in sources:
            artifact = source.name.rsplit("-", 1)[0]
            with zipfile.ZipFile(source) as jar:
                for name, data in _relocated_entries(jar, artifact, relocation, kept):
                    if name in seen:
                        raise ConfigurationError(f"duplicate entry {name!r} from {source.name}")
                    seen.add(name)
                    _write_entry(out, name, data)
        for name, data in extra:
            if name in seen:
                raise ConfigurationError(f"extra entry {name!r} is also in a source jar")
            seen.add(name)
            _write_entry(out, name, data)


def _write_entry(out: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    out.writestr(info, data)


_DROPPED_META = re.compile(r"META-INF/(?:MANIFEST\.MF|maven/.*|[^/]+\.(?:SF|RSA|DSA|EC))")
_VERSIONED = re.compile(r"META-INF/versions/(\d+)/(.+)")


def _relocated_entries(
    jar: zipfile.ZipFile, artifact: str, relocation: Relocation, kept: frozenset[str] = frozenset()
) -> Iterator[tuple[str, bytes]]:
    """The (name, bytes) entries one source jar contributes to the relocated jar."""
    source_dir = relocation.source.replace(".", "/")
    for info in jar.infolist():
        name = info.filename
        if info.is_dir() or _DROPPED_META.fullmatch(name):
            # Directories are not needed for class loading. The manifest is replaced, the
            # Maven metadata would claim this jar *is* jackson-core, and signatures (none
            # today) would not match rewritten bytes.
            continue
        if name.rsplit("/", 1)[-1] == "module-info.class":
            # A JPMS descriptor for module com.fasterxml.jackson.*: on the class path it is
            # ignored, and relocated it would describe packages the module does not own.
            # maven-shade drops it too.
            continue
        versioned = _VERSIONED.fullmatch(name)
        inner = versioned.group(2) if versioned else name
        if inner.startswith(source_dir):
            data = jar.read(info)
            if inner.endswith(".class"):
                data = relocate_class(data, relocation)
            yield relocation.apply_text(name), data
        elif name.startswith("META-INF/services/"):
            # ServiceLoader looks files up by the (relocated) interface name and reads the
            # implementation names from their lines.
            yield relocation.apply_text(name), relocation.apply(jar.read(info))
        elif name in kept:
            # A resource the relocated code loads by its own, unrelocated, path (HttpClient's
            # public-suffix list: ``/org/publicsuffix/list/effective_tld_names.dat``).
            yield name, jar.read(info)
        elif name.startswith("META-INF/") and "/" not in name.removeprefix("META-INF/"):
            # LICENSE, NOTICE and friends: kept for attribution, one folder per artifact
            # because several jars carry a file of the same name.
            yield f"META-INF/{artifact}/{name.removeprefix('META-INF/')}", jar.read(info)
        else:
            # A class outside the moved packages would be a duplicate of one already on
            # Spark's class path; none exists in the sources, so fail loudly if one appears.
            raise ConfigurationError(
                f"unexpected entry {name!r} in {artifact}; the relocation to "
                f"{relocation.target} does not know how to handle it"
            )


# --- Checking a relocation is complete ------------------------------------------------------

# A field or method descriptor's class names: ``Lpkg/Name;``.
_DESCRIPTOR_CLASS = re.compile(rb"L([A-Za-z0-9_$/]+);")


def class_references(jar: Path, package: str) -> frozenset[str]:
    """The internal names of classes under ``package`` (dotted, ending in '.') that the classes
    in ``jar`` refer to: CONSTANT_Class entries and class names inside descriptors."""
    prefix = package.replace(".", "/").encode()
    found: set[str] = set()
    with zipfile.ZipFile(jar) as archive:
        for name in archive.namelist():
            if not name.endswith(".class") or name.endswith("module-info.class"):
                continue
            data = archive.read(name)
            if prefix not in data:
                continue
            pool = parse_constant_pool(data)
            for entry in pool.entries:
                if entry is None or entry.tag != _TAG_UTF8 or prefix not in entry.payload:
                    continue
                text = entry.utf8
                names = [m.group(1) for m in _DESCRIPTOR_CLASS.finditer(text)]
                if text.startswith(prefix) and b";" not in text:
                    names.append(text)  # a CONSTANT_Class's plain internal name
                found.update(n.decode() for n in names if n.startswith(prefix))
    return frozenset(found)


def defined_classes(jar: Path) -> frozenset[str]:
    """The internal names of the classes a jar defines (multi-release variants included)."""
    with zipfile.ZipFile(jar) as archive:
        names = (_VERSIONED.sub(r"\2", n) for n in archive.namelist() if n.endswith(".class"))
        return frozenset(n.removesuffix(".class") for n in names)
