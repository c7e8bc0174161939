"""The destination's own tables under their earlier names keep working.

The destination's own tables used to be named with ``__sd_`` (``__sd_pending_<table>``,
``__sd_changes``), which S3 Tables-style catalogs refuse; today's defaults are ``sd__`` names
(``core.names``). A warehouse written before may still hold such tables: an intermediate table
with pending batches a merge flush has not applied yet, a changes table with its records. So a
request whose configuration keeps today's default for a name takes the earlier one where that
table exists: its pending rows are flushed and its records appended as before. The answer is
looked up once per table (or schema) and process, and only a definite one is kept.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Final

from spark_destination.core.config import DestinationConfig
from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.names import RESERVED_PREFIX
from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.table_loader import spark_table

log = logging.getLogger(__name__)

_DEFAULT: Final = DestinationConfig()
# The earlier defaults.
EARLIER_PENDING_PREFIX: Final = RESERVED_PREFIX + "pending_"
EARLIER_CHANGES_TABLE: Final = RESERVED_PREFIX + "changes"


def _named(ref: TableRef, name: str) -> TableRef | None:
    """``ref`` under ``name``, or None where no table can have that name (a long table's
    earlier intermediate name is over a path component's length: no such table was made)."""
    try:
        return dataclasses.replace(ref, name=name)
    except InvalidRequestError:
        return None


class EarlierNames:
    """Which earlier-named tables exist, per warehouse, catalog, schema and name."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, ...], bool] = {}
        self._guard = threading.Lock()

    def config_for(
        self,
        executor: Callable[[], Executor],
        config: DestinationConfig,
        ref: TableRef,
        warehouse: str,
    ) -> DestinationConfig:
        """``config`` with each default own-table name replaced by its earlier one where that
        table exists for ``ref`` (its intermediate table; its schema's changes table).
        ``executor`` is called only for a name not looked up yet."""
        if config.intermediate_table_prefix == _DEFAULT.intermediate_table_prefix:
            earlier = _named(ref, EARLIER_PENDING_PREFIX + ref.name)
            if earlier is not None and self._exists(executor, warehouse, earlier):
                config = dataclasses.replace(
                    config, intermediate_table_prefix=EARLIER_PENDING_PREFIX
                )
        if config.changes_table == _DEFAULT.changes_table:
            table = _named(ref, EARLIER_CHANGES_TABLE)
            if table is not None and self._exists(executor, warehouse, table):
                config = dataclasses.replace(config, changes_table=EARLIER_CHANGES_TABLE)
        return config

    def _exists(self, executor: Callable[[], Executor], warehouse: str, ref: TableRef) -> bool:
        key = (warehouse, ref.catalog, ref.schema, ref.name)
        with self._guard:
            known = self._known.get(key)
        if known is not None:
            return known
        try:
            found = spark_table(executor().session, ref) is not None
        except Exception as exc:  # noqa: BLE001 - a catalog that refuses the name holds none
            log.debug("looking for %s.%s: %s", ref.schema, ref.name, type(exc).__name__)
            return False
        if found:
            log.info("%s.%s: using the table under its earlier name", ref.schema, ref.name)
        with self._guard:
            self._known[key] = found
        return found
