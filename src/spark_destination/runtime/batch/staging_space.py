"""Where a local master stages decoded batches, and whether a batch fits there.

The staging folder must be RAM-backed (decrypted rows never reach persistent disk). By default
it is this process's scratch folder on ``/dev/shm`` (``runtime.spark.scratch``);
``SPARK_DESTINATION_STAGING_DIR`` names another tmpfs. Inside Docker
``/dev/shm`` is 64 MB by default, so a batch that does not fit is not written there at all: the
stager hands it to Spark through Arrow instead (through the driver's memory and, with
``spark.io.encryption.enabled``, over a socket rather than a temp file), never to a plaintext
file elsewhere.

This is the runtime layer: no pyspark here.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from spark_destination.runtime.spark import scratch

__all__ = ["STAGING_DIR_ENV", "fits", "is_out_of_space", "staging_dir"]

STAGING_DIR_ENV = "SPARK_DESTINATION_STAGING_DIR"
# Parquet (uncompressed) carries page headers and statistics beyond the Arrow buffers, and the
# folder is shared with other processes: keep a margin rather than fill the tmpfs to the byte.
_OVERHEAD = 1.25
_HEADROOM_BYTES = 8 << 20


def staging_dir() -> Path | None:
    """The RAM-backed staging folder, or None when there is none this process may write."""
    configured = os.environ.get(STAGING_DIR_ENV, "").strip()
    if not configured:
        return scratch.process_dir()
    folder = Path(configured)
    if folder.is_dir() and os.access(folder, os.W_OK):
        return folder
    return None


def free_bytes(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def fits(folder: Path, arrow_bytes: int) -> bool:
    """Whether a staged file made from ``arrow_bytes`` of Arrow data fits in ``folder``."""
    return arrow_bytes * _OVERHEAD + _HEADROOM_BYTES <= free_bytes(folder)


def is_out_of_space(exc: BaseException) -> bool:
    """The estimate was wrong or another process filled the folder meanwhile."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
