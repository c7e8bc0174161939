"""What the planner may ask about the SQL target: capability questions, no SQL.

The planner decides *what* a request does from these answers; a dialect (``dialects/``)
implements the protocol and decides *how* it is written. The planner never imports a dialect,
so adding a target changes no planning module.
"""

from __future__ import annotations

import enum
from datetime import timedelta
from typing import Protocol

from spark_destination.core.model import Column, DataType


class NameKind(enum.Enum):
    """What a name in a request names, for ``Target.name_problem`` and its messages."""

    CATALOG = "catalog"
    SCHEMA = "schema"
    TABLE = "table"


class Maintenance(enum.Enum):
    """What keeps a table format's tables lean, and so which maintenance ops are planned."""

    # Iceberg's procedures: compact data files, compact position deletes, expire snapshots
    # (their files go with them), remove orphan files.
    SNAPSHOT_PROCEDURES = "snapshot procedures"
    # Delta's commands: OPTIMIZE (compaction, clustered by the key with ZORDER BY), then
    # VACUUM (removes files no version within the retention references).
    OPTIMIZE_AND_VACUUM = "optimize and vacuum"


class Target(Protocol):
    @property
    def name(self) -> str:
        """The dialect's registry name, for messages."""
        ...

    @property
    def table_format(self) -> str:
        """The table format's name as users know it (``Iceberg``, ``Delta``), for messages."""
        ...

    def same_storage(self, source: Column, target: Column) -> bool:
        """``target`` is stored exactly like ``source``: changing it is a metadata change."""
        ...

    def widens_in_place(self, source: Column, target: Column) -> bool:
        """The table format can change the stored type of ``source`` to ``target`` in place."""
        ...

    def convertible(self, source: Column, target: Column) -> bool:
        """Stored ``source`` values can be converted to ``target`` at all (by a rewrite)."""
        ...

    def conversion_can_fail(self, source: Column, target: Column) -> bool:
        """Some stored ``source`` value may not convert to ``target`` (so it is checked first)."""
        ...

    @property
    def changes_key_in_place(self) -> bool:
        """A column joining the primary key can be made NOT NULL in place (once checked to hold
        no NULL), and the key can be dropped in place; otherwise both need a rewrite."""
        ...

    @property
    def renames_columns_in_place(self) -> bool:
        """Renaming or dropping a column changes only metadata; otherwise the table is
        rewritten without it (or under its new name) in one commit."""
        ...

    def key_type_allowed(self, data_type: DataType) -> bool:
        """A column of this type may be part of the primary key."""
        ...

    def name_problem(self, kind: NameKind, name: str) -> str | None:
        """Why the target refuses ``name`` as a catalog, schema or table name (a phrase such as
        "holds a space"), or None. Every target refuses what ``core.names`` refuses; a catalog
        may refuse more (Unity Catalog: periods, spaces, upper case)."""
        ...

    def string_length_limit(self, column: Column) -> int | None:
        """The most characters a value of ``column`` may hold, where the target declares the
        column with a length that every write enforces (Databricks: ``VARCHAR(n)`` from
        Fivetran's ``string_byte_length``); None without a limit (Iceberg has no length-limited
        string type: its strings are unbounded)."""
        ...

    @property
    def flush_filter_slots(self) -> int:
        """How many distinct pending keys a merge flush may bind as a filter on the table's
        scan (0: never). Far more than a batch MERGE's ``key_filter_slots``: a flush is rare,
        and unfiltered its join moves every row of the table."""
        ...

    @property
    def maintenance(self) -> Maintenance:
        """How the table format's tables are maintained."""
        ...

    @property
    def lays_out_tables(self) -> bool:
        """The dialect renders a ``TableLayout`` (sort order, row groups, bloom filters,
        buckets, format version); otherwise layouts are not planned."""
        ...

    @property
    def minimum_retention(self) -> timedelta:
        """The shortest retention the format's file clean-up accepts (Delta's VACUUM refuses
        less than 7 days unless its safety check is turned off)."""
        ...
