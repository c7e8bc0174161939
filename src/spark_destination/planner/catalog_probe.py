"""The setup test's probe of a catalog: the commits every sync needs, on a table of its own.

A shared catalog can be set up so that Iceberg cannot commit to it (a Hive metastore without
its lock tables refuses every commit lock; one with
``hive.metastore.disallow.incompatible.col.type.changes=true`` refuses to drop a column). The
setup test finds that before the first sync, on a probe table in a namespace the destination
owns (``sd__`` names are the destination's own), one step at a time so a failure names the
step: create the namespace, create the table (a locked commit), change a property (another
locked commit), drop a column (a rewrite where the table format drops none in place), drop
the table.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Final

from spark_destination.core.model import Column, DataType
from spark_destination.core.names import OWN_PREFIX
from spark_destination.planner.ir import (
    ColumnChange,
    CreateNamespaceOp,
    CreateTableOp,
    DropColumnsOp,
    DropTableOp,
    Op,
    Plan,
    RewriteTableOp,
    SetPropertiesOp,
    TableRef,
)
from spark_destination.planner.tables import table_ref
from spark_destination.planner.target import Target

PROBE_NAMESPACE: Final = OWN_PREFIX + "setup"
PROBE_PROPERTY: Final = "spark_destination.probe"
# The column the probe drops: it is not the last, so dropping it moves the one after it (an
# INT) into the place of a STRING, which a metastore that checks column types refuses (it
# takes an INT where a STRING was as compatible: a number converts to text).
DROPPED: Final = "dropped"


class ProbeStep:
    """What each step proves (its name is what a failure message says)."""

    NAMESPACE = "create the namespace"
    CREATE = "create a table (a locked commit)"
    PROPERTY = "change a table property (a locked commit)"
    DROP_COLUMN = "drop a column"
    DROP_TABLE = "drop the table"


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    table: TableRef
    steps: tuple[tuple[str, Plan], ...]
    # Run whatever happened before: the probe table must not stay behind.
    cleanup: Plan


def plan_catalog_probe(catalog: str, *, target: Target, name: str | None = None) -> Probe:
    table = table_ref(
        catalog, PROBE_NAMESPACE, name or f"probe_{uuid.uuid4().hex[:12]}", target=target
    )
    columns = (
        Column(name="id", type=DataType.LONG, primary_key=True),
        Column(name=DROPPED, type=DataType.STRING),
        Column(name="kept", type=DataType.INT),
    )
    drop = Plan(ops=(DropTableOp(table=table),))
    drop_column: tuple[Op, ...] = (DropColumnsOp(table=table, columns=(DROPPED,)),)
    if not target.renames_columns_in_place:
        kept = tuple(ColumnChange(source=c, target=c) for c in columns if c.name != DROPPED)
        drop_column = (RewriteTableOp(table=table, columns=kept),)
    return Probe(
        table=table,
        steps=(
            (
                ProbeStep.NAMESPACE,
                Plan(ops=(CreateNamespaceOp(catalog=catalog, schema=PROBE_NAMESPACE),)),
            ),
            (
                ProbeStep.CREATE,
                Plan(ops=(CreateTableOp(table=table, columns=columns, properties=()),)),
            ),
            (
                ProbeStep.PROPERTY,
                Plan(ops=(SetPropertiesOp(table=table, properties=((PROBE_PROPERTY, "1"),)),)),
            ),
            (ProbeStep.DROP_COLUMN, Plan(ops=drop_column)),
            (ProbeStep.DROP_TABLE, drop),
        ),
        cleanup=drop,
    )
