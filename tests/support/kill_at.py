"""``python -m tests.support.kill_at CLI-ARGS…``: the destination's CLI in a process that
SIGKILLs itself (its process group: the JVM too) when a request reaches the step boundary named
by ``SD_TEST_KILL_AT`` (``faults.Boundary.name``, e.g. ``before 1:ClearPendingOp``, or a named
point such as ``faults.FLUSH_RECORDED``).

``SD_TEST_KILL_JVM_AT`` instead SIGKILLs only the JVM there, and waits until it is gone: the
request's next statement finds it dead, and the server lives on.

With ``SD_TEST_ARMED`` (a file name) either fires only once that file exists, and removes it:
the test creates it when the request to hit is next, so requests before it (and the retry
after it) get through.

For crash tests that must stop at an exact point, such as between a flush's MERGE commit and
its clean-up, which no timing from outside can hit reliably. Tests only: nothing in the
package kills itself.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from spark_destination.cli.main import main
from spark_destination.runtime.execute import faults

KILL_AT = "SD_TEST_KILL_AT"
KILL_JVM_AT = "SD_TEST_KILL_JVM_AT"
ARMED = "SD_TEST_ARMED"


def _reached(name: str) -> None:
    kill_all, kill_jvm = os.environ.get(KILL_AT), os.environ.get(KILL_JVM_AT)
    if name not in (kill_all, kill_jvm):
        return
    armed = os.environ.get(ARMED)
    if armed:
        try:
            Path(armed).unlink()  # disarm: fire once
        except FileNotFoundError:
            return  # not armed (yet, or any more)
    if name == kill_all:
        os.killpg(os.getpgid(0), signal.SIGKILL)
    for jvm in _java_children():
        os.kill(jvm, signal.SIGKILL)
        # SIGKILL is delivered asynchronously: wait for the process to be dead (a zombie until
        # py4j's Popen reaps it), so the next statement cannot still reach it.
        while _alive(jvm):
            time.sleep(0.01)


def _java_children() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if parent == os.getpid() and name == "java":
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _boundary(point: faults.Boundary) -> None:
    _reached(point.name)


def _point(name: str, _table: str) -> None:
    _reached(name)


if __name__ == "__main__":
    with faults.installed(_boundary), faults.at_points(_point):
        raise SystemExit(main(sys.argv[1:]))
