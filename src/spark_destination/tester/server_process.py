"""Run ``spark-destination serve`` as a child process (its own JVM) for tests and tools.

A Python process holds one SparkContext, so settings fixed at JVM start-up (``spark_conf``
entries such as ``spark.redaction.regex``, another master) need a server process of their own.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc

READY_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def server_process(
    *,
    warehouse: Path,
    log_file: Path,
    extra_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Start a server on a free loopback port, yield its address, stop it (always)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "spark_destination.cli.main",
        "serve",
        "--port",
        str(port),
        "--warehouse",
        str(warehouse),
        *extra_args,
    ]
    with log_file.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        address = f"127.0.0.1:{port}"
        try:
            _wait_ready(address, process)
            yield address
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(address: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode} before serving")
        with grpc.insecure_channel(address) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=1.0)
                return
            except grpc.FutureTimeoutError:
                continue
    raise RuntimeError(f"server at {address} did not answer within {READY_TIMEOUT_S:.0f} s")
