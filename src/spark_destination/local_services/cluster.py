"""A Spark standalone cluster (one master, one worker) on loopback, from pip's pyspark alone.

pip's pyspark has no ``sbin/`` start scripts, but ``bin/spark-class`` runs any Spark main class,
so the master and the worker are started as two child processes with the JDK the destination
uses (``runtime.spark.java``). Used by the cluster tests and the cluster benchmark; also a quick way
for a user to try ``spark_master=spark://…`` on one machine.

``standalone_cluster`` waits until the worker has registered with the master (the master's JSON
status page lists it as ALIVE) and always stops both processes, even when the body fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.local_services.process_group import STOP_TIMEOUT_SECONDS
from spark_destination.local_services.server_process import LOOPBACK, free_port
from spark_destination.runtime.spark.java import java_home

__all__ = ["LOOPBACK", "Cluster", "alive_workers", "free_port", "standalone_cluster"]

MASTER_CLASS: Final = "org.apache.spark.deploy.master.Master"
WORKER_CLASS: Final = "org.apache.spark.deploy.worker.Worker"
# The master and worker daemons need little heap; Spark's default is 1g each.
DAEMON_MEMORY: Final = "256m"
START_TIMEOUT_SECONDS: Final = 120.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    master_url: str  # spark://127.0.0.1:PORT
    web_url: str  # the master's status page (``/json`` lists workers)
    log_dir: Path


def spark_home() -> Path:
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise ConfigurationError(f"pyspark at {home} has no bin/spark-class")
    return home


def daemon_env(log_dir: Path) -> dict[str, str]:
    """The environment of the master and the worker (and so of the executors they start)."""
    home = spark_home()
    return {
        **os.environ,
        "SPARK_HOME": str(home),
        "JAVA_HOME": java_home(),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        "SPARK_LOG_DIR": str(log_dir),
        # Executors would otherwise read conf/ from the pyspark folder (none) or the user's.
        "SPARK_CONF_DIR": str(log_dir),
    }


def _start(args: list[str], env: dict[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    command = [str(spark_home() / "bin" / "spark-class"), *args]
    # A new session so stopping it also stops the JVM spark-class execs and its children.
    return subprocess.Popen(  # noqa: S603 - fixed argv, no shell
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT_SECONDS)


def alive_workers(web_url: str) -> list[dict[str, object]]:
    """The master's ALIVE workers, from its JSON status page ([] while it is not up)."""
    try:
        with urllib.request.urlopen(f"{web_url}/json", timeout=2) as response:  # noqa: S310
            status = json.load(response)
    except OSError:
        return []
    workers = status.get("workers", [])
    return [w for w in workers if isinstance(w, dict) and w.get("state") == "ALIVE"]


def _wait_for_worker(web_url: str, processes: list[subprocess.Popen[bytes]], log_dir: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise ConfigurationError(
                    f"a standalone cluster process exited with {process.returncode}; "
                    f"see the logs in {log_dir}"
                )
        if alive_workers(web_url):
            return
        time.sleep(0.5)
    raise ConfigurationError(
        f"no worker registered with the standalone master within {START_TIMEOUT_SECONDS:.0f} s; "
        f"see the logs in {log_dir}"
    )


@contextlib.contextmanager
def standalone_cluster(
    work_dir: Path, *, worker_cores: int = 1, worker_memory: str = "1g"
) -> Iterator[Cluster]:
    """Start a master and one worker on loopback; stop both on exit, whatever happened."""
    log_dir = work_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = daemon_env(log_dir)
    master_port, web_port, worker_web_port = free_port(), free_port(), free_port()
    master_url = f"spark://{LOOPBACK}:{master_port}"
    web_url = f"http://{LOOPBACK}:{web_port}"
    processes: list[subprocess.Popen[bytes]] = []
    with (
        (log_dir / "master.out").open("wb") as master_log,
        (log_dir / "worker.out").open("wb") as worker_log,
    ):
        try:
            processes.append(
                _start(
                    [
                        MASTER_CLASS,
                        "--host",
                        LOOPBACK,
                        "--port",
                        str(master_port),
                        "--webui-port",
                        str(web_port),
                    ],
                    env,
                    master_log,
                )
            )
            processes.append(
                _start(
                    [
                        WORKER_CLASS,
                        master_url,
                        "--host",
                        LOOPBACK,
                        "--cores",
                        str(worker_cores),
                        "--memory",
                        worker_memory,
                        "--webui-port",
                        str(worker_web_port),
                        "--work-dir",
                        str(work_dir / "worker"),
                    ],
                    env,
                    worker_log,
                )
            )
            _wait_for_worker(web_url, processes, log_dir)
            yield Cluster(master_url=master_url, web_url=web_url, log_dir=log_dir)
        finally:
            # Worker first: stopping the master first makes the worker retry and log noise.
            for process in reversed(processes):
                _stop(process)
