"""Run ``spark-destination serve`` as a child process (its own JVM) for tests and tools.

A Python process holds one SparkContext, so settings fixed at JVM start-up (``spark_conf``
entries such as ``spark.redaction.regex``, another master) need a server process of their own;
so do tests that kill a server. The child runs in its own process group, so ``kill`` takes its
JVM with it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

from spark_destination.server.app import LISTENING, SPARK_READY
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

LOOPBACK = "127.0.0.1"
READY_TIMEOUT_S = 300.0
# The port in the server's listening line (a JSON log line: the message is a JSON string).
_BOUND_PORT = re.compile(re.escape(LISTENING) + r" \S*?:(\d+)")


def free_port() -> int:
    """A port free now, for services that cannot report the one they bind (the metastore,
    SeaweedFS, Spark's master): another process may take it before they bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


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
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def stub(self) -> pb_grpc.DestinationConnectorStub:
        if self.channel is None:
            self.channel = grpc.insecure_channel(self.address)
        return pb_grpc.DestinationConnectorStub(self.channel)

    def _close_channel(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def stop(self) -> None:
        """SIGTERM, as Fivetran stops it (the server stops Spark), then wait."""
        self._close_channel()
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the server and its JVM (its process group)."""
        self._close_channel()
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        # The JVM may outlive the group kill for a moment; wait until it is gone.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(self.process.pid):
            time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_server(
    *,
    log_file: Path,
    flags: Sequence[str] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    prewarm: bool = False,
    module: str = "spark_destination.cli",
) -> ServerProcess:
    """Start ``serve`` on a loopback port the system chooses (``--port 0``: no race for a
    port) with ``flags``; return once it answers gRPC (with ``prewarm``: once Spark is ready
    too). ``module`` runs the CLI (tests wrap it)."""
    command = [sys.executable, "-m", module, "serve", "--host", LOOPBACK, "--port", "0"]
    command += [*flags, *(["--prewarm"] if prewarm else [])]
    with log_file.open("ab") as log:
        offset = log.tell()  # the log may hold an earlier server's lines
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
    server = ServerProcess(process=process, port=0, log=log_file)
    try:
        server.port = _bound_port(server, offset)
        _wait_ready(server, spark=prewarm)
    except BaseException:
        server.kill()
        raise
    return server


@contextlib.contextmanager
def server_process(
    *,
    log_file: Path,
    flags: Sequence[str] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    prewarm: bool = False,
) -> Iterator[ServerProcess]:
    """``start_server``, stopped (SIGTERM) afterwards whatever happens."""
    server = start_server(log_file=log_file, flags=flags, env=env, cwd=cwd, prewarm=prewarm)
    try:
        yield server
    finally:
        server.stop()


def _check_running(server: ServerProcess) -> None:
    if server.process.poll() is not None:
        raise RuntimeError(
            f"server exited with code {server.process.returncode} before serving: "
            + server.log.read_text(errors="replace")[-2000:]
        )


def _bound_port(server: ServerProcess, offset: int) -> int:
    """The port the server says it bound, from its log past ``offset``."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        with server.log.open("rb") as log:
            log.seek(offset)
            found = _BOUND_PORT.search(log.read().decode(errors="replace"))
        if found:
            return int(found.group(1))
        _check_running(server)
        time.sleep(0.1)
    raise RuntimeError(
        f"server did not say its port within {READY_TIMEOUT_S:.0f} s: "
        + server.log.read_text(errors="replace")[-2000:]
    )


def _wait_ready(server: ServerProcess, *, spark: bool) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    answering = False
    while time.monotonic() < deadline:
        _check_running(server)
        if not answering:
            with grpc.insecure_channel(server.address) as channel:
                try:
                    grpc.channel_ready_future(channel).result(timeout=1.0)
                    answering = True
                except grpc.FutureTimeoutError:
                    continue
        if not spark or SPARK_READY in server.log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise RuntimeError(
        f"server at {server.address} was not ready within {READY_TIMEOUT_S:.0f} s: "
        + server.log.read_text(errors="replace")[-2000:]
    )
