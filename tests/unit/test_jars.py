"""The pure-Python Jackson relocation: constant-pool parsing and rewriting, no JVM."""

from __future__ import annotations

import io
import re
import struct
import zipfile

import pytest

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import jars
from spark_destination.runtime.spark.jars import (
    JACKSON_RELOCATION,
    Relocation,
    parse_constant_pool,
    relocate_class,
    this_class_name,
)

UNRELOCATED = re.compile(
    rb"(?<!shaded/)com/fasterxml/jackson/|(?<!shaded\.)com\.fasterxml\.jackson\."
)
SHADED = "org/apache/iceberg/shaded/com/fasterxml/jackson/"


def _jackson_class(artifact: str, name: str) -> bytes:
    jar = dict(zip(jars.JACKSON_ARTIFACTS, jars.jackson_source_jars(), strict=True))[artifact]
    with zipfile.ZipFile(jar) as source:
        return source.read(name)


def _utf8_values(data: bytes) -> list[bytes]:
    return [e.utf8 for e in parse_constant_pool(data).entries if e is not None and e.tag == 1]


# --- Real Jackson classes ------------------------------------------------------------------


def test_real_class_is_relocated_and_its_pool_still_parses() -> None:
    original = _jackson_class("jackson-core", "com/fasterxml/jackson/core/base/ParserBase.class")
    rewritten = relocate_class(original)

    before, after = parse_constant_pool(original), parse_constant_pool(rewritten)
    assert this_class_name(original) == "com/fasterxml/jackson/core/base/ParserBase"
    assert this_class_name(rewritten) == SHADED + "core/base/ParserBase"
    # Same number of slots, same tags in the same places: every index still points where it did.
    assert [e and e.tag for e in before.entries] == [e and e.tag for e in after.entries]
    # Everything after the pool (fields, methods, code) is byte-identical.
    assert rewritten[after.end :] == original[before.end :]
    assert not any(UNRELOCATED.search(value) for value in _utf8_values(rewritten))
    # Descriptors were rewritten too, not just class names.
    assert any(value.startswith(b"(L" + SHADED.encode()) for value in _utf8_values(rewritten))


def test_dotted_string_constants_are_relocated() -> None:
    # databind loads optional handlers by dotted name (Class.forName), so literals must move too.
    original = _jackson_class(
        "jackson-databind", "com/fasterxml/jackson/databind/ext/OptionalHandlerFactory.class"
    )
    values = _utf8_values(relocate_class(original))
    assert any(v.startswith(b"org.apache.iceberg.shaded.com.fasterxml.jackson.") for v in values)
    assert not any(UNRELOCATED.search(v) for v in values)


def test_long_and_double_constants_take_two_slots_in_a_real_class() -> None:
    # FastDoubleMath has over a thousand long constants: one slot miscounted and this_class
    # (read after the pool) would point at garbage.
    name = "com/fasterxml/jackson/core/io/doubleparser/FastDoubleMath.class"
    original = _jackson_class("jackson-core", name)
    pool = parse_constant_pool(original)
    wide = [i for i, e in enumerate(pool.entries) if e is not None and e.tag in (5, 6)]
    assert len(wide) > 1000
    assert all(pool.entries[i + 1] is None for i in wide)
    expected = "org/apache/iceberg/shaded/" + name.removesuffix(".class")
    assert this_class_name(relocate_class(original)) == expected


def test_relocating_twice_changes_nothing() -> None:
    original = _jackson_class("jackson-core", "com/fasterxml/jackson/core/JsonFactory.class")
    once = relocate_class(original)
    assert relocate_class(once) == once


# --- Synthetic class files -----------------------------------------------------------------


def _utf8(text: bytes) -> bytes:
    return struct.pack(">BH", 1, len(text)) + text


def _class_file(entries: list[bytes], slots: int, this_class: int) -> bytes:
    header = struct.pack(">IHHH", 0xCAFEBABE, 0, 61, slots + 1)
    # access_flags, this_class, super_class, interfaces, fields, methods, attributes
    trailer = struct.pack(">HHHHHHH", 0x21, this_class, 0, 0, 0, 0, 0)
    return header + b"".join(entries) + trailer


# Modified UTF-8: NUL is C0 80, and a supplementary character is a surrogate pair of 3-byte
# sequences; neither may be touched, and the rewritten length must count bytes.
_MODIFIED_UTF8 = b"\xc0\x80caf\xc3\xa9 \xed\xa0\xbd\xed\xb8\x80 "


def _synthetic() -> bytes:
    entries = [
        struct.pack(">BQ", 5, 0x0123456789ABCDEF),  # 1-2 Long
        _utf8(b"com/fasterxml/jackson/core/Foo"),  # 3
        struct.pack(">BH", 7, 3),  # 4 Class -> 3
        struct.pack(">Bd", 6, 2.5),  # 5-6 Double
        _utf8(_MODIFIED_UTF8 + b"com.fasterxml.jackson.core.Bar"),  # 7
        struct.pack(">BBH", 15, 6, 4),  # 8 MethodHandle (3 bytes)
        struct.pack(">BHH", 12, 3, 3),  # 9 NameAndType
        struct.pack(">Bi", 3, -7),  # 10 Integer
        _utf8(b"(Lcom/fasterxml/jackson/core/Foo;[Lcom/fasterxml/jackson/X;)V"),  # 11
    ]
    return _class_file(entries, slots=11, this_class=4)


