"""A batch larger than the RAM-backed staging folder still loads (Docker's /dev/shm is 64 MB):
the stager hands it to Spark through Arrow instead, leaves nothing in the folder and writes no
plaintext anywhere else; it never fails with "no space left".

The folder is a real tmpfs when this process may mount one (root), else a plain folder whose
free room is reported as the limit. CI stages a ~12 MB batch against a 4 MB folder;
``SPARK_DESTINATION_BIG_STAGING=1`` runs the full case, a 100 MB batch against 64 MB.
"""

from __future__ import annotations

import errno
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spark_destination.runtime.batch import staging, staging_space
from spark_destination.runtime.batch.staging_space import STAGING_DIR_ENV
from tests.support.destination import Destination, Lake, column

pytestmark = pytest.mark.spark

BIG = os.environ.get("SPARK_DESTINATION_BIG_STAGING") == "1"
LIMIT_BYTES = (64 if BIG else 4) << 20
BATCH_BYTES = (100 if BIG else 12) << 20
CANARY = "staging-canary-5d1e"
NOTE_CHARS = 180
SYNC = "2024-03-01T10:00:00.000Z"


@pytest.fixture
def small_staging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, bool]]:
    """(folder, is a real tmpfs) limited to LIMIT_BYTES, set as the staging folder."""
    folder = tmp_path / "staging"
    folder.mkdir()
    size = f"size={LIMIT_BYTES >> 20}m"
    mounted = (
        os.geteuid() == 0
        and subprocess.run(  # noqa: S603 - fixed arguments
            ["mount", "-t", "tmpfs", "-o", size, "tmpfs", str(folder)],  # noqa: S607
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    if not mounted:
        monkeypatch.setattr(staging_space, "free_bytes", lambda _folder: LIMIT_BYTES)
    monkeypatch.setenv(STAGING_DIR_ENV, str(folder))
    try:
        yield folder, mounted
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=False)  # noqa: S603, S607


def columns() -> list:
    return [
        column("id", "LONG", pk=True),
        column("note", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]


def _big_batch(dest: Destination) -> tuple[tuple[str, bytes], int]:
    rows = BATCH_BYTES // (NOTE_CHARS + 40)
    # Distinct values: Parquet would dictionary-encode repeated ones into a tiny file.
    pad = NOTE_CHARS - len(CANARY) - 1
    data = ([str(i), f"{CANARY} {os.urandom(pad // 2).hex()}", SYNC] for i in range(rows))
    return dest.write_file(["id", "note", "_fivetran_synced"], data), rows  # type: ignore[arg-type]


def _load(dest: Destination, lake: Lake) -> int:
    assert dest.create("big", columns()).WhichOneof("response") == "success"
    batch, rows = _big_batch(dest)
    response = dest.write("big", columns(), replace=[batch])
    assert response.WhichOneof("response") == "success", response
    lake.settle()  # deferred mode: the batch is pending until a flush
    stored = lake.child().table(f"{lake.catalog}.{dest.schema}.big").count()
    assert stored == rows
    return rows


def test_a_batch_larger_than_the_staging_folder_loads_through_arrow(
    small_staging: tuple[Path, bool],
    dest: Destination,
    lake: Lake,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    folder, _mounted = small_staging
    _load(dest, lake)
    assert "through Arrow" in caplog.text
    assert list(folder.iterdir()) == []  # nothing left behind (nor written: it did not fit)
    assert lake.session.conf.get("spark.io.encryption.enabled") == "true"


def test_a_staging_folder_that_fills_up_mid_write_falls_back_to_arrow(
    small_staging: tuple[Path, bool],
    dest: Destination,
    lake: Lake,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The estimate says it fits, but the folder fills up (another process, a bad estimate)."""
    caplog.set_level(logging.INFO)
    folder, mounted = small_staging
    monkeypatch.setattr(staging, "fits", lambda _folder, _bytes: True)
    if not mounted:

        def full(*_args: object, **_kwargs: object) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(pq, "write_table", full)
    _load(dest, lake)
    assert "filled up" in caplog.text
    assert list(folder.iterdir()) == []
