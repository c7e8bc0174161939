"""A destination server in its own process (and process group, with its JVM), for tests that
kill it: the shared in-process test session must never be harmed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from spark_destination.runtime.spark import scratch
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from spark_destination.tester.server_process import free_port

START_TIMEOUT_SECONDS = 300.0


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    channel: grpc.Channel | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stub(self) -> pb_grpc.DestinationConnectorStub:
        if self.channel is None:
            self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        return pb_grpc.DestinationConnectorStub(self.channel)

    def jvm_pid(self) -> int:
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
            if parent == self.pid and name == "java":
                return int(entry.name)
        raise AssertionError(f"no JVM child of server {self.pid}")

    def scratch_dirs(self) -> list[Path]:
        root = scratch.shared_root()
        assert root is not None
        return sorted(root.glob(f"pid-{self.pid}-*"))

    def staged_files(self) -> list[Path]:
        return [f for d in self.scratch_dirs() for f in d.glob("staged-*/*.parquet")]

    def kill(self) -> None:
        """SIGKILL the server and its JVM (its process group, which this test started)."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        # The JVM may outlive the group kill for a moment; wait until it is gone.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(self.process.pid):
            time.sleep(0.1)

    def stop(self) -> None:
        self.kill()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_server(warehouse: Path, log: Path, *, catalog: str = "lake") -> ServerProcess:
    """Start ``spark-destination serve --prewarm`` and wait until it listens."""
    port = free_port()
    command = [
        str(Path(sys.executable).parent / "spark-destination"),
        "serve",
        "--port",
        str(port),
        "--warehouse",
        str(warehouse),
        "--catalog",
        catalog,
        "--prewarm",
    ]
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = ServerProcess(process=process, port=port, log=log)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}: {log.read_text()}")
        if f"listening on 127.0.0.1:{port}" in log.read_text(errors="replace"):
            return server
        time.sleep(0.2)
    server.kill()
    raise AssertionError(f"server did not start: {log.read_text()}")