def test_synthetic_pool_slots_and_payloads() -> None:
    data = _synthetic()
    rewritten = relocate_class(data)
    pool = parse_constant_pool(rewritten)

    assert len(pool.entries) == 12
    assert pool.entries[2] is None and pool.entries[6] is None  # second slots of Long, Double
    assert pool.entries[1] is not None and pool.entries[1].payload == bytes.fromhex(
        "0123456789abcdef"
    )
    assert pool.entries[5] is not None and struct.unpack(">d", pool.entries[5].payload) == (2.5,)
    assert pool.entries[8] is not None and pool.entries[8].payload == b"\x06\x00\x04"
    assert this_class_name(rewritten) == SHADED + "core/Foo"
    assert pool.entries[7] is not None
    assert (
        pool.entries[7].utf8
        == _MODIFIED_UTF8 + b"org.apache.iceberg.shaded.com.fasterxml.jackson.core.Bar"
    )
    assert pool.entries[11] is not None
    assert pool.entries[11].utf8 == (
        b"(L" + SHADED.encode() + b"core/Foo;[L" + SHADED.encode() + b"X;)V"
    )
    assert rewritten[pool.end :] == data[-14:]


def test_mixed_separators_and_lookalikes_are_left_alone() -> None:
    relocation = JACKSON_RELOCATION
    assert relocation.apply(b"com/fasterxml.jackson/x") == b"com/fasterxml.jackson/x"
    assert relocation.apply(b"com/fasterxml/jacksonx/Y") == b"com/fasterxml/jacksonx/Y"
    assert relocation.apply(b"xcom.fasterxml.jackson.Y").endswith(b"shaded.com.fasterxml.jackson.Y")


def test_relocation_rejects_bad_prefixes() -> None:
    with pytest.raises(ConfigurationError):
        Relocation(source="com.fasterxml.jackson", target="x.")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x00\x00\x00" + bytes(20), "bad magic"),
        (_synthetic()[:30], "truncated"),
        (
            _class_file([struct.pack(">BH", 2, 0)], slots=1, this_class=0),
            "unknown constant-pool tag 2",
        ),
        # A Long in the last declared slot would need a slot that does not exist.
        (_class_file([struct.pack(">BQ", 5, 1)], slots=1, this_class=0), "overruns"),
    ],
    ids=["bad-magic", "truncated", "unknown-tag", "long-in-last-slot"],
)
def test_malformed_class_files_are_rejected(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_constant_pool(data)


def test_utf8_constant_over_65535_bytes_is_rejected() -> None:
    huge = b"com/fasterxml/jackson/" * 2900  # 63,800 bytes, grows past 65,535 when relocated
    data = _class_file([_utf8(huge)], slots=1, this_class=0)
    with pytest.raises(ValueError, match="over 65535"):
        relocate_class(data)


# --- Jar entries ---------------------------------------------------------------------------


def _jar(entries: dict[str, bytes]) -> zipfile.ZipFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, data in entries.items():
            out.writestr(name, data)
    return zipfile.ZipFile(io.BytesIO(buffer.getvalue()))


FACTORY = b"com.fasterxml.jackson.core.JsonFactory"


def test_jar_entries_are_renamed_dropped_or_kept() -> None:
    klass = _class_file([_utf8(b"com/fasterxml/jackson/core/Foo"), struct.pack(">BH", 7, 1)], 2, 2)
    source = _jar(
        {
            "META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\r\n",
            "META-INF/LICENSE": b"license",
            "META-INF/maven/x/pom.xml": b"<project/>",
            "META-INF/services/com.fasterxml.jackson.core.JsonFactory": FACTORY + b"\n",
            "META-INF/versions/9/module-info.class": b"ignored",
            "module-info.class": b"ignored",
            "META-INF/versions/17/com/fasterxml/jackson/core/Foo.class": klass,
            "com/fasterxml/jackson/core/Foo.class": klass,
            "com/": b"",
        }
    )
    entries = dict(jars._relocated_entries(source, "jackson-core", JACKSON_RELOCATION))

    assert set(entries) == {
        "META-INF/jackson-core/LICENSE",
        "META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory",
        "META-INF/versions/17/" + SHADED + "core/Foo.class",
        SHADED + "core/Foo.class",
    }
    service = entries[
        "META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory"
    ]
    assert service == b"org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory\n"
    assert this_class_name(entries[SHADED + "core/Foo.class"]) == SHADED + "core/Foo"


def test_unexpected_class_outside_jackson_fails_loudly() -> None:
    source = _jar({"org/other/Thing.class": b"\xca\xfe\xba\xbe"})
    with pytest.raises(ConfigurationError, match="unexpected entry 'org/other/Thing.class'"):
        list(jars._relocated_entries(source, "jackson-core", JACKSON_RELOCATION))


def test_source_jars_are_pysparks_jackson_2_15() -> None:
    names = [jar.name for jar in jars.jackson_source_jars()]
    assert names == [f"{artifact}-2.15.2.jar" for artifact in jars.JACKSON_ARTIFACTS]
