"""One server process per warehouse: an exclusive ``flock`` on a file in the warehouse, held for
the life of the process.

The Iceberg Hadoop catalog commits by renaming ``v<N+1>.metadata.json`` into place; that is
atomic for writers inside one process (which also serialises requests per table), but two
processes writing one table can lose a commit on file systems whose rename overwrites, and the
per-table locks of one process do not reach another. So the first time a process uses a local
warehouse (a path, or a ``file://`` URI) it opens ``<warehouse>/.spark-destination.lock``, takes
an exclusive ``flock`` on it and writes its pid, start time and host there; a second process's
``flock`` fails and it is refused with a message naming the owner the file names. The kernel
releases the lock when the owning process ends, however it ends (a SIGKILL, the OOM killer), so
a stopped server never leaves a stale lock and no liveness check is needed. Object-store
warehouses (``s3://``, ``s3a://`` …) are not locked here: their catalogs (REST, Hive) commit
atomically themselves, and the Hadoop catalog on them is refused (``core.warehouses``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import threading
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark import scratch

LOCK_FILE: Final = ".spark-destination.lock"
_URI: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

# The open lock file of each warehouse folder this process holds, open for its life.
_held: dict[str, int] = {}
_guard = threading.Lock()


def _owner() -> dict[str, object]:
    pid = os.getpid()
    return {"pid": pid, "start": scratch.start_time(pid), "host": socket.gethostname()}


def _local_folder(warehouse: str) -> Path | None:
    """The folder of a local warehouse (a path or a ``file://`` URI), else None."""
    if not _URI.match(warehouse):
        return Path(warehouse)
    parsed = urlparse(warehouse)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(unquote(parsed.path))
    return None


def claim(warehouse: str) -> None:
    """Make this process the warehouse's only server, or raise ``ConfigurationError``."""
    folder = _local_folder(warehouse)
    if folder is None:
        return
    # One lock per folder, however it is named: a second flock on another descriptor of the
    # same file would refuse this very process.
    key = str(folder.resolve())
    if key in _held:
        return
    with _guard:
        if key in _held:
            return
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read(fd)
            os.close(fd)
            raise ConfigurationError(
                f"warehouse {warehouse} is in use by another spark-destination server "
                f"(pid {owner.get('pid', '?')} on host {owner.get('host', '?')}); neither the "
                "Iceberg Hadoop catalog nor Delta on a local disk is safe for two writing "
                "processes: stop that server or point this one at another warehouse"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_owner()).encode(), 0)
        _held[key] = fd


def _read(fd: int) -> dict[str, object]:
    try:
        owner = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}
