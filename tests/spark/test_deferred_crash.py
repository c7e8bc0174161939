"""SIGKILL of a deferred-mode server (and its JVM) at the points that matter: after the append
(nothing flushed yet), after a flush recorded itself but before its MERGE, and between the
table's commit and the clean-up of the intermediate table (each at a hook in the server's
process, ``tests.support.kill_at``, so no timing decides where the kill lands). Each time a
new server, or the ``flush`` command, takes over; in the end the table is exactly what merge
mode makes of the same requests: nothing lost, nothing applied twice (rows are compared as
multisets, so a row applied twice shows). The batches hold a key updated while absent and
then upserted by a request without that column: folding those rows a second time would change
the table, so the test fails if a flush whose MERGE had committed were merely run again.

The first batch has ``SPARK_DESTINATION_CRASH_ROWS`` rows (default 20 000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.local_services.server_process import ServerProcess, start_server
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.deferred import MARKER_PROPERTY
from spark_destination.runtime.spark.session import register_catalog
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import NULL, UNMOD, Destination, column, mode_configuration
from tests.support.kill_at import KILL_AT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_destination.runtime.spark.session import SparkSettings

# One write mode is enough: its servers run with the modes it sets.
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

ROWS = int(os.environ.get("SPARK_DESTINATION_CRASH_ROWS", "20000"))
CATALOG = "deferredcrash"
SCHEMA = "crash"
COLUMNS = [
    column("id", "LONG", pk=True),
    column("v", "STRING"),
    column("n", "INT"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
WITHOUT_N = [c for c in COLUMNS if c.name != "n"]
NO_N = [c.name for c in WITHOUT_N]
SYNC1, SYNC2 = "2024-03-01T10:00:00.000Z", "2024-03-02T10:00:00.000Z"
NEW_KEY = str(10 * ROWS)  # absent until the third batch
FLAGS = ["--catalog", CATALOG, "--write-mode", "deferred", "--merge-interval-ms=-1"]


def batches(dest: Destination) -> list[tuple[dict[str, list[tuple[str, bytes]]], list[Any]]]:
    """Five WriteBatch requests: (files by kind, the columns the request names)."""
    half = ROWS // 2

    def f(rows: list[list[str]], header: list[str] = HEADER) -> list[tuple[str, bytes]]:
        return [dest.write_file(header, rows)]

    return [
        ({"replace": f([[str(i), f"a{i}", str(i), SYNC1] for i in range(ROWS)])}, COLUMNS),
        (
            {
                "update": f(
                    [[NEW_KEY, UNMOD, "5", SYNC1]]  # absent: ignored by merge mode
                    + [[str(i), UNMOD, str(-i), SYNC1] for i in range(half)]
                )
            },
            COLUMNS,
        ),
        (
            {
                "replace": f([[NEW_KEY, "seven", SYNC2]], NO_N),
                "delete": f([[str(i), NULL, SYNC2] for i in range(ROWS - 10, ROWS)], NO_N),
            },
            WITHOUT_N,
        ),
        (
            {
                "replace": f([[str(i), f"b{i}", NULL, SYNC2] for i in range(half, ROWS + 5)]),
                "delete": f([[str(i), NULL, NULL, SYNC2] for i in range(10)]),
            },
            COLUMNS,
        ),
        ({"update": f([[str(i), "c", UNMOD, SYNC2] for i in range(0, ROWS + 10, 7)])}, COLUMNS),
    ]


def ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def send(dest: Destination, batch: tuple[dict[str, Any], list[Any]]) -> Any:
    files, columns = batch
    return dest.write("t", columns, **files)


Rows = Counter[tuple[Any, ...]]


def read(spark: SparkSession, warehouse: Path, schema: str, table: str) -> Rows:
    """The table's rows as a multiset: a row applied twice counts twice (a set would hide it)."""
    session = spark.newSession()
    register_catalog(session, CATALOG, str(warehouse))
    return Counter(tuple(r) for r in session.table(qualified(CATALOG, schema, table)).collect())


