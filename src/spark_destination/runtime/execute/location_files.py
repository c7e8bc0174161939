"""Look for a file under a table's location last modified before a time (maintenance's orphan
check: ``planner.maintenance.FileAges``).

Iceberg's ``remove_orphan_files`` lists the table's location, then reads every manifest to
find the files no snapshot references, and deletes those older than its cut-off. When no file
under the location is that old, the manifests need not be read: this listing, through the same
Hadoop file system the procedure lists with, stops at the first old file it meets.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Final

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.table_loader import spark_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Files looked at before giving up (each costs a few py4j round trips, ~0.2 ms): a location
# holding more is left to the procedure, as if the listing had not been made.
LISTING_LIMIT: Final = 2000


def has_file_before(
    session: SparkSession, table: TableRef, cutoff: datetime, *, limit: int = LISTING_LIMIT
) -> bool | None:
    """Whether some file under ``table``'s location was last modified before ``cutoff``; None
    when that is not known: the listing failed (a scheme Hadoop cannot list, no access) or
    met more than ``limit`` files first. Hidden files count too (the procedure skips them):
    one old file of any kind is enough to run the procedure."""
    from py4j.protocol import Py4JError

    try:
        loaded = spark_table(session, table)
        if loaded is None or not hasattr(loaded, "table"):
            return None
        jvm = session._jvm
        assert jvm is not None
        path = jvm.org.apache.hadoop.fs.Path(str(loaded.table().location()))
        # The session's Hadoop settings, as Iceberg's procedure lists with.
        fs = path.getFileSystem(session._jsparkSession.sessionState().newHadoopConf())
        if not fs.exists(path):
            return False
        before_ms = int(cutoff.timestamp() * 1000)
        files = fs.listFiles(path, True)
        for _ in range(limit):
            if not files.hasNext():
                return False
            if files.next().getModificationTime() < before_ms:
                return True
        return None
    except Py4JError:
        # Never fails maintenance: the procedure then runs as it would without the listing.
        log.info("the location of %r could not be listed; orphan removal runs", table.name)
        return None
