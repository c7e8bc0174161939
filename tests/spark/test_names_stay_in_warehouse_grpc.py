"""Schema and table names ``.`` and ``..`` cannot put files outside the warehouse.

A Hadoop catalog makes ``<warehouse>/<schema>/<table>/`` of the names: before they were refused,
CreateTable + WriteBatch in schema ``..`` wrote ``metadata/`` and ``data/`` beside the warehouse,
table ``..`` wrote them at its root, schema ``.`` put a table at the root and table ``.`` into
the schema's folder. Every request that names a schema or table is sent with each such name
(as a client on the network could) and must answer with a task, and the folder around the
warehouse must hold exactly what it held before: the file system is checked, not only the answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import Destination, column

pytestmark = pytest.mark.spark

ESCAPING = [".", ".."]
COLUMNS = [
    column("id", "INT", pk=True),
    column("v", "STRING"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
# A catalog name is bound to one warehouse for the life of the JVM: one per test.
_catalogs = (f"names{i}" for i in itertools.count())


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def requests(dest: Destination, schema: str, table: str) -> dict[str, Callable[[], Any]]:
    """Every request family that names a schema or table, with those names."""
    configuration = dest.configuration
    file = dest.write_file(["id", "v", "_fivetran_synced"], [["1", "a", "2024-01-01T00:00:00Z"]])

    def migrate(**operation: Any) -> pb.MigrateResponse:
        details = pb.MigrationDetails(schema=schema, table=table, **operation)
        return dest.stub.Migrate(pb.MigrateRequest(configuration=configuration, details=details))

    return {
        "create": lambda: dest.create(table, COLUMNS, schema=schema),
        "describe": lambda: dest.describe(table, schema=schema),
        "write": lambda: dest.write(table, COLUMNS, replace=[file], schema=schema),
        "history": lambda: dest.stub.WriteHistoryBatch(
            pb.WriteHistoryBatchRequest(
                configuration=configuration,
                schema_name=schema,
                table=common.Table(name=table, columns=COLUMNS),
                keys=dict([file]),
                replace_files=[file[0]],
                file_params=pb.FileParams(compression=pb.ZSTD, encryption=pb.AES),
            )
        ),
        "alter": lambda: dest.stub.AlterTable(
            pb.AlterTableRequest(
                configuration=configuration,
                schema_name=schema,
                table=common.Table(name=table, columns=COLUMNS),
            )
        ),
        "truncate": lambda: dest.stub.Truncate(
            pb.TruncateRequest(
                configuration=configuration,
                schema_name=schema,
                table_name=table,
                synced_column="_fivetran_synced",
            )
        ),
        "drop": lambda: migrate(drop=pb.DropOperation(drop_table=True)),
        "copy_from": lambda: migrate(
            copy=pb.CopyOperation(copy_table=pb.CopyTable(from_table=table, to_table="c"))
        ),
        "copy_to": lambda: migrate(
            copy=pb.CopyOperation(copy_table=pb.CopyTable(from_table="src", to_table=table))
        ),
        "rename_to": lambda: migrate(
            rename=pb.RenameOperation(rename_table=pb.RenameTable(from_table="src", to_table=table))
        ),
        "to_history": lambda: migrate(
            copy=pb.CopyOperation(
                copy_table_to_history_mode=pb.CopyTableToHistoryMode(
                    from_table="src", to_table=table, soft_deleted_column="_fivetran_deleted"
                )
            )
        ),
        "add_column": lambda: migrate(
            add=pb.AddOperation(
                add_column_with_default_value=pb.AddColumnWithDefaultValue(
                    column="n", column_type=common.INT, default_value="1"
                )
            )
        ),
        "update_value": lambda: migrate(
            update_column_value=pb.UpdateColumnValueOperation(column="v", value="x")
        ),
    }


@pytest.mark.parametrize(
    ("schema", "table"), [(n, "t") for n in ESCAPING] + [("s", n) for n in ESCAPING]
)
def test_every_request_naming_dot_or_dotdot_is_refused_and_writes_nothing(
    dest: Destination, tmp_path: Path, schema: str, table: str
) -> None:
    # A warehouse of its own, two folders down, so "beside" and "above" it are watched too.
    around = tmp_path / "around"
    warehouse = around / "inside" / "warehouse"
    warehouse.mkdir(parents=True)
    dest.configuration = {"warehouse": str(warehouse), "catalog": next(_catalogs)}
    # A real source table, so that copy/rename are refused for the name and nothing else.
    assert dest.create("src", COLUMNS, schema="s").WhichOneof("response") == "success"
    before = tree(around)
    for family, send in requests(dest, schema, table).items():
        response = send()
        kind = response.WhichOneof("response")
        assert kind == "task", (family, response)
        message = response.task.message
        assert f"name {schema if schema in ESCAPING else table!r}" in message, (family, message)
        assert tree(around) == before, family
