"""Shared pieces of the bad-input suites: hand-made batch files (envelopes Fivetran would never
write), a WriteBatch sender with full control of keys and file params, and the one check every
case must pass."""

from __future__ import annotations

import gzip
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest
import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import NULL, UNMOD, Destination, Lake

# The canaries: neither may appear in a task message or in any log line.
SECRET = "canary-row-value-7f3a9c"
CANARY_KEY = bytes.fromhex("c0ffee" * 10 + "c042")  # 32 bytes, easy to spot in a dump


def csv_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> bytes:
    """Plain CSV as Jackson writes it for these simple values (no quoting needed)."""
    lines = [",".join(header), *(",".join(row) for row in rows)]
    return ("\n".join(lines) + "\n").encode()


def compress(plain: bytes, codec: str) -> bytes:
    match codec:
        case "zstd":
            return zstandard.ZstdCompressor(level=3).compress(plain)
        case "gzip":
            return gzip.compress(plain, mtime=0)
        case _:
            return plain


def encrypt(data: bytes, key: bytes, *, iv: bytes | None = None, pad: bool = True) -> bytes:
    iv = os.urandom(16) if iv is None else iv
    if pad:
        padder = padding.PKCS7(128).padder()
        data = padder.update(data) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return iv + encryptor.update(data) + encryptor.finalize()


def bad_padding(data: bytes) -> bytes:
    """Whole blocks whose last byte (0) is not a valid PKCS#7 pad length."""
    filler = (-len(data) - 1) % 16
    return data + b"\x07" * filler + b"\x00"


@dataclass
class Files:
    """What a case sends: file lists, the keys map, and the request's file params."""

    replace: list[str] = field(default_factory=list)
    update: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    keys: dict[str, bytes] = field(default_factory=dict)
    compression: int = pb.ZSTD
    encryption: int = pb.AES

    def all_keys(self) -> list[bytes]:
        return list(self.keys.values())


def raw_file(dest: Destination, name: str, content: bytes) -> str:
    path = dest.workdir / name
    path.write_bytes(content)
    return str(path)


def sealed(
    dest: Destination, name: str, plain: bytes, *, codec: str = "zstd", key: bytes | None = None
) -> tuple[str, bytes]:
    """A file as Fivetran seals one (compress, then AES with a random IV); returns path, key."""
    key = key or os.urandom(32)
    return raw_file(dest, name, encrypt(compress(plain, codec), key)), key


def send(dest: Destination, table: str, columns: list[common.Column], files: Files):
    request = pb.WriteBatchRequest(
        configuration=dest.configuration,
        schema_name=dest.schema,
        table=common.Table(name=table, columns=columns),
        keys=files.keys,
        replace_files=files.replace,
        update_files=files.update,
        delete_files=files.delete,
        file_params=pb.FileParams(
            compression=files.compression,
            encryption=files.encryption,
            null_string=NULL,
            unmodified_string=UNMOD,
        ),
    )
    return dest.stub.WriteBatch(request)


def outcome(response) -> str:
    return str(response.WhichOneof("response"))


@dataclass(frozen=True)
class TableState:
    rows: list[dict[str, object]]
    snapshots: int
    described: object


def state(dest: Destination, lake: Lake, table: str, order_by: str = "id") -> TableState:
    return TableState(
        rows=lake.rows(dest.schema, table, order_by=order_by),
        snapshots=lake.snapshot_count(dest.schema, table),
        described=dest.describe(table).SerializeToString(deterministic=True),
    )


class JvmLog:
    """What Spark's JVM writes to its stdout and stderr (log4j's console appender) from now on.

    The JVM is a child process: pytest's fd capture does not reach it after it started, so its
    fds 1 and 2 are read through /proc. Under pytest's capture they are (deleted) temp files.
    Anything else (``pytest -s``: a terminal or a pipe) cannot be read back, and a check of an
    unread log would pass whatever Spark logged: the test fails instead of checking nothing.

    "From now on" is a line this writes to both, not a file offset: pytest empties its capture
    file after each phase of a test (setup, call) and the JVM, sharing the file's offset, then
    writes from its start, so an offset taken during setup (say, while the JVM started) would
    skip what the test's call wrote.
    """

    def __init__(self, lake: Lake) -> None:
        jvm = lake.session.sparkContext._jvm
        assert jvm is not None
        pid = jvm.java.lang.ProcessHandle.current().pid()
        self._paths: list[str] = []
        for fd in (1, 2):
            path = f"/proc/{pid}/fd/{fd}"
            if not stat.S_ISREG(os.stat(path).st_mode):
                pytest.fail(
                    f"Spark's fd {fd} is not a file ({os.readlink(path)}): its log cannot be "
                    "read back, so no value could be shown absent from it; run without -s "
                    "(pytest's fd capture makes it a file)"
                )
            self._paths.append(path)
        self._start = f"jvm-log-start-{os.urandom(8).hex()}"
        for stream in (jvm.java.lang.System.out, jvm.java.lang.System.err):
            stream.println(self._start)
            stream.flush()

    def text(self) -> str:
        """What each stream got after the start line (all of it, if pytest emptied the file
        since: then all it holds came later)."""
        parts = []
        for path in self._paths:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", errors="replace")
            parts.append(text.rpartition(self._start)[2])
        return "\n".join(parts)


def assert_clean_failure(
    response,
    *,
    expected: Sequence[str],
    caplog: pytest.LogCaptureFixture,
    keys: Sequence[bytes] = (),
    secrets: Sequence[str] = (SECRET,),
    jvm_log: JvmLog | None = None,
) -> str:
    """A task naming what and where (``expected`` fragments), no value or key anywhere: not in
    the message, the destination's log records, nor Spark's own log output."""
    assert outcome(response) == "task", response
    message = response.task.message
    for fragment in expected:
        assert fragment in message, (fragment, message)
    logged = caplog.text + (jvm_log.text() if jvm_log is not None else "")
    for secret in secrets:
        assert secret not in message, message
        assert secret not in logged
    for key in keys:
        for form in (key.hex(), key.hex().upper(), repr(key), key.decode("latin-1")):
            if len(key) >= 8:
                assert form not in message and form not in logged
    assert any(r.levelno >= logging.WARNING for r in caplog.records), "failure not logged"
    return message


Build = Callable[[Destination], Files]
