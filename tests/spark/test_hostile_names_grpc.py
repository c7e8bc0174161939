"""A table with hostile names (generated with hypothesis) round-trips on Spark + Iceberg:
CreateTable -> WriteBatch -> DescribeTable gives back exactly the names, types and rows sent.

On a Hive metastore, and for Delta tables (Spark's session catalog), a schema or table name
the catalog does not take (``HIVE_NAME``: both have the same rule) is refused by CreateTable,
naming the name and the catalog's rule, and nothing is created; the round trip then runs with
names it takes (column names are the table format's own: any is kept).

Few examples in CI; ``HYPOTHESIS_SPARK_EXAMPLES`` runs more.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from spark_destination.core.names import path_problem
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.sql.test_hostile_identifiers import COLUMN_NAMES, NAME
from tests.support.destination import METASTORES, Destination, Lake, column

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("HYPOTHESIS_SPARK_EXAMPLES", "6"))
SYNC = "2024-03-01T10:00:00.000Z"
_examples = itertools.count()
# The Hadoop catalog makes schema and table names into folder names: each must be one plain
# folder (``names.path_problem``; README, Threat model). Column names have no such limit.
PATH_NAME = NAME.filter(lambda n: path_problem(n) is None)
# The database and table names a Hive metastore takes and keeps as sent: ASCII letters (lower
# case: it lowercases the rest), digits and '_', at most 128 characters (its lock table's
# columns). Stated here apart from the destination's rule, which is what is tested.
HIVE_NAME = re.compile(r"[a-z0-9_]{1,128}")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(schema=PATH_NAME, table=PATH_NAME, names=COLUMN_NAMES)
def test_hostile_names_round_trip(
    schema: str,
    table: str,
    names: list[str],
    stub: pb_grpc.DestinationConnectorStub,
    lake: Lake,
    tmp_path_factory: pytest.TempPathFactory,
    catalog_configuration: dict[str, str],
    catalog_kind: str,
) -> None:
    number = next(_examples)
    # One fresh schema per example (the generated name plus a counter) so examples never meet.
    dest = Destination(
        stub=stub,
        workdir=Path(tmp_path_factory.mktemp("hostile")),
        configuration=catalog_configuration,
        schema=f"{schema}_{number}",
    )
    key, *others = names
    columns = [
        column(key, "INT", pk=True),
        *(column(n, "STRING") for n in others),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    if catalog_kind in METASTORES or lake.on_delta:
        rule = "Hive metastore" if catalog_kind in METASTORES else "Spark's session catalog"
        dest, table = refused_by_the_catalog(dest, table, columns, number, rule)
    created = dest.create(table, columns)
    assert created.WhichOneof("response") == "success", created
    values = ['a,b "q" `t`', "line\nbreak", "ünï 数据", ""]
    rows = [
        [str(i), *(values[(i + j) % len(values)] for j in range(len(others))), SYNC]
        for i in range(1, 3)
    ]
    written = dest.write(table, columns, replace=[dest.write_file(header, rows)])
    assert written.WhichOneof("response") == "success", written
    described = dest.describe(table)
    assert described.WhichOneof("response") == "table", described
    assert described.table.name == table
    assert [(c.name, c.type, c.primary_key) for c in described.table.columns] == [
        (c.name, c.type, c.primary_key) for c in columns
    ]
    # Sorted here: DataFrame.orderBy would read a dotted name as a nested field.
    stored = sorted(lake.rows(dest.schema, table), key=lambda r: r[key])
    assert [[str(r[key]), *(r[n] for n in others)] for r in stored] == [r[:-1] for r in rows]
    assert common.STRING in {c.type for c in described.table.columns}


def refused_by_the_catalog(
    dest: Destination, table: str, columns: list[common.Column], number: int, rule: str
) -> tuple[Destination, str]:
    """On a catalog with a name rule (``rule`` names it): a schema or table name it does not
    take is refused, naming it and the rule, with nothing created; the names to go on with
    (``HIVE_NAME``s)."""
    for kind, name in (("schema", dest.schema), ("table", table)):
        if HIVE_NAME.fullmatch(name):
            continue
        refused = dest.create(table, columns)
        assert refused.WhichOneof("response") == "task", refused
        assert f"{kind} name {name!r}" in refused.task.message, refused.task.message
        assert rule in refused.task.message, refused.task.message
        described = dest.describe(table)
        assert described.WhichOneof("response") != "table", described
        break
    if not HIVE_NAME.fullmatch(dest.schema):
        dest = replace(dest, schema=f"hostile_{number}")
    return dest, table if HIVE_NAME.fullmatch(table) else f"hostile_table_{number}"
