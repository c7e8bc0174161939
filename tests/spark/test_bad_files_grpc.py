"""Bad batch files beyond the first eight (test_bad_input_grpc.py): the envelope (IV, key,
padding, compression), the CSV (empty file, header, ragged rows, UTF-8) and values that the
column cannot hold. Each case answers a task naming the file and, where it applies, the row and
column (never the value or the key), leaves the table as it was (rows, Iceberg snapshots,
DescribeTable) and the server keeps serving: a good batch right after succeeds."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

import pytest

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.bad_input import (
    CANARY_KEY,
    SECRET,
    Build,
    Files,
    JvmLog,
    assert_clean_failure,
    bad_padding,
    compress,
    csv_text,
    encrypt,
    raw_file,
    sealed,
    send,
    state,
)
from tests.support.destination import UNMOD, Destination, Lake, column

# One write mode is enough: every case fails while staging, which deferred mode shares with
# merge mode (planner.deferred).
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]


@pytest.fixture
def jvm_log(lake: Lake) -> JvmLog:
    return JvmLog(lake)


SYNC1 = "2024-03-01T10:00:00.000Z"
SYNC2 = "2024-03-02T10:00:00.000Z"


def orders() -> list[common.Column]:
    return [
        column("id", "INT", pk=True),
        column("amount", "DECIMAL", precision=10, scale=2),
        column("note", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
        column("_fivetran_deleted", "BOOLEAN"),
    ]


HEADER = ["id", "amount", "note", "_fivetran_synced", "_fivetran_deleted"]
GOOD_ROW = ["7", "7.00", SECRET, SYNC2, "false"]


def good_csv(rows: int = 2) -> bytes:
    return csv_text(HEADER, [[str(10 + i), "1.00", SECRET, SYNC2, "false"] for i in range(rows)])


def one(path_key: tuple[str, bytes], **kwargs: object) -> Files:
    path, key = path_key
    return Files(replace=[path], keys={path: key}, **kwargs)  # type: ignore[arg-type]


def plain(dest: Destination, name: str, content: bytes, kind: str = "replace") -> Files:
    path = raw_file(dest, name, content)
    files = Files(encryption=pb.NONE, compression=pb.OFF)
    getattr(files, kind).append(path)
    return files


# --- Envelope: IV, key, padding, compression ------------------------------------------------

FILE_CASES: dict[str, tuple[Build, tuple[str, ...]]] = {}


def file_case(name: str, *expected: str):
    def register(build: Build) -> Build:
        FILE_CASES[name] = (build, expected)
        return build

    return register


@file_case("IV missing (file shorter than an IV)", "iv_missing.csv.zstd.aes", "too short")
def _(dest: Destination) -> Files:
    return one((raw_file(dest, "iv_missing.csv.zstd.aes", os.urandom(9)), CANARY_KEY))


@file_case("IV only, no ciphertext", "iv_only.csv.zstd.aes", "too short")
def _(dest: Destination) -> Files:
    return one((raw_file(dest, "iv_only.csv.zstd.aes", os.urandom(16)), CANARY_KEY))


@file_case("IV short (ciphertext not whole blocks)", "iv_short.csv.zstd.aes", "truncated")
def _(dest: Destination) -> Files:
    sealed_bytes = encrypt(compress(good_csv(), "zstd"), CANARY_KEY)
    return one((raw_file(dest, "iv_short.csv.zstd.aes", sealed_bytes[5:]), CANARY_KEY))


@file_case("key of 31 bytes", "k31.csv.zstd.aes", "31 bytes")
def _(dest: Destination) -> Files:
    path, _ = sealed(dest, "k31.csv.zstd.aes", good_csv(), key=CANARY_KEY)
    return one((path, CANARY_KEY[:31]))


@file_case("key of 16 bytes (AES-128)", "k16.csv.zstd.aes", "16 bytes")
def _(dest: Destination) -> Files:
    path, _ = sealed(dest, "k16.csv.zstd.aes", good_csv(), key=CANARY_KEY)
    return one((path, CANARY_KEY[:16]))


@file_case("empty key", "k0.csv.zstd.aes", "0 bytes")
def _(dest: Destination) -> Files:
    path, _ = sealed(dest, "k0.csv.zstd.aes", good_csv(), key=CANARY_KEY)
    return one((path, b""))


@file_case("file path absent from keys", "nokey.csv.zstd.aes", "no decryption key")
def _(dest: Destination) -> Files:
    path, _ = sealed(dest, "nokey.csv.zstd.aes", good_csv(), key=CANARY_KEY)
    other, key = sealed(dest, "other.csv.zstd.aes", good_csv(), key=CANARY_KEY)
    return Files(replace=[other, path], keys={other: key})


@file_case("bad PKCS#7 padding", "badpad.csv.zstd.aes", "decrypt")
def _(dest: Destination) -> Files:
    body = bad_padding(compress(good_csv(), "zstd"))
    return one(
        (raw_file(dest, "badpad.csv.zstd.aes", encrypt(body, CANARY_KEY, pad=False)), CANARY_KEY)
    )


@file_case("params say zstd, data is plain CSV", "notzstd.csv.zstd.aes", "zstd")
def _(dest: Destination) -> Files:
    return one(sealed(dest, "notzstd.csv.zstd.aes", good_csv(), codec="none", key=CANARY_KEY))


@file_case("params say zstd, data is gzip", "isgzip.csv.zstd.aes", "zstd")
def _(dest: Destination) -> Files:
    return one(sealed(dest, "isgzip.csv.zstd.aes", good_csv(), codec="gzip", key=CANARY_KEY))


@file_case("params say gzip, data is zstd", "iszstd.csv.gz.aes", "gzip")
def _(dest: Destination) -> Files:
    return one(
        sealed(dest, "iszstd.csv.gz.aes", good_csv(), codec="zstd", key=CANARY_KEY),
        compression=pb.GZIP,
    )


@file_case("params say AES, file is not encrypted", "notaes.csv.zstd.aes", "truncated")
def _(dest: Destination) -> Files:
    return one((raw_file(dest, "notaes.csv.zstd.aes", compress(good_csv(5), "zstd")), CANARY_KEY))


# --- CSV: empty file, header, ragged rows, encoding ----------------------------------------


@file_case("zero-byte file", "zero.csv", "is empty")
def _(dest: Destination) -> Files:
    return plain(dest, "zero.csv", b"")


@file_case("zero bytes after decryption", "zero.csv.zstd.aes", "is empty")
def _(dest: Destination) -> Files:
    return one(sealed(dest, "zero.csv.zstd.aes", b"", key=CANARY_KEY))


@file_case("missing header", "noheader.csv", "no header row")
def _(dest: Destination) -> Files:
    first = [SECRET, "7.00", "x", SYNC2, "false"]
    return plain(dest, "noheader.csv", csv_text(first, [GOOD_ROW]))


@file_case("duplicate header column", "dup.csv", "'note'", "twice")
def _(dest: Destination) -> Files:
    return plain(dest, "dup.csv", csv_text([*HEADER, "note"], [[*GOOD_ROW, SECRET]]))


@file_case("empty header column name", "blankname.csv", "empty column name", "field 6")
def _(dest: Destination) -> Files:
    return plain(dest, "blankname.csv", csv_text([*HEADER, ""], [[*GOOD_ROW, SECRET]]))


@file_case("key column missing from a replace file", "nokeycol.csv", "lacks primary key", "'id'")
def _(dest: Destination) -> Files:
    return plain(dest, "nokeycol.csv", csv_text(HEADER[1:], [GOOD_ROW[1:]]))


@file_case("key column missing from a delete file", "nokeydel.csv", "lacks primary key", "'id'")
def _(dest: Destination) -> Files:
    return plain(
        dest, "nokeydel.csv", csv_text(["_fivetran_synced", "note"], [[SYNC2, SECRET]]), "delete"
    )


@file_case("ragged row: one field more", "more.csv", "record 3", "expected 5 fields, got 6")
def _(dest: Destination) -> Files:
    rows = [GOOD_ROW, ["8", "1.00", SECRET, SYNC2, "false", SECRET]]
    content = csv_text(HEADER, [GOOD_ROW]) + (",".join(rows[1]) + "\n").encode()
    return plain(dest, "more.csv", content)


@file_case("ragged row: one field fewer", "fewer.csv", "record 3", "expected 5 fields, got 4")
def _(dest: Destination) -> Files:
    content = (
        csv_text(HEADER, [GOOD_ROW]) + (",".join(["8", "1.00", SECRET, SYNC2]) + "\n").encode()
    )
    return plain(dest, "fewer.csv", content)


@file_case("invalid UTF-8 in a value", "latin1.csv", "UTF-8", "'note'")
def _(dest: Destination) -> Files:
    content = csv_text(HEADER, [GOOD_ROW]).replace(SECRET.encode(), b"caf\xe9 " + SECRET.encode())
    return plain(dest, "latin1.csv", content)


@file_case("key column holds the unmodified sentinel", "unmodkey.csv", "'id'", "data row 1")
def _(dest: Destination) -> Files:
    return plain(
        dest, "unmodkey.csv", csv_text(HEADER, [[UNMOD, "1.00", SECRET, SYNC2, "false"]]), "update"
    )


@file_case("batch file path is a folder", "afolder", "cannot open")
def _(dest: Destination) -> Files:
    folder = dest.workdir / "afolder"
    folder.mkdir()
    return Files(replace=[str(folder)], encryption=pb.NONE, compression=pb.OFF)


def send_ok(
    dest: Destination,
    table: str,
    columns: list[common.Column],
    rows: list[list[str]],
    *,
    create: bool = False,
) -> bool:
    if create:
        assert dest.create(table, columns).WhichOneof("response") == "success"
    header = [c.name for c in columns]
    path, key = dest.write_file(header, rows)
    response = send(dest, table, columns, Files(replace=[path], keys={path: key}))
    return response.WhichOneof("response") == "success"


@pytest.fixture(scope="module")
def shared(
    stub: pb_grpc.DestinationConnectorStub,
    tmp_path_factory: pytest.TempPathFactory,
    run_catalog_configuration: dict[str, str],
) -> Destination:
    """One seeded table for every file case: each case leaves it unchanged (that is what is
    checked), then adds one row with the good batch that proves the server still serves."""
    dest = Destination(
        stub=stub,
        workdir=tmp_path_factory.mktemp("bad_files"),
        configuration=dict(run_catalog_configuration),
        schema="bad_files",
    )
    assert send_ok(dest, "orders", orders(), [["1", "1.00", "one", SYNC1, "false"]], create=True)
    return dest


_good_ids = iter(range(100, 1_000_000))


# Files no policy can load: bad_value_policy=null changes values of rows it can place, so an
# undecodable file, a malformed row or a key that cannot be read fails under it too.
UNDECODABLE_UNDER_NULL = (
    "bad PKCS#7 padding",
    "params say zstd, data is plain CSV",
    "zero bytes after decryption",
    "missing header",
    "key column missing from a replace file",
    "ragged row: one field more",
    "ragged row: one field fewer",
    "invalid UTF-8 in a value",
    "key column holds the unmodified sentinel",
)


@pytest.mark.parametrize(
    ("name", "policy"),
    [(name, "fail") for name in FILE_CASES] + [(n, "null") for n in UNDECODABLE_UNDER_NULL],
)
def test_bad_file_fails_cleanly(
    name: str,
    policy: str,
    shared: Destination,
    lake: Lake,
    caplog: pytest.LogCaptureFixture,
    jvm_log: JvmLog,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.INFO)
    configuration = {**shared.configuration, "bad_value_policy": policy}
    dest = replace(shared, workdir=tmp_path, configuration=configuration)
    before = state(dest, lake, "orders")
    build, (where, *what) = FILE_CASES[name]
    files = build(dest)
    response = send(dest, "orders", orders(), files)
    message = assert_clean_failure(
        response, expected=(where,), caplog=caplog, jvm_log=jvm_log, keys=files.all_keys()
    )
    # What is wrong must be said in words, not merely be part of the file's name.
    for path in [*files.replace, *files.update, *files.delete]:
        message = message.replace(path, "<file>")
    for fragment in what:
        assert fragment in message, (fragment, message)
    assert state(dest, lake, "orders") == before
    good = next(_good_ids)
    assert send_ok(dest, "orders", orders(), [[str(good), "2.00", "two", SYNC2, "false"]])
    ids = [r["id"] for r in lake.rows(dest.schema, "orders", order_by="id")]
    assert ids == sorted([*(r["id"] for r in before.rows), good])


def test_header_only_file_is_a_valid_empty_batch(dest: Destination, lake: Lake) -> None:
    assert send_ok(dest, "orders", orders(), [["1", "1.00", "one", SYNC1, "false"]], create=True)
    rows_before = lake.rows(dest.schema, "orders", order_by="id")
    path, key = sealed(dest, "header_only.csv.zstd.aes", csv_text(HEADER, []))
    response = send(dest, "orders", orders(), Files(replace=[path], keys={path: key}))
    assert response.WhichOneof("response") == "success", response
    assert lake.rows(dest.schema, "orders", order_by="id") == rows_before


# --- Values the column cannot hold -----------------------------------------------------------


def typed() -> list[common.Column]:
    return [
        column("id", "INT", pk=True),
        column("i", "INT"),
        column("l", "LONG"),
        column("sh", "SHORT"),
        column("b", "BOOLEAN"),
        column("d", "NAIVE_DATE"),
        column("ts", "UTC_DATETIME"),
        column("ndt", "NAIVE_DATETIME"),
        column("dec", "DECIMAL", precision=5, scale=2),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]


TYPED_GOOD = {
    "i": "1",
    "l": "1",
    "sh": "1",
    "b": "true",
    "d": "2024-02-29",
    "ts": "2024-02-29T10:00:00Z",
    "ndt": "2024-02-29T10:00:00",
    "dec": "123.45",
}

VALUE_CASES = [
    pytest.param("i", "2147483648", id="INT overflow"),
    pytest.param("i", "-2147483649", id="INT underflow"),
    pytest.param("l", "9223372036854775808", id="LONG overflow"),
    pytest.param("sh", "40000", id="SHORT overflow"),
    pytest.param("b", "yes", id="bad boolean yes"),
    pytest.param("b", "1", id="bad boolean 1"),
    pytest.param("d", "2023-02-29", id="impossible date"),
    pytest.param("d", "2024-13-01", id="impossible month"),
    pytest.param("ts", "2024-02-30T10:00:00Z", id="impossible UTC datetime"),
    pytest.param("ts", "2024-02-28T25:00:00Z", id="impossible hour"),
    pytest.param("ndt", "2024-04-31T10:00:00", id="impossible naive datetime"),
    pytest.param("dec", "1234.5", id="decimal beyond its precision"),
    # Refused, not rounded: a silent change of the value is worse than a failed sync.
    pytest.param("dec", "1.005", id="decimal beyond its scale"),
]


def typed_row(key: str, **values: str) -> list[str]:
    merged = {**TYPED_GOOD, **values, "id": key, "_fivetran_synced": SYNC2}
    return [merged[c.name] for c in typed()]


@pytest.fixture(scope="module")
def shared_typed(
    stub: pb_grpc.DestinationConnectorStub,
    tmp_path_factory: pytest.TempPathFactory,
    run_catalog_configuration: dict[str, str],
) -> Destination:
    dest = Destination(
        stub=stub,
        workdir=tmp_path_factory.mktemp("bad_values"),
        configuration=dict(run_catalog_configuration),
        schema="bad_values",
    )
    assert send_ok(dest, "typed", typed(), [typed_row("1")], create=True)
    return dest


@pytest.mark.parametrize(("col", "bad"), VALUE_CASES)
def test_value_the_column_cannot_hold_fails_cleanly(
    col: str,
    bad: str,
    shared_typed: Destination,
    lake: Lake,
    caplog: pytest.LogCaptureFixture,
    jvm_log: JvmLog,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.INFO)
    dest = replace(shared_typed, workdir=tmp_path)
    header = [c.name for c in typed()]
    before = state(dest, lake, "typed")
    rows = [typed_row("3"), typed_row("2", **{col: bad})]
    path, key = sealed(dest, "values.csv.zstd.aes", csv_text(header, rows))
    response = send(dest, "typed", typed(), Files(replace=[path], keys={path: key}))
    assert_clean_failure(
        response,
        expected=(f"'{col}'", "values.csv.zstd.aes", "data row 2"),
        caplog=caplog,
        jvm_log=jvm_log,
        keys=[key],
        secrets=[bad] if len(bad) > 4 else [],
    )
    assert state(dest, lake, "typed") == before
    assert send_ok(dest, "typed", typed(), [typed_row(str(next(_good_ids)))])


def test_spark_log_output_is_checked_and_task_failures_are_not_logged_with_values(
    lake: Lake, jvm_log: JvmLog
) -> None:
    """The canary checks above read Spark's own log output (a line logged through log4j shows
    up there), and a failing task's message, which can quote a value, does not."""
    jvm = lake.session.sparkContext._jvm
    jvm.org.apache.logging.log4j.LogManager.getLogger("spark_destination.test").error(
        "marker-logged-91aa"
    )
    with pytest.raises(Exception, match="marker-value-3b7e"):
        lake.session.sql("SELECT raise_error('marker-value-3b7e')").collect()
    text = jvm_log.text()
    assert "marker-logged-91aa" in text
    assert "marker-value-3b7e" not in text
