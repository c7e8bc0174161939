"""Concurrent WriteBatch requests through gRPC, as Fivetran sends them: 8 at once on 8 tables
(they run in parallel: all 8 are inside their request at the same moment), and 4 at once on one
table with disjoint keys (all four inside the engine at once, then serialised by it: never two
inside the table at once). Every row is present exactly once, every table's metadata is valid,
no request fails.

In deferred write mode a request commits its batch by appending it to the intermediate table
(its MERGE is the flush's, when the tables are read): the hooks wait before that append."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import grpc
import pytest

from spark_destination.engine.engine import Engine
from spark_destination.runtime.execute import faults
from spark_destination.server.app import create_server
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import PENDING_PREFIX, Destination, Lake, column

pytestmark = pytest.mark.spark

COLUMNS = [
    column("id", "LONG", pk=True),
    column("v", "STRING"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
ROWS = 2000
# Generous: the machine may be loaded; it bounds a hang, it does not measure anything.
BARRIER_SECONDS = 600.0


def committing_op(dest: Destination) -> str:
    """The step that commits a WriteBatch: its MERGE, or in deferred mode its append."""
    return "AppendPendingOp" if dest.deferred else "MergeBatchOp"


def batch(ids: range) -> list[list[str]]:
    return [[str(i), f"v{i}", "2024-01-01T00:00:00Z"] for i in ids]


def check_table(dest: Destination, lake: Lake, name: str, ids: set[int], commits: int) -> None:
    rows = lake.rows(dest.schema, name)
    assert len(rows) == len(ids), f"{name}: {len(rows)} rows for {len(ids)} keys"
    assert {r["id"] for r in rows} == ids
    assert all(r["v"] == f"v{r['id']}" for r in rows)
    assert lake.snapshot_count(dest.schema, name) == commits
    described = dest.describe(name)
    assert described.WhichOneof("response") == "table"
    assert [c.name for c in described.table.columns] == HEADER


@pytest.fixture
def own_server(dest: Destination, engine: Engine) -> Iterator[Destination]:
    """``dest`` through a gRPC server of its own on the shared engine, with the 8 request
    workers a served destination has (``create_server``'s default), every one of them free:
    the barrier below needs all 8 at once, and the session's server may still be finishing
    a request an earlier test gave up on."""
    server, port = create_server(engine, port=0)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield replace(dest, stub=pb_grpc.DestinationConnectorStub(channel))
    finally:
        server.stop(grace=None)


def test_eight_tables_at_once_run_in_parallel(own_server: Destination, lake: Lake) -> None:
    dest = own_server
    names = [f"t{i}" for i in range(8)]
    for name in names:
        assert dest.create(name, COLUMNS).WhichOneof("response") == "success"
    files = {name: dest.write_file(HEADER, batch(range(ROWS))) for name in names}
    # Each request waits, just before its MERGE (append), until all 8 are there: if requests
    # on different tables were serialised, the barrier would break and the requests fail.
    barrier = threading.Barrier(len(names), timeout=BARRIER_SECONDS)
    reached: set[str] = set()
    commit = committing_op(dest)

    def hook(point: faults.Boundary) -> None:
        if point.op == commit:
            reached.add(point.table)
            barrier.wait()

    with faults.installed(hook), ThreadPoolExecutor(len(names)) as pool:
        responses = list(pool.map(lambda n: dest.write(n, COLUMNS, replace=[files[n]]), names))
    assert [r.WhichOneof("response") for r in responses] == ["success"] * 8, responses
    assert reached == set(names) and not barrier.broken
    for name in names:
        check_table(dest, lake, name, set(range(ROWS)), commits=1)


def test_four_requests_on_one_table_are_serialised_and_all_rows_land(
    own_server: Destination, lake: Lake, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = own_server
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    parts = [range(k * ROWS, (k + 1) * ROWS) for k in range(4)]
    files = [dest.write_file(HEADER, batch(ids)) for ids in parts]
    inside = 0
    most = 0
    guard = threading.Lock()
    commit = committing_op(dest)
    # All four requests wait at the engine's door (before any of them takes the table) until
    # all four are there, so they do contend for the table: "never two inside at once" then
    # shows the server serialised them, not that they happened never to overlap. A request
    # that cannot reach the engine alongside the others breaks the barrier and fails.
    arrived = threading.Barrier(len(parts), timeout=BARRIER_SECONDS)
    apply = engine.apply

    def apply_together(configuration: Any, request: Any) -> Any:
        arrived.wait()
        return apply(configuration, request)

    def hook(point: faults.Boundary) -> None:
        # Just before its MERGE (append) a request holds the table (its batch is staged); hold
        # it a moment longer and count how many requests are there at once.
        nonlocal inside, most
        if point.table != "t" or point.op != commit:
            return
        with guard:
            inside += 1
            most = max(most, inside)
        threading.Event().wait(0.5)
        with guard:
            inside -= 1

    def send(file: tuple[str, bytes]) -> Any:
        return dest.write("t", COLUMNS, replace=[file])

    with monkeypatch.context() as patch, faults.installed(hook), ThreadPoolExecutor(4) as pool:
        patch.setattr(engine, "apply", apply_together)
        responses = list(pool.map(send, files))
    assert not arrived.broken, "the four requests were never inside the engine at once"
    assert most == 1, f"{most} requests inside table t at once"
    assert [r.WhichOneof("response") for r in responses] == ["success"] * 4, responses
    if dest.deferred:  # one append per request; then one flush merges the four batches
        assert lake.snapshot_count(dest.schema, PENDING_PREFIX + "t") == 4
        check_table(dest, lake, "t", set(range(4 * ROWS)), commits=1)
    else:
        check_table(dest, lake, "t", set(range(4 * ROWS)), commits=4)
