"""Schema and table names that are not one plain folder are refused at the gRPC surface.

A Hadoop catalog makes ``<warehouse>/<schema>/<table>/`` of the names: before they were refused,
CreateTable + WriteBatch in schema ``..`` wrote ``metadata/`` and ``data/`` beside the warehouse,
table ``..`` wrote them at its root, schema ``.`` put a table at the root and table ``.`` into
the schema's folder. The rule (``core.names.path_problem``; README, Threat model) also refuses
``/`` (nested folders), ``:`` (a URI scheme to Hadoop), control characters (NUL, newline) and
names over 255 bytes. Every request that names a schema or table is sent with each such name
(as a client on the network could), as the schema, the table, and the source or target of a
copy or rename, and must answer with a task naming it; the folder around the warehouse must
hold exactly what it held before (the file system is checked, not only the answer), and the
server answers the next request.

Column names are not folders: only the destination's reserved prefix (``__sd_``) is refused,
wherever a request names a new column, and a column named like a path stays inside its table.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_destination.core.names import path_problem
from spark_destination.runtime.execute.warehouse_lock import LOCK_FILE
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import PENDING_PREFIX, Destination, Lake, column

pytestmark = pytest.mark.spark

# Each refused by ``path_problem`` for its own reason.
REFUSED = [".", "..", "a/b", "c:d", "nul\x00", "new\nline", "n" * 256]
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
        # The table's name in the operation itself, and operations not above.
        "copy_named_from": lambda: migrate(
            copy=pb.CopyOperation(copy_table=pb.CopyTable(from_table=table, to_table="c"))
        ),
        "rename_from": lambda: migrate(
            rename=pb.RenameOperation(rename_table=pb.RenameTable(from_table=table, to_table="r"))
        ),
        "to_history_from": lambda: migrate(
            copy=pb.CopyOperation(
                copy_table_to_history_mode=pb.CopyTableToHistoryMode(
                    from_table=table, to_table="h", soft_deleted_column="_fivetran_deleted"
                )
            )
        ),
        "copy_column": lambda: migrate(
            copy=pb.CopyOperation(copy_column=pb.CopyColumn(from_column="v", to_column="w"))
        ),
        "rename_column": lambda: migrate(
            rename=pb.RenameOperation(rename_column=pb.RenameColumn(from_column="v", to_column="w"))
        ),
        "add_history_column": lambda: migrate(
            add=pb.AddOperation(
                add_column_in_history_mode=pb.AddColumnInHistoryMode(
                    column="n",
                    column_type=common.INT,
                    default_value="1",
                    operation_timestamp="2024-01-01T00:00:00Z",
                )
            )
        ),
        "drop_history_column": lambda: migrate(
            drop=pb.DropOperation(
                drop_column_in_history_mode=pb.DropColumnInHistoryMode(
                    column="v", operation_timestamp="2024-01-01T00:00:00Z"
                )
            )
        ),
        "sync_mode": lambda: migrate(
            table_sync_mode_migration=pb.TableSyncModeMigrationOperation(
                type=pb.SOFT_DELETE_TO_HISTORY, soft_deleted_column="_fivetran_deleted"
            )
        ),
    }


@pytest.mark.parametrize(
    ("schema", "table"),
    [pytest.param(n, "t", id=f"schema {n[:8]!r}") for n in REFUSED]
    + [pytest.param("s", n, id=f"table {n[:8]!r}") for n in REFUSED],
)
def test_every_request_naming_a_refused_name_is_refused_and_writes_nothing(
    dest: Destination, tmp_path: Path, schema: str, table: str
) -> None:
    bad = schema if schema in REFUSED else table
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
        assert f"name {bad!r}" in message, (family, message)
        assert path_problem(bad) in message, (family, message)
        assert tree(around) == before, family
    # The server still serves, on the same warehouse.
    described = dest.describe("src", schema="s")
    assert described.WhichOneof("response") == "table", described


RESERVED_COLUMN = "__sd_x"
HISTORY_COLUMNS = [
    column("id", "INT", pk=True),
    column("_fivetran_start", "UTC_DATETIME", pk=True),
    column("v", "STRING"),
    column("_fivetran_end", "UTC_DATETIME"),
    column("_fivetran_active", "BOOLEAN"),
    column("_fivetran_synced", "UTC_DATETIME"),
]


def column_requests(dest: Destination) -> dict[str, Callable[[], Any]]:
    """Every request that names a new column, naming ``RESERVED_COLUMN``: on table ``t``
    (``COLUMNS``), or ``h`` (``HISTORY_COLUMNS``) where history mode is asked for."""
    configuration = dest.configuration
    with_it = [*COLUMNS, column(RESERVED_COLUMN, "STRING")]
    history_with_it = [*HISTORY_COLUMNS, column(RESERVED_COLUMN, "STRING")]
    header = ["id", "v", "_fivetran_synced", RESERVED_COLUMN]
    file = dest.write_file(header, [["1", "a", "2024-01-01T00:00:00Z", "x"]])

    def migrate(table: str, **operation: Any) -> pb.MigrateResponse:
        details = pb.MigrationDetails(schema=dest.schema, table=table, **operation)
        return dest.stub.Migrate(pb.MigrateRequest(configuration=configuration, details=details))

    return {
        "create": lambda: dest.create("new", with_it),
        "alter": lambda: dest.alter("t", with_it),
        "write": lambda: dest.write("t", with_it, replace=[file]),
        "history": lambda: dest.stub.WriteHistoryBatch(
            pb.WriteHistoryBatchRequest(
                configuration=configuration,
                schema_name=dest.schema,
                table=common.Table(name="h", columns=history_with_it),
                keys=dict([file]),
                replace_files=[file[0]],
                file_params=pb.FileParams(compression=pb.ZSTD, encryption=pb.AES),
            )
        ),
        "copy_column": lambda: migrate(
            "t",
            copy=pb.CopyOperation(
                copy_column=pb.CopyColumn(from_column="v", to_column=RESERVED_COLUMN)
            ),
        ),
        "rename_column": lambda: migrate(
            "t",
            rename=pb.RenameOperation(
                rename_column=pb.RenameColumn(from_column="v", to_column=RESERVED_COLUMN)
            ),
        ),
        "add_column": lambda: migrate(
            "t",
            add=pb.AddOperation(
                add_column_with_default_value=pb.AddColumnWithDefaultValue(
                    column=RESERVED_COLUMN, column_type=common.INT, default_value="1"
                )
            ),
        ),
        "add_history_column": lambda: migrate(
            "h",
            add=pb.AddOperation(
                add_column_in_history_mode=pb.AddColumnInHistoryMode(
                    column=RESERVED_COLUMN,
                    column_type=common.INT,
                    default_value="1",
                    operation_timestamp="2024-01-01T00:00:00Z",
                )
            ),
        ),
    }


def test_every_request_naming_a_reserved_column_is_refused_and_changes_nothing(
    dest: Destination, lake: Lake
) -> None:
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    assert dest.create("h", HISTORY_COLUMNS).WhichOneof("response") == "success"
    file = dest.write_file(["id", "v", "_fivetran_synced"], [["1", "a", "2024-01-01T00:00:00Z"]])
    assert dest.write("t", COLUMNS, replace=[file]).WhichOneof("response") == "success"

    def snapshot() -> list[Any]:
        return [
            (
                dest.describe(name),
                lake.rows(dest.schema, name),
                lake.snapshot_count(dest.schema, name),
            )
            for name in ("t", "h")
        ]

    before = snapshot()
    for family, send in column_requests(dest).items():
        response = send()
        assert response.WhichOneof("response") == "task", (family, response)
        message = response.task.message
        assert f"column name {RESERVED_COLUMN!r} starts with '__sd_'" in message, (family, message)
        assert snapshot() == before, family
        assert dest.describe("new").WhichOneof("response") == "not_found", family


# Legitimate column names that would not be legitimate folder names.
PATH_LIKE_COLUMNS = ["../k", "a/b", "c:d", "new\nline", "n" * 256]


def test_columns_named_like_paths_are_kept_and_their_files_stay_in_the_table(
    dest: Destination, lake: Lake, tmp_path: Path
) -> None:
    around = tmp_path / "around"
    warehouse = around / "inside" / "warehouse"
    warehouse.mkdir(parents=True)
    # Bucketed: the table is partitioned by bucket(N, key), a partition field named after the
    # key column, which names a folder in the table's data.
    dest.configuration = {
        "warehouse": str(warehouse),
        "catalog": next(_catalogs),
        "table_layout": "bucketed",
    }
    key, *others = PATH_LIKE_COLUMNS
    columns = [
        column(key, "INT", pk=True),
        *(column(n, "STRING") for n in others),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    assert dest.create("t", columns).WhichOneof("response") == "success"
    file = dest.write_file(header, [["1", "x", "y", "z", "w", "2024-01-01T00:00:00Z"]])
    written = dest.write("t", columns, replace=[file])
    assert written.WhichOneof("response") == "success", written
    lake.settle()  # deferred mode: the batch reaches the table's data by a flush
    described = dest.describe("t")
    assert [c.name for c in described.table.columns] == header
    # Every file is in the table's folder or its intermediate table's (deferred mode), or is
    # one of their parents, or the warehouse's lock.
    table_folder = warehouse.relative_to(around) / dest.schema / "t"
    tables = (table_folder, table_folder.with_name(PENDING_PREFIX + "t"))
    lock = warehouse.relative_to(around) / LOCK_FILE
    found = [Path(p) for p in tree(around)]
    outside = [
        p for p in found
        if p != lock and not any(p.is_relative_to(t) or t.is_relative_to(p) for t in tables)
    ]  # fmt: skip
    assert outside == []
    # The data files are in partition folders (named after the key column) inside the table's.
    data = [p for p in found if p.is_relative_to(table_folder / "data") and p.suffix == ".parquet"]
    assert data and all(len(p.relative_to(table_folder / "data").parts) >= 2 for p in data), data
