"""One server process per warehouse: a lock file in the warehouse naming its owner.

The Iceberg Hadoop catalog commits by renaming ``v<N+1>.metadata.json`` into place; that is
atomic for writers inside one process (which also serialises requests per table), but two
processes writing one table can lose a commit on file systems whose rename overwrites, and the
per-table locks of one process do not reach another. So the first time a process uses a local
warehouse it writes ``<warehouse>/.spark-destination.lock`` (pid, process start time, host); a
second process is refused with a message naming the owner. A lock left by a process that is no
longer running on this host is taken over; a lock of another host is honoured (its owner cannot
be checked from here: delete the file once that server is stopped). Warehouses given as URIs
(``s3a://``, ``file://``) are not locked.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import socket
import threading
from pathlib import Path
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import scratch

LOCK_FILE: Final = ".spark-destination.lock"
_URI: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

_claimed: set[str] = set()
_guard = threading.Lock()


def _owner() -> dict[str, object]:
    pid = os.getpid()
    return {"pid": pid, "start": scratch.start_time(pid), "host": socket.gethostname()}


def _live_on_this_host(owner: dict[str, object]) -> bool:
    if owner.get("host") != socket.gethostname():
        return True  # cannot be checked: assume it runs
    pid, start = owner.get("pid"), owner.get("start")
    return isinstance(pid, int) and scratch.start_time(pid) == start


def claim(warehouse: str) -> None:
    """Make this process the warehouse's only server, or raise ``ConfigurationError``."""
    if _URI.match(warehouse) or warehouse in _claimed:
        return
    with _guard:
        if warehouse in _claimed:
            return
        folder = Path(warehouse)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOCK_FILE
        mine = _owner()
        for _ in range(3):
            try:
                with path.open("x") as out:  # atomic: fails if the file exists
                    json.dump(mine, out)
            except FileExistsError:
                try:
                    owner = json.loads(path.read_text())
                except (OSError, ValueError):
                    owner = {}
                if owner == mine:
                    break
                if owner and _live_on_this_host(owner):
                    raise ConfigurationError(
                        f"warehouse {warehouse} is in use by another spark-destination server "
                        f"(pid {owner.get('pid')} on host {owner.get('host')}); the Iceberg "
                        "Hadoop catalog is not safe for two writing processes: stop that "
                        "server, point this one at another warehouse, or delete "
                        f"{path} if that server is gone"
                    ) from None
                # Left by a process that has stopped (or unreadable): take it over.
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                continue
            break
        else:
            raise ConfigurationError(f"could not take the lock {path}")
        _claimed.add(warehouse)
        atexit.register(_release, path, mine)


def _release(path: Path, mine: dict[str, object]) -> None:
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()) == mine:
            path.unlink()
