"""``python -m tests.support.kill_at CLI-ARGS…``: the destination's CLI in a process that
SIGKILLs itself (its process group: the JVM too) when a request reaches the step boundary named
by ``SD_TEST_KILL_AT`` (``faults.Boundary.name``, e.g. ``before 1:ClearPendingOp``).

For crash tests that must stop at an exact point, such as between a flush's MERGE commit and
its clean-up, which no timing from outside can hit reliably. Tests only: nothing in the
package kills itself.
"""

from __future__ import annotations

import os
import signal
import sys

from spark_destination.cli.main import main
from spark_destination.runtime.execute import faults

KILL_AT = "SD_TEST_KILL_AT"


def _hook(point: faults.Boundary) -> None:
    if point.name == os.environ.get(KILL_AT):
        os.killpg(os.getpgid(0), signal.SIGKILL)


if __name__ == "__main__":
    with faults.installed(_hook):
        raise SystemExit(main(sys.argv[1:]))
