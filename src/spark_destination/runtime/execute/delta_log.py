"""What a Delta table's log says: its folder, its latest version, and the commit info each
commit carries (the destination's entries, as JSON in ``userMetadata``:
``commits.delta_user_metadata``). Read through delta-spark's ``DeltaTable`` API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from spark_destination.runtime.spark.java_values import java_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Delta's Spark table class (what the session catalog loads for a Delta table).
DELTA_SPARK_TABLE: Final = "org.apache.spark.sql.delta.catalog.DeltaTableV2"
_DELTA_TABLE: Final = "io.delta.tables.DeltaTable"
# The history's name of Delta's RESTORE (its parameters name the version restored).
_RESTORE: Final = "RESTORE"


def is_delta(loaded: Any) -> bool:
    """``loaded`` (a catalog's Java ``Table``) is a Delta table."""
    return loaded is not None and str(loaded.getClass().getName()) == DELTA_SPARK_TABLE


def path_of(loaded: Any) -> str:
    """The folder of a loaded Delta table."""
    return str(loaded.path().toString())


def _table(session: SparkSession, path: str) -> Any:
    return java_class(session, _DELTA_TABLE).forPath(session._jsparkSession, path)


def latest_version(session: SparkSession, path: str) -> int:
    return int(_table(session, path).history(1).head().getLong(0))


@dataclass(frozen=True, slots=True)
class DeltaCommit:
    version: int
    # The commit's ``userMetadata`` (None: it carries none).
    user_metadata: str | None
    # For a RESTORE, the version it put the table back to: later commits were undone.
    restored_to: int | None


def commits_since(session: SparkSession, path: str, since: int) -> list[DeltaCommit]:
    """Every commit after version ``since``, newest first."""
    from pyspark.sql import DataFrame

    latest = latest_version(session, path)
    if latest <= since:
        return []
    history = DataFrame(_table(session, path).history(latest - since), session)
    found = []
    for row in history.select(
        "version", "operation", "operationParameters", "userMetadata"
    ).collect():
        restored_to = None
        if row["operation"] == _RESTORE:
            restored_to = int((row["operationParameters"] or {}).get("version", -1))
        found.append(
            DeltaCommit(
                version=int(row["version"]),
                user_metadata=row["userMetadata"],
                restored_to=restored_to,
            )
        )
    return found


def live_commit(commits: list[DeltaCommit], carries: str) -> bool:
    """One of ``commits`` (newest first) that the table's current state descends from has
    ``carries`` in its ``userMetadata``: a RESTORE to version v makes the table that of v, so
    the commits between v and the RESTORE are not part of it."""
    jump_to: int | None = None
    for commit in commits:
        if jump_to is not None and commit.version > jump_to:
            continue
        if commit.user_metadata is not None and carries in commit.user_metadata:
            return True
        if commit.restored_to is not None:
            jump_to = commit.restored_to
    return False


def restore_to(session: SparkSession, path: str, version: int) -> None:
    """Delta's own ``RESTORE``: a new commit that re-adds the files of ``version``."""
    _table(session, path).restoreToVersion(version)
