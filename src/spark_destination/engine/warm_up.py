"""Warm a fresh JVM's write path before the first sync arrives (``serve --prewarm``).

Starting Spark is not all a fresh server pays: the first MERGE of each shape runs on cold,
interpreted JVM code (the bare engine's first 1M-row MERGE took 12.4 s, its warm median 6.7 s).
So once Spark runs, small batches of every kind go through the whole engine — staging, the
batch MERGE in its key-filter, unique-keys and folding forms, a history MERGE, the Iceberg
commit — on throwaway tables in a temporary warehouse that is deleted afterwards. The user's
warehouse is never touched. A request arriving meanwhile is served at once (the warm-up holds
no lock it takes); a warm-up that fails is logged and changes nothing.
"""

from __future__ import annotations

import csv
import logging
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from spark_destination.core.errors import DestinationError
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.core.requests import (
    BatchFiles,
    CreateTableRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.engine import auto_maintenance
from spark_destination.runtime.spark import scratch

if TYPE_CHECKING:
    from spark_destination.engine.engine import Engine

log = logging.getLogger(__name__)

SCHEMA: Final = "warm_up"
CATALOG: Final = "sd_warm_up"
NULL, UNMODIFIED = "warm-null", "warm-unmodified"
PARAMS: Final = FileParams(
    compression=Compression.OFF,
    encryption=Encryption.NONE,
    null_string=NULL,
    unmodified_string=UNMODIFIED,
)
COLUMNS: Final = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="name", type=DataType.STRING),
    Column(name="qty", type=DataType.INT),
    Column(name="price", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="at", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
)
HISTORY: Final = (
    *COLUMNS[:-1],
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
)
# More rows than the key filter takes (its form and the unfiltered one both run).
ROWS: Final = 600
WARM: Final = "write path warmed"


def warm_write_path(engine: Engine) -> None:
    """Run the warm-up; log how long it took, or why it failed (never raises)."""
    started = time.perf_counter()
    try:
        # In the process's scratch folder where there is one: a server killed mid-warm-up
        # left its folder in /tmp for good (134 of them on the test machine); the next
        # server's start removes a dead process's scratch folder.
        with tempfile.TemporaryDirectory(prefix="sd-warm-up-", dir=scratch.process_dir()) as folder:
            _warm(engine, Path(folder))
    except DestinationError as exc:
        log.warning("warming the write path failed (%s); the first batches pay it", exc.loggable)
        return
    except Exception as exc:  # noqa: BLE001 - a warm-up never stops the server
        reason = type(exc).__name__
        log.warning("warming the write path failed (%s); the first batches pay it", reason)
        return
    log.info("%s in %.1f s", WARM, time.perf_counter() - started)


def _warm(engine: Engine, folder: Path) -> None:
    configuration = {
        "warehouse": str(folder / "warehouse"),
        # A catalog of its own: a catalog's warehouse is fixed once registered.
        "catalog": CATALOG,
        **auto_maintenance.OFF,
    }
    files = _Files(folder)
    table = Table(name="batches", columns=COLUMNS)
    engine.apply(configuration, CreateTableRequest(schema=SCHEMA, table=table))

    def write(**kinds: Sequence[Sequence[str]]) -> None:
        names = [c.name for c in COLUMNS]
        batch = {kind: (files.write(rows, names),) for kind, rows in kinds.items()}
        batch_files = BatchFiles(params=PARAMS, **batch)  # type: ignore[arg-type]
        request = WriteBatchRequest(schema=SCHEMA, table=table, files=batch_files)
        engine.apply(configuration, request)

    write(replace=[_row(i) for i in range(ROWS)])  # into an empty table
    # Matched and new keys, unmodified values, deletes: the unfiltered MERGE ...
    write(
        replace=[_row(i) for i in range(ROWS // 2, ROWS + ROWS // 2)],
        update=[_update(i) for i in range(ROWS // 4)],
        delete=[_row(i) for i in range(ROWS // 4, ROWS // 3)],
    )
    # ... its key-filter form (a small batch), and the folding form (a key repeats).
    write(replace=[_row(i) for i in range(10)], update=[_update(i) for i in range(10, 20)])
    write(replace=[_row(1), _row(1)], delete=[_row(2)])

    history = Table(name="history", columns=HISTORY)
    engine.apply(configuration, CreateTableRequest(schema=SCHEMA, table=history))
    start, later = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
    versions = [[*_row(i)[:-1], start, "9999-12-31T23:59:59.999Z", "true"] for i in range(ROWS)]
    newer = [[*_update(i)[:-1], later, "9999-12-31T23:59:59.999Z", "true"] for i in range(ROWS)]
    header = [c.name for c in HISTORY]
    earliest = files.write([[str(i), later] for i in range(ROWS)], ["id", "_fivetran_start"])
    for kind, rows, first in (("replace", versions, ()), ("update", newer, (earliest,))):
        written = {kind: (files.write(rows, header),)}
        batch = BatchFiles(params=PARAMS, **written)  # type: ignore[arg-type]
        request = WriteHistoryBatchRequest(
            schema=SCHEMA, table=history, earliest_start_files=first, files=batch
        )
        engine.apply(configuration, request)


def _row(i: int) -> list[str]:
    return [
        str(i),
        f"name {i}",
        str(i % 1000),
        f"{i / 7:.4f}",
        f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
        f"2024-05-{1 + i % 28:02d}T{i % 24:02d}:00:00.{i % 1000:03d}Z",
        "2024-06-01T12:00:00.000Z",
        "false",
    ]


def _update(i: int) -> list[str]:
    """Every other column unmodified, one NULL."""
    row = _row(i)
    return [v if n % 2 == 0 else UNMODIFIED for n, v in enumerate(row[:-1])] + [NULL]


class _Files:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def write(self, rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
        self.count += 1
        path = self.folder / f"batch_{self.count}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(header)
            out.writerows(rows)
        return str(path)
