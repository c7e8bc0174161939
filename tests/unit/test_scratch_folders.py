"""A process's scratch folder on tmpfs is gone once the process exits normally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from spark_destination.runtime.spark import scratch
from tests.support.ram_scratch import unmet

# Stages a file in its folder, forks a child that exits normally (running the exit handlers
# it inherited), checks the child left the folder alone, and exits.
CHILD = """
import os, sys
from spark_destination.runtime.spark import scratch
from tests.support.ram_scratch import unmet
folder = scratch.process_dir()
(folder / "staged-x").mkdir()
(folder / "staged-x" / "part.parquet").write_bytes(b"plaintext")
if os.fork() == 0:
    sys.exit(0)
os.wait()
assert (folder / "staged-x" / "part.parquet").exists(), "a forked child removed it"
print(folder)
"""


def test_a_process_removes_its_own_scratch_folder_when_it_exits() -> None:
    root = scratch.shared_root()
    if root is None:
        pytest.skip(unmet("a writable /dev/shm for the scratch folder"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder.parent == root
    assert not folder.exists()
