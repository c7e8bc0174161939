"""The table-maintenance ops of the IR (Iceberg's ``CALL <catalog>.system.*`` procedures).

Kept apart from ``ir`` (which re-exports them in its closed ``Op`` union) so that module stays
small. ``TableRef`` is imported for typing only: ``ir`` imports this module first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spark_destination.planner.ir import TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteDataFilesOp:
    """Compact small data files; files carrying at least ``delete_file_threshold`` delete files
    are rewritten with their deletes applied (merge-on-read leaves one per batch)."""

    table: TableRef
    delete_file_threshold: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class RewritePositionDeletesOp:
    """Compact the position-delete files that remain, dropping those that no longer apply."""

    table: TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpireSnapshotsOp:
    """Forget snapshots older than ``older_than`` (keeping ``retain_last``) and delete the
    files only they referenced."""

    table: TableRef
    older_than: datetime
    retain_last: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveOrphanFilesOp:
    """Delete files under the table's location that no snapshot references (failed writes)."""

    table: TableRef
    older_than: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealthOp:
    """Read-only: the table's live data files, delete files and snapshots (one row of counts)."""

    table: TableRef


MaintenanceOp = (
    RewriteDataFilesOp
    | RewritePositionDeletesOp
    | ExpireSnapshotsOp
    | RemoveOrphanFilesOp
    | TableHealthOp
)