def flush_record(warehouse: Path) -> str | None:
    """The intermediate table's flush record, from its newest metadata file."""
    folder = warehouse / SCHEMA / "sd__pending__t" / "metadata"
    versions = sorted(folder.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    if not versions:
        return None
    try:
        return json.loads(versions[-1].read_text()).get("properties", {}).get(MARKER_PROPERTY)
    except (OSError, ValueError):
        return None  # being written


def serve(warehouse: Path, log: Path, kill_at: str | None = None) -> ServerProcess:
    flags = ["--warehouse", str(warehouse), *FLAGS]
    if kill_at is None:
        return start_server(log_file=log, flags=flags, prewarm=True)
    return start_server(
        log_file=log,
        flags=flags,
        prewarm=True,
        module="tests.support.kill_at",
        env={KILL_AT: kill_at},
    )


def test_killed_after_the_append_during_a_flush_and_before_the_clean_up_ends_as_merge_mode(
    spark: SparkSession,
    spark_settings: SparkSettings,
    stub: pb_grpc.DestinationConnectorStub,
    tmp_path: Path,
) -> None:
    warehouse, workdir, log = tmp_path / "warehouse", tmp_path / "files", tmp_path / "server.log"
    workdir.mkdir()
    reference = Destination(
        stub=stub, workdir=workdir, configuration=mode_configuration("merge"), schema="crash_ref"
    )
    requests = batches(reference)
    ok(reference.create("t", COLUMNS))

    def pending() -> Rows:
        return read(spark, warehouse, SCHEMA, "sd__pending__t")

    def table() -> Rows:
        return read(spark, warehouse, SCHEMA, "t")

    def expected() -> Rows:
        frame = spark.newSession().table(qualified(spark_settings.catalog, "crash_ref", "t"))
        return Counter(tuple(r) for r in frame.collect())

    # 1. Killed after two appends: nothing was flushed, the rows are pending.
    server = serve(warehouse, log, kill_at="before 1:ClearPendingOp")
    try:
        dest = replace(reference, stub=server.stub, configuration={}, schema=SCHEMA)
        ok(dest.create("t", COLUMNS))
        for batch in requests[:2]:
            ok(send(dest, batch))
            ok(send(reference, batch))
        server.kill()
        assert table() == Counter()
        assert pending().total() == ROWS + 1 + ROWS // 2

        # 2. The next server flushes them before the third batch, and is killed after the
        # table's commit, before the clean-up: the table has them, they are still pending.
        server = serve(warehouse, log, kill_at="before 1:ClearPendingOp")
        dest = replace(dest, stub=server.stub)
        with pytest.raises(grpc.RpcError):
            send(dest, requests[2])
        server.kill()
        assert table() == expected()
        assert pending().total() == ROWS + 1 + ROWS // 2

        # 3. The retried third batch finishes the clean-up (and merges nothing again), then
        # appends; the fourth too (neither flushes: nothing reaches the point below). A
        # Truncate starts a flush, killed once it has recorded itself, before its MERGE.
        server = serve(warehouse, log, kill_at=faults.FLUSH_RECORDED)
        dest = replace(dest, stub=server.stub)
        for batch in requests[2:4]:
            ok(send(dest, batch))
            ok(send(reference, batch))
        before, folded = flush_record(warehouse), table()
        cut = datetime.fromisoformat(SYNC1.replace("Z", "+00:00"))  # deletes nothing
        with pytest.raises(grpc.RpcError):  # killed under the request
            dest.truncate("t", cut)
        server.kill()
        assert flush_record(warehouse) != before, "the flush never recorded itself"
        assert table() == folded, "the flush's MERGE ran: the kill came too late"
        assert pending(), "the kill landed after the clean-up: no flush was interrupted"

        # 4. The flush command on the warehouse, with no server running, finishes the job.
        command = [sys.executable, "-m", "spark_destination.cli", "flush", SCHEMA, "t",
                   "--warehouse", str(warehouse), *FLAGS]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
        assert done.returncode == 0, done.stderr
        assert f"{SCHEMA}.t:" in done.stdout
        assert pending() == Counter()
        assert table() == expected()

        # 5. A server that appends the last batch and is stopped gracefully flushes at stop.
        server = serve(warehouse, log)
        dest = replace(dest, stub=server.stub)
        ok(dest.truncate("t", cut))  # Fivetran's retry of the request that was killed
        ok(reference.truncate("t", cut))
        ok(send(dest, requests[4]))
        ok(send(reference, requests[4]))
        server.stop()
        assert f"stopping: {SCHEMA}.t has" in log.read_text()
        assert pending() == Counter()
        assert table() == expected()
    finally:
        server.kill()
