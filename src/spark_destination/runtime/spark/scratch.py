"""Per-process scratch folders on RAM-backed tmpfs, and the removal of dead processes' ones.

Decrypted batches are staged, and Spark's shuffle and spill files written, under
``/dev/shm/spark-destination-<uid>/``. Several processes of one user share that folder (several
servers, test runs), so each process works in its own ``pid-<pid>-<start>`` sub-folder (``start``
is the process's start time from ``/proc``, so a recycled pid is not mistaken for the owner).
A process removes its own folder when it exits (Spark deletes only the sub-folders it made,
which left an empty folder per process behind). A process that is SIGKILLed, or whose JVM is
killed, cannot: ``clean_orphans`` (run when a server starts) removes the folders whose owner is
no longer running, and only those.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

SHM: Final = Path("/dev/shm")  # noqa: S108 - deliberately the RAM-backed tmpfs
_OWNED: Final = re.compile(r"pid-(\d+)-(\d+)")
# Folders this process removes when it exits (registered once each).
_REMOVE_AT_EXIT: Final[set[Path]] = set()


def shared_root() -> Path | None:
    """``/dev/shm/spark-destination-<uid>`` (created private), or None where there is no tmpfs."""
    if not (SHM.is_dir() and os.access(SHM, os.W_OK)):
        return None
    root = SHM / f"spark-destination-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def process_dir() -> Path | None:
    """This process's own scratch folder (created on first use), or None without tmpfs."""
    root = shared_root()
    if root is None:
        return None
    pid = os.getpid()
    folder = root / f"pid-{pid}-{start_time(pid) or 0}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder not in _REMOVE_AT_EXIT:
        _REMOVE_AT_EXIT.add(folder)
        # Registered before Spark starts (its settings ask for this folder), so it runs after
        # anything registered later. The server has stopped its JVM by then; in other processes
        # the JVM is idle and exits when Python does (its stdin closes), and Spark's own
        # clean-up then finds nothing left to delete.
        atexit.register(_remove_own, folder, pid)
    return folder


def _remove_own(folder: Path, owner: int) -> None:
    # A forked child inherits the handler but not the folder's ownership.
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int, start: int) -> bool:
    if pid == os.getpid():
        return True
    if not Path("/proc").is_dir():
        # Without /proc the owner cannot be told apart from a recycled pid: keep the folder.
        return True
    return start_time(pid) == start


def clean_orphans() -> list[Path]:
    """Remove the scratch folders of processes that are no longer running; return them."""
    root = shared_root()
    if root is None:
        return []
    removed: list[Path] = []
    for folder in sorted(root.iterdir()):
        match = _OWNED.fullmatch(folder.name)
        if match is None or _alive(int(match.group(1)), int(match.group(2))):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    if removed:
        log.info("removed %d scratch folder(s) left by stopped processes", len(removed))
    return removed
