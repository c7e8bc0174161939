"""One server process per warehouse: a second process is refused with a message naming the
first; the lock goes with its process, however it ends (a SIGKILL leaves nothing to clean)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spark_destination.core.errors import ConfigurationError
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.runtime.execute import warehouse_lock

HOLD = (
    "import sys, time\n"
    "from spark_destination.runtime.execute import warehouse_lock\n"
    "warehouse_lock.claim(sys.argv[1])\n"
    "print('held', flush=True)\n"
    "time.sleep(600)\n"
)


def hold(warehouse: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(warehouse)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_second_process_is_refused_until_the_first_is_gone(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    other = hold(warehouse)
    try:
        lock = json.loads((warehouse / warehouse_lock.LOCK_FILE).read_text())
        assert lock["pid"] == other.pid
        with pytest.raises(ConfigurationError, match=f"pid {other.pid}") as refused:
            warehouse_lock.claim(str(warehouse))
        assert "safe for two writing processes" in str(refused.value)
        # A server's request on that warehouse is refused the same way (serve itself claims no
        # warehouse at start-up: only those its requests use).
        engine = Engine(SessionProvider.embedded())
        with pytest.raises(ConfigurationError, match=f"pid {other.pid}"):
            engine.claim_warehouse({"warehouse": str(warehouse)})
    finally:
        os.kill(other.pid, signal.SIGKILL)  # a crash: the kernel releases its lock
        other.wait()
    warehouse_lock.claim(str(warehouse))  # the owner is gone: taken at once
    assert json.loads((warehouse / warehouse_lock.LOCK_FILE).read_text())["pid"] == os.getpid()
    warehouse_lock.claim(str(warehouse))  # again in the same process: fine
    warehouse_lock.claim(warehouse.as_uri())  # the same folder by another name: fine too
    # And now this process is the one another is refused by.
    refused = subprocess.run(
        [sys.executable, "-c", HOLD, str(warehouse)], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and f"pid {os.getpid()}" in refused.stderr


def test_a_file_uri_warehouse_is_locked_as_its_folder(tmp_path: Path) -> None:
    warehouse = tmp_path / "file_wh"
    other = hold(warehouse)
    try:
        with pytest.raises(ConfigurationError, match=f"pid {other.pid}"):
            warehouse_lock.claim(warehouse.as_uri())
    finally:
        os.kill(other.pid, signal.SIGKILL)
        other.wait()


def test_object_store_warehouses_are_not_locked(tmp_path: Path) -> None:
    warehouse_lock.claim("s3a://bucket/lake")
    warehouse_lock.claim("s3://bucket/lake")
    assert not list(tmp_path.iterdir())
