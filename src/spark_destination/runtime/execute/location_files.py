"""Look for a file under a table's location last modified before a time (maintenance's orphan
check: ``planner.maintenance.FileAges``).

Iceberg's ``remove_orphan_files`` lists the table's location, then reads every manifest to
find the files no snapshot references, and deletes those older than its cut-off. When no file
under the location is that old, the manifests need not be read. The listing is Spark's own
(its file index, through the Hadoop file system the procedure lists with too), asked for the
files modified before the cut-off: one call, listed in the JVM. Walking Hadoop's iterator
from here instead cost ~1.5 ms a file in py4j round trips (1.3 s for 900 files, against
0.05-0.07 s this way; docs/benchmarks.md, "Small syncs").
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.table_loader import spark_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


def has_file_before(session: SparkSession, table: TableRef, cutoff: datetime) -> bool | None:
    """Whether some file under ``table``'s location was last modified before ``cutoff``; None
    when that is not known (the location could not be listed).

    Spark's file index skips hidden names as Iceberg's procedure does (starting with ``_`` or
    ``.``; a partition folder ``_x=1`` is kept by both). They differ at the edges: Spark also
    skips names ending in ``._COPYING_`` and a partition folder of a field starting with
    ``.``, which the procedure lists; an old file only there is left until the table has a
    snapshot older than the cut-off (then no listing is made and the procedure runs). The
    cut-off is rounded up to a whole second (the option's precision): a file just after it
    counts as old, so rounding errs towards running the procedure.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    seconds = math.ceil(cutoff.astimezone(UTC).timestamp())
    before = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    try:
        loaded = spark_table(session, table)
        if loaded is None or not hasattr(loaded, "table"):
            return None
        files = (
            session.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .option("modifiedBefore", before)
            .option("timeZone", "UTC")
            .load(str(loaded.table().location()))
        )
        # Only the path: the files' contents are never read.
        return bool(files.select("path").limit(1).collect())
    except (Py4JError, PySparkException):
        # Never fails maintenance: the procedure then runs as it would without the listing.
        log.info("the location of %r could not be listed; orphan removal runs", table.name)
        return None
