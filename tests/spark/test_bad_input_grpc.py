"""Bad input: each request fails with a task that names what was wrong and where, the table
stays exactly as it was (same rows, no new Iceberg snapshot), and the server keeps serving."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from spark_destination.dialects.quoting import qualified
from tests.spark.test_write_batch_grpc import HEADER, SYNC1, SYNC2, by_id, orders, outcome, seed
from tests.support.destination import NULL, Destination, Lake, column

pytestmark = pytest.mark.spark

SECRET = "s3cret-row-value"


def _corrupt_middle(path: str) -> None:
    data = bytearray(Path(path).read_bytes())
    for i in range(16, len(data) - 16, 7):
        data[i] ^= 0x5A
    Path(path).write_bytes(bytes(data))


def _truncate(path: str) -> None:
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: len(data) - 10])


def _unterminated_quote(dest: Destination) -> tuple[str, bytes]:
    path = dest.workdir / "unterminated.csv"
    path.write_text(
        f'id,amount,note,_fivetran_synced,_fivetran_deleted\n7,1.00,"{SECRET},{SYNC2},false\n'
    )
    return str(path), b""


CASES: dict[str, tuple[Callable[[Destination], dict], str]] = {}


def case(name: str, expected: str):
    def register(build: Callable[[Destination], dict]) -> Callable[[Destination], dict]:
        CASES[name] = (build, expected)
        return build

    return register


@case("wrong key", "wrong key")
def _(dest: Destination) -> dict:
    path, _key = dest.write_file(HEADER, [["7", "7.00", SECRET, SYNC2, "false"]])
    return {"replace": [(path, b"\x01" * 32)]}


@case("corrupted file", "batch_")
def _(dest: Destination) -> dict:
    path, key = dest.write_file(HEADER, [["7", "7.00", SECRET * 40, SYNC2, "false"]] * 50)
    _corrupt_middle(path)
    return {"replace": [(path, key)]}


@case("truncated file", "batch_")
def _(dest: Destination) -> dict:
    path, key = dest.write_file(HEADER, [["7", "7.00", SECRET, SYNC2, "false"]] * 20)
    _truncate(path)
    return {"replace": [(path, key)]}


@case("missing file", "does-not-exist.csv")
def _(dest: Destination) -> dict:
    return {"replace": [(str(dest.workdir / "does-not-exist.csv.zstd.aes"), b"\x02" * 32)]}


@case("unterminated quote", "unterminated.csv")
def _(dest: Destination) -> dict:
    return {"replace": [_unterminated_quote(dest)], "encrypted": False}


@case("uncastable value", "'amount'")
def _(dest: Destination) -> dict:
    good = dest.write_file(HEADER, [["8", "8.00", "fine", SYNC2, "false"]])
    bad = dest.write_file(HEADER, [["1", UNFIT, SECRET, SYNC2, "false"]])
    return {"replace": [good], "update": [bad]}


@case("unknown column", "'surprise'")
def _(dest: Destination) -> dict:
    path, key = dest.write_file([*HEADER, "surprise"], [["7", "7.00", SECRET, SYNC2, "false", "x"]])
    return {"replace": [(path, key)]}


@case("key column NULL", "'id'")
def _(dest: Destination) -> dict:
    return {"replace": [dest.write_file(HEADER, [[NULL, "7.00", SECRET, SYNC2, "false"]])]}


UNFIT = "12345678901.5"  # does not fit DECIMAL(10, 2)


# What fails under bad_value_policy=null too: every case but a non-key value that does not fit
# (which that policy writes as NULL and records: test_bad_values_grpc).
POLICIES = [
    (name, policy)
    for name in CASES
    for policy in ("fail", "null")
    if not (policy == "null" and name == "uncastable value")
]


@pytest.mark.parametrize(("name", "policy"), POLICIES)
def test_bad_batch_fails_cleanly_and_leaves_the_table_unchanged(
    name: str, policy: str, dest: Destination, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    dest.configuration = {**dest.configuration, "bad_value_policy": policy}
    seed(dest, [["1", "1.00", "one", SYNC1, "false"], ["2", "2.00", "two", SYNC1, "false"]])
    rows_before = by_id(lake, dest)
    snapshots_before = lake.snapshot_count(dest.schema, "orders")
    build, expected = CASES[name]
    files = build(dest)
    response = dest.write("orders", orders(), **files)
    assert outcome(response) == "task", name
    assert expected in response.task.message, response.task.message
    assert SECRET not in response.task.message
    # The failure is logged (as a WARNING naming the table), without row values or keys.
    assert any(
        "WriteBatch" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records
    )
    assert SECRET not in caplog.text
    keys = [key for _path, key in files.get("replace", []) + files.get("update", []) if key]
    assert not any(key.hex() in caplog.text for key in keys)
    assert by_id(lake, dest) == rows_before
    assert lake.snapshot_count(dest.schema, "orders") == snapshots_before
    # Nothing recorded: no value was changed, since no row was written.
    changes = qualified(lake.catalog, dest.schema, "sd__changes")
    assert not lake.child().catalog.tableExists(changes)
    # The server keeps serving: a good batch right after succeeds.
    good = dest.write_file(HEADER, [["3", "3.00", "three", SYNC2, "false"]])
    assert outcome(dest.write("orders", orders(), replace=[good])) == "success"
    assert set(by_id(lake, dest)) == {1, 2, 3}


def test_uncastable_value_message_names_column_file_and_row(dest: Destination) -> None:
    seed(dest, [["1", "1.00", "one", SYNC1, "false"]])
    bad = dest.write_file(
        HEADER, [["1", "1.00", "x", SYNC2, "false"], ["2", "not-a-number", "y", SYNC2, "false"]]
    )
    response = dest.write("orders", orders(), replace=[bad])
    message = response.task.message
    assert "'amount'" in message and "DECIMAL(10, 2)" in message
    assert bad[0] in message and "data row 2" in message
    assert "not-a-number" not in message


def test_write_to_a_missing_table_is_a_task(dest: Destination) -> None:
    replace = dest.write_file(HEADER, [["1", "1.00", "one", SYNC1, "false"]])
    response = dest.write("nowhere", orders(), replace=[replace])
    assert outcome(response) == "task" and "does not exist" in response.task.message


def test_request_column_unknown_to_the_table_is_a_task(dest: Destination, lake: Lake) -> None:
    seed(dest, [["1", "1.00", "one", SYNC1, "false"]])
    wider = [*orders(), column("later", "STRING")]
    replace = dest.write_file([*HEADER, "later"], [["1", "1.00", "one", SYNC2, "false", "v"]])
    response = dest.write("orders", wider, replace=[replace])
    assert outcome(response) == "task" and "'later'" in response.task.message
    assert by_id(lake, dest)[1]["note"] == "one"


@pytest.mark.parametrize(
    ("column_type", "bad_value"),
    [("DOUBLE", "1e400"), ("FLOAT", "3.5E+38"), ("NAIVE_TIME", "25:61:00")],
)
def test_values_a_cast_would_accept_but_the_column_cannot_hold_are_refused(
    column_type: str, bad_value: str, dest: Destination, lake: Lake
) -> None:
    """Spark turns 1e400 into Infinity and stores any text as a time: the MERGE must refuse."""
    columns = [
        column("id", "INT", pk=True),
        column("v", column_type),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    assert outcome(dest.create("measures", columns)) == "success"
    good = "12:00:00" if column_type == "NAIVE_TIME" else "1.5"
    assert (
        outcome(
            dest.write("measures", columns, replace=[dest.write_file(header, [["1", good, SYNC1]])])
        )
        == "success"
    )
    before = lake.rows(dest.schema, "measures")
    bad = dest.write_file(header, [["2", good, SYNC2], ["1", bad_value, SYNC2]])
    response = dest.write("measures", columns, replace=[bad])
    assert outcome(response) == "task"
    assert "'v'" in response.task.message and "data row 2" in response.task.message
    assert bad_value not in response.task.message
    assert lake.rows(dest.schema, "measures") == before
    infinity = dest.write_file(header, [["3", "-Infinity", SYNC2]])
    if column_type != "NAIVE_TIME":
        assert outcome(dest.write("measures", columns, replace=[infinity])) == "success"
