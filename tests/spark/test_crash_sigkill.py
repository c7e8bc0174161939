"""SIGKILL of a server (and its JVM) in the middle of a large WriteBatch, once after its batch is
staged and once inside its MERGE: the table is exactly the state before the request, never in
between; a restarted server removes the staged plaintext and Spark scratch the dead one left
(and nothing of live processes); the retried request gives the clean-run table. Also: the JVM
alone dies (killed) while idle and mid-request.

The batch has ``SPARK_DESTINATION_CRASH_ROWS`` rows (default 50 000, small enough for CI; set it
to 300000 for a batch whose MERGE runs for tens of seconds).
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.local_services.server_process import ServerProcess, start_server
from spark_destination.runtime.spark import scratch
from spark_destination.runtime.spark.session import register_catalog
from tests.support.destination import Destination, column
from tests.support.kill_at import ARMED, FIRED_SUFFIX, KILL_AT, KILL_IN_MERGE, KILL_JVM_AT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# One write mode is enough: its servers are processes of their own, in the product's default mode.
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

ROWS = int(os.environ.get("SPARK_DESTINATION_CRASH_ROWS", "50000"))
CATALOG = "crashlake"
COLUMNS = [
    column("id", "LONG", pk=True),
    column("v", "STRING"),
    column("n", "INT"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
SEED = [[str(i), f"seed{i}", str(i), "2024-01-01T00:00:00Z"] for i in range(0, ROWS, 1000)]
BATCH = [[str(i), f"new{i}", str(i * 2), "2024-02-01T00:00:00Z"] for i in range(ROWS)]
# Multisets: a row written twice (a MERGE applied again after a crash) counts twice.
BEFORE = Counter((int(r[0]), r[1], int(r[2])) for r in SEED)
AFTER = Counter((int(r[0]), r[1], int(r[2])) for r in BATCH)


def read(spark: SparkSession, warehouse: Path, schema: str) -> Counter[tuple[Any, ...]]:
    session = spark.newSession()
    register_catalog(session, CATALOG, str(warehouse))
    frame = session.table(qualified(CATALOG, schema, "t")).select("id", "v", "n")
    return Counter(tuple(r) for r in frame.collect())


def serve(warehouse: Path, log: Path, env: dict[str, str] | None = None) -> ServerProcess:
    """A server; with ``env``, one that runs ``tests.support.kill_at`` (its hooks)."""
    # JVM only: the write path's warm-up stages batches of its own in the background, which
    # the kills below would mistake for (and hit instead of) the request under test.
    flags = ["--warehouse", str(warehouse), "--catalog", CATALOG, "--no-warm-writes"]
    if env is None:
        return start_server(log_file=log, flags=flags, prewarm=True)
    return start_server(
        log_file=log, flags=flags, prewarm=True, module="tests.support.kill_at", env=env
    )


def jvm_pid(server: ServerProcess) -> int:
    """The JVM the server started (its child running java)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if parent == server.pid and name == "java":
            return int(entry.name)
    raise AssertionError(f"no JVM child of server {server.pid}")


def scratch_dirs(server: ServerProcess) -> list[Path]:
    root = scratch.shared_root()
    assert root is not None
    return sorted(root.glob(f"pid-{server.pid}-*"))


def staged_files(server: ServerProcess) -> list[Path]:
    return [f for d in scratch_dirs(server) for f in d.glob("staged-*/*.parquet")]


def ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def test_sigkill_mid_write_batch_then_restart_cleans_up_and_the_retry_converges(
    spark: SparkSession, tmp_path: Path
) -> None:
    warehouse, workdir = tmp_path / "warehouse", tmp_path / "files"
    workdir.mkdir()
    root = scratch.shared_root()
    assert root is not None
    # A folder of a process that is gone, and this (live) process's own: only the first goes.
    dead = root / "pid-999999999-1" / "staged-x"
    dead.mkdir(parents=True)
    mine = scratch.process_dir()
    assert mine is not None

    # Kill 1 is by a hook in the server, when this file exists: after the batch is staged,
    # before its MERGE, whatever the machine's speed.
    armed = tmp_path / "armed"
    env = {KILL_AT: "before 1:MergeBatchOp", ARMED: str(armed)}
    server = serve(warehouse, tmp_path / "server.log", env=env)
    crashes = 0
    try:
        assert not dead.exists(), "a dead process's folder survived a server start"
        assert mine.exists(), "a live process's folder was removed"
        dest = Destination(stub=server.stub, workdir=workdir, configuration={}, schema="crash")
        ok(dest.create("t", COLUMNS))
        ok(dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, SEED)]))
        batch = dest.write_file(HEADER, BATCH)
        assert read(spark, warehouse, "crash") == BEFORE

        # Kill 1: once the decrypted batch is staged, before the MERGE (the hook).
        armed.touch()
        with pytest.raises(grpc.RpcError):
            dest.write("t", COLUMNS, replace=[batch])
        assert not armed.exists(), "the hook never fired"
        left = scratch_dirs(server)
        assert staged_files(server), "the killed server left no staged plaintext to clean up"
        server.kill()  # reaps it
        crashes += 1
        assert read(spark, warehouse, "crash") == BEFORE

        # The next server dies inside the MERGE, while its tasks run (tests.support.kill_at's
        # watcher: no boundary falls inside a statement, and a kill from outside after a
        # while could land before the MERGE or after its commit).
        armed = tmp_path / "armed-merge"
        env = {KILL_IN_MERGE: "1", ARMED: str(armed)}
        server = serve(warehouse, tmp_path / "server.log", env=env)
        dest = replace(dest, stub=server.stub)
        assert not [d for d in left if d.exists()], "the dead server's scratch survived"
        assert mine.exists()

        # Kill 2: inside the MERGE; the commit comes only after its last task, so the table
        # is exactly as before the request.
        armed.touch()
        with pytest.raises(grpc.RpcError):
            dest.write("t", COLUMNS, replace=[batch])
        assert not armed.exists(), "the MERGE never ran armed"
        fired = Path(str(armed) + FIRED_SUFFIX)
        assert fired.exists(), "the server did not die while the MERGE's tasks ran"
        assert "running" in fired.read_text()
        left = scratch_dirs(server)
        assert staged_files(server), "the killed server left no staged plaintext to clean up"
        server.kill()  # reaps it
        crashes += 1
        assert read(spark, warehouse, "crash") == BEFORE

        server = serve(warehouse, tmp_path / "server.log")
        dest = replace(dest, stub=server.stub)
        assert not [d for d in left if d.exists()], "the dead server's scratch survived"
        assert mine.exists()

        ok(dest.write("t", COLUMNS, replace=[batch]))
        assert read(spark, warehouse, "crash") == AFTER
        assert dest.describe("t").WhichOneof("response") == "table"

        # Stopped as Fivetran stops it (SIGTERM), the server leaves no scratch folder behind.
        assert scratch_dirs(server), "the server never made its scratch folder"
        server.stop()
        assert not scratch_dirs(server), "a stopped server's scratch folder survived"
    finally:
        server.kill()
    assert crashes == 2


def test_the_jvm_dies_and_the_next_request_gets_a_new_spark_session(
    spark: SparkSession, tmp_path: Path
) -> None:
    warehouse, workdir = tmp_path / "warehouse", tmp_path / "files"
    workdir.mkdir()
    # The JVM is killed under a request by a hook in the server, once the batch is staged and
    # before its MERGE, when this file exists: no race with the request decides where.
    armed = tmp_path / "armed"
    env = {KILL_JVM_AT: "before 1:MergeBatchOp", ARMED: str(armed)}
    server: ServerProcess = serve(warehouse, tmp_path / "server.log", env=env)
    try:
        dest = Destination(stub=server.stub, workdir=workdir, configuration={}, schema="jvm")
        ok(dest.create("t", COLUMNS))

        # Killed while idle: the next request notices and starts a new JVM.
        old_jvm = jvm_pid(server)
        os.kill(old_jvm, signal.SIGKILL)
        ok(dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, SEED)]))
        assert jvm_pid(server) != old_jvm
        assert read(spark, warehouse, "jvm") == BEFORE

        # Killed under a request: that request ends with gRPC UNAVAILABLE saying so (Fivetran
        # retries it), and the server keeps serving.
        batch = dest.write_file(HEADER, BATCH)
        old_jvm = jvm_pid(server)
        armed.touch()
        with pytest.raises(grpc.RpcError) as info:
            dest.write("t", COLUMNS, replace=[batch])
        assert not armed.exists(), "the hook never fired: the JVM was not killed mid-request"
        error = info.value
        assert isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.UNAVAILABLE
        assert "Spark JVM stopped" in error.details() and "'t'" in error.details()
        assert read(spark, warehouse, "jvm") == BEFORE  # killed before the MERGE
        # The in-flight request's staged plaintext is removed although its JVM is gone.
        assert not staged_files(server)
        ok(dest.write("t", COLUMNS, replace=[batch]))
        assert jvm_pid(server) != old_jvm
        assert read(spark, warehouse, "jvm") == AFTER
        assert server.process.poll() is None
    finally:
        server.kill()
