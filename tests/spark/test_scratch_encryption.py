"""Decrypted rows never sit in plaintext in Spark's scratch files or the machine's temp folder,
during or after a large WriteBatch: shuffle/spill blocks are encrypted (spark.io.encryption) and
the staged batch lives only on the RAM-backed staging folder while the request runs.

CI writes ~40k rows; ``SPARK_DESTINATION_BIG_STAGING=1`` writes ~400k.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from spark_destination.runtime.spark.session import SparkSettings
from tests.support.destination import Destination, Lake, column

pytestmark = pytest.mark.spark

ROWS = 400_000 if os.environ.get("SPARK_DESTINATION_BIG_STAGING") == "1" else 40_000
CANARY = b"scratch-canary-91c4"
SYNC = "2024-03-01T10:00:00.000Z"
MAX_SCAN_BYTES = 256 << 20


def _hits(roots: list[Path], skip: list[Path], since: float) -> set[str]:
    found: set[str] = set()
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            if any(Path(folder).is_relative_to(s) for s in skip):
                continue
            if any(part.startswith("staged-") for part in Path(folder).parts):
                continue  # the RAM staging folder: plaintext by design, removed after
            for name in files:
                path = Path(folder) / name
                try:
                    info = path.stat()
                    if info.st_mtime < since or info.st_size > MAX_SCAN_BYTES:
                        continue
                    if CANARY in path.read_bytes():
                        found.add(str(path))
                except OSError:
                    continue  # removed while we looked
    return found


def test_no_plaintext_in_scratch_or_temp_folders_during_and_after_a_write(
    dest: Destination, lake: Lake, spark_settings: SparkSettings
) -> None:
    conf = lake.session.sparkContext.getConf()
    assert conf.get("spark.io.encryption.enabled") == "true"
    local_dirs = [Path(p) for p in (conf.get("spark.local.dir") or "").split(",") if p]
    roots = [*local_dirs, Path(tempfile.gettempdir())]
    # Allowed to hold rows: the batch files we wrote (encrypted anyway), the warehouse (the
    # destination's output) and the staged batch (staged-*, on the RAM-backed scratch folder
    # while the request runs; checked gone afterwards).
    # The test's catalog's warehouse (a Hive metastore has its own).
    warehouse = Path(dest.configuration.get("warehouse", spark_settings.warehouse))
    skip = [dest.workdir, warehouse]
    columns = [
        column("id", "LONG", pk=True),
        column("note", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    since = time.time()
    batch = dest.write_file(
        ["id", "note", "_fivetran_synced"],
        [[str(i), f"{CANARY.decode()} {i}", SYNC] for i in range(ROWS)],
    )
    hits: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            hits.update(_hits(roots, skip, since))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        response = dest.write("t", columns, replace=[batch])
    finally:
        done.set()
        watcher.join()
    assert response.WhichOneof("response") == "success", response
    hits |= _hits(roots, skip, since)
    assert hits == set()
    staged = [p for root in local_dirs for p in root.rglob("staged-*")]
    assert staged == []
