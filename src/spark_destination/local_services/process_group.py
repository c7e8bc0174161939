"""Stopping a local service by its pid: the service runs in a process group of its own (its JVM
with it), so stopping the group leaves nothing behind and touches nothing of the caller's."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Final

# How long a service gets to stop on SIGTERM before the group is killed.
STOP_TIMEOUT_SECONDS: Final = 20.0


def stop_group(pid: int) -> None:
    """TERM the process group led by ``pid``, wait for ``pid`` to end, then KILL the group
    (its JVM may outlive the leader)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (or reaped): poll for the pid itself
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            finished = 0
        if finished:
            break
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
