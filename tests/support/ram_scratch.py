"""Skipping a test that needs the RAM-backed scratch folder (``/dev/shm``), and saying why.

These tests check that decrypted rows and Spark's scratch files stay in RAM, never on
persistent disk. On a machine without a roomy ``/dev/shm`` (Docker's is 64 MB) the destination
falls back by design and the check has nothing to look at, so it skips, naming what
``/dev/shm`` holds here and what the test needs. Where a run must not lose these checks
(``scripts/test.sh``, hence CI, sets ``SPARK_DESTINATION_REQUIRE_SHM=1``) the same condition
fails the test instead: a skip there would hide that the check never ran.
"""

from __future__ import annotations

import os
import shutil

import pytest

from spark_destination.runtime.spark import scratch

REQUIRE_ENV = "SPARK_DESTINATION_REQUIRE_SHM"


def shm_state() -> str:
    """What ``/dev/shm`` is on this machine: missing, not writable, or its free room and
    whether it is mounted noexec."""
    shm = scratch.SHM
    if not shm.is_dir():
        return f"{shm} is missing"
    if not os.access(shm, os.W_OK):
        return f"{shm} is not writable"
    free = shutil.disk_usage(shm).free
    noexec = ", mounted noexec" if os.statvfs(shm).f_flag & os.ST_NOEXEC else ""
    return f"{shm} has {free / (1 << 30):.2f} GiB free{noexec}"


def unmet(need: str) -> str:
    """Why a test that needs ``need`` skips (what ``/dev/shm`` is here), for ``pytest.skip``
    in the test itself (the summary then names the test). Where ``SPARK_DESTINATION_REQUIRE_SHM=1``
    it fails the test instead."""
    message = f"needs {need}; {shm_state()}"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1: this run must not skip it)")
    return message
