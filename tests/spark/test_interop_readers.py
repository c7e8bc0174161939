"""Other engines read the destination's tables with exactly Spark's rows.

An open table format is worth its name only if engines other than the writer read it. Tables are
written through the gRPC server the way Fivetran writes them — every Fivetran type, upserts,
updates with unmodified values, hard and soft deletes, a history-mode table, a renamed, a widened
and a dropped column — and then read three ways: Spark (the writer), pyiceberg (Python, reads the
table's metadata file directly) and DuckDB's ``iceberg`` extension (from the pinned
``duckdb-ext-iceberg`` / ``duckdb-ext-avro`` wheels: no download). Each reader must give Spark's
rows, value for value, with merge-on-read's position deletes applied; the first snapshot of a
table must read the same in each too.

Every test runs on tables of both Iceberg format versions the destination writes
(``format_version``): 2, and 3, whose deletes are deletion vectors. A reader that cannot read
v3 tables is recorded in ``READS_V3``: the test then checks that it refuses such a table
(rather than reading it wrong), so a reader that learns v3 shows up here as a failure to
update the record (and the README's reader table).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from spark_destination.core.model import DataType
from spark_destination.dialects.quoting import qualified
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark

SYNCED, DELETED = "_fivetran_synced", "_fivetran_deleted"
START, END, ACTIVE = "_fivetran_start", "_fivetran_end", "_fivetran_active"

# Every Fivetran type, and a text each is written with (first row), then other values.
EVERY_TYPE: list[tuple[str, str, dict[str, int]]] = [
    ("flag", "BOOLEAN", {}),
    ("small", "SHORT", {}),
    ("count", "INT", {}),
    ("big", "LONG", {}),
    ("amount", "DECIMAL", {"precision": 18, "scale": 4}),
    ("ratio", "FLOAT", {}),
    ("score", "DOUBLE", {}),
    ("day", "NAIVE_DATE", {}),
    ("local_at", "NAIVE_DATETIME", {}),
    ("utc_at", "UTC_DATETIME", {}),
    ("payload", "BINARY", {}),
    ("doc", "XML", {}),
    ("name", "STRING", {}),
    ("attrs", "JSON", {}),
    ("clock", "NAIVE_TIME", {}),
]
ROWS = [
    [
        "1",
        "true",
        "-32768",
        "2147483647",
        "9223372036854775807",
        "12345678901234.5678",
        "1.5",
        "2.25",
        "2024-02-29",
        "2024-02-29T23:59:59.123456",
        "2024-03-01T10:00:00.5Z",
        "aGVsbG8=",
        "<a>1</a>",
        'ünï 数据, "q"',
        '{"k": [1, 2]}',
        "23:59:59.999",
    ],
    [
        "2",
        "false",
        "0",
        "-1",
        "0",
        "-0.0001",
        "-3.4028235E38",
        "1.0E-300",
        "0001-01-01",
        "1900-01-01T00:00:00",
        "1970-01-01T00:00:00Z",
        "",
        "",
        "",
        "{}",
        "00:00",
    ],
    ["3", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL],
    [
        "4",
        "true",
        "7",
        "7",
        "7",
        "7",
        "7",
        "7",
        "2000-01-01",
        "2000-01-01T00:00:00",
        "2000-01-01T00:00:00Z",
        "AAEC",
        "x",
        "y",
        "[]",
        "12:00:00",
    ],
]


def every_type_columns() -> list[common.Column]:
    return [
        column("id", "INT", pk=True),
        *(column(name, kind, **params) for name, kind, params in EVERY_TYPE),
        column(SYNCED, "UTC_DATETIME"),
        column(DELETED, "BOOLEAN"),
    ]


def ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def latest_metadata(lake: Lake, schema: str, table: str) -> Path:
    """The table's current metadata file, found through its catalog (the Hadoop catalog names
    it ``v<N>.metadata.json`` beside a version hint, a Hive metastore ``<N>-<uuid>.metadata.json``
    with no hint): the other readers open that file, so they read what Spark reads."""
    entries = qualified(lake.catalog, schema, table) + ".metadata_log_entries"
    files = [row[0] for row in lake.child().table(entries).select("file").collect()]
    # The newest has the highest version number (commits in one millisecond tie on time).
    newest = max(files, key=lambda f: int(re.match(r"v?(\d+)", f.rsplit("/", 1)[-1])[1]))
    return Path(newest.removeprefix("file:"))


def normalised(value: Any) -> Any:
    """One value as every reader can agree on it: instants as aware UTC, bytes as bytes."""
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC)
    return value


def spark_rows(lake: Lake, schema: str, table: str, snapshot: int | None = None) -> list[dict]:
    """Spark's rows; its instants (naive, in the Python process's zone) made aware UTC."""
    session = lake.child()
    frame = session.table(f"`{lake.catalog}`.`{schema}`.`{table}`")
    if snapshot is not None:
        frame = session.read.option("snapshot-id", snapshot).table(
            f"`{lake.catalog}`.`{schema}`.`{table}`"
        )
    utc_columns = {f.name for f in frame.schema.fields if f.dataType.simpleString() == "timestamp"}
    rows = []
    for row in frame.collect():
        record = row.asDict()
        for name in utc_columns:
            if record[name] is not None:
                record[name] = record[name].astimezone(dt.UTC)
        rows.append({k: normalised(v) for k, v in record.items()})
    return rows


def arrow_rows(table: pa.Table) -> list[dict]:
    return [{k: normalised(v) for k, v in row.items()} for row in table.to_pylist()]


def pyiceberg_rows(metadata: Path, snapshot: int | None = None) -> list[dict]:
    static = StaticTable.from_metadata(str(metadata))
    return arrow_rows(static.scan(snapshot_id=snapshot).to_arrow())


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    import duckdb_ext  # the folder of the pinned extension wheels

    extensions = Path(next(iter(duckdb_ext.__path__))) / "extensions"
    connection = duckdb.connect()
    connection.execute(f"SET extension_directory = '{extensions}'")
    connection.execute("SET autoinstall_known_extensions = false")
    connection.execute("SET autoload_known_extensions = false")
    connection.execute("LOAD avro")
    connection.execute("LOAD iceberg")
    connection.execute("SET TimeZone = 'UTC'")
    return connection


def duckdb_rows(metadata: Path, snapshot: int | None = None) -> list[dict]:
    connection = duckdb_connection()
    try:
        if snapshot is None:
            relation = connection.execute("SELECT * FROM iceberg_scan(?)", [str(metadata)])
        else:
            relation = connection.execute(
                "SELECT * FROM iceberg_scan(?, snapshot_from_id = ?)", [str(metadata), snapshot]
            )
        return arrow_rows(relation.fetch_arrow_table())
    finally:
        connection.close()


def by_id(rows: list[dict], *key: str) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in key))


# Whether each reader reads format-version 3 tables, deletion vectors applied: both do, as
# pinned (pyiceberg 0.12.0, DuckDB 1.4.4's iceberg extension); see the README's reader table.
READS_V3 = {"pyiceberg": True, "duckdb": True}
READERS = {"pyiceberg": pyiceberg_rows, "duckdb": duckdb_rows}


def assert_every_reader_agrees(
    lake: Lake, schema: str, table: str, *key: str, snapshot: int | None = None
) -> list[dict]:
    lake.settle()  # deferred mode: pending batches merged first (the readers read the table)
    expected = by_id(spark_rows(lake, schema, table, snapshot), *key)
    metadata = latest_metadata(lake, schema, table)
    version = json.loads(metadata.read_text())["format-version"]
    for name, read in READERS.items():
        if version >= 3 and not READS_V3[name]:
            # Recorded as unable: it must refuse the table, not return other rows.
            with pytest.raises(Exception):  # noqa: B017 - any refusal; never other rows
                read(metadata, snapshot)
            continue
        assert by_id(read(metadata, snapshot), *key) == expected, name
    return expected


def first_snapshot(lake: Lake, schema: str, table: str) -> int:
    metadata = json.loads(latest_metadata(lake, schema, table).read_text())
    return int(min(metadata["snapshots"], key=lambda s: s["sequence-number"])["snapshot-id"])


@pytest.fixture(params=["2", "3"], ids=lambda v: f"v{v}")
def versioned(request: pytest.FixtureRequest, dest: Destination) -> Destination:
    """``dest`` creating tables of Iceberg format version 2, then 3."""
    dest.configuration = {**dest.configuration, "format_version": request.param}
    return dest


def test_every_type_after_upserts_updates_and_deletes_reads_the_same_everywhere(
    versioned: Destination, lake: Lake
) -> None:
    dest = versioned
    columns = every_type_columns()
    header = [c.name for c in columns]
    synced = "2024-03-01T00:00:00Z"
    ok(dest.create("every_type", columns))
    ok(
        dest.write(
            "every_type",
            columns,
            replace=[dest.write_file(header, [[*row, synced, "false"] for row in ROWS])],
        )
    )
    lake.settle()  # deferred mode: the first snapshot is the flush of the first batch
    first = first_snapshot(lake, dest.schema, "every_type")
    # An update with unmodified values, a soft delete (update file), a hard delete, an upsert.
    update = dest.write_file(
        ["id", "name", "count", "amount", SYNCED, DELETED],
        [
            ["1", "renamed", UNMOD, UNMOD, "2024-03-02T00:00:00Z", UNMOD],
            ["2", UNMOD, "5", NULL, "2024-03-02T00:00:00Z", "true"],
        ],
    )
    delete = dest.write_file(["id", SYNCED], [["3", "2024-03-02T00:00:00Z"]])
    upsert = dest.write_file(header, [[*ROWS[3][:1], *ROWS[0][1:], synced, "false"]])
    ok(dest.write("every_type", columns, replace=[upsert], update=[update], delete=[delete]))
    rows = assert_every_reader_agrees(lake, dest.schema, "every_type", "id")
    assert [r["id"] for r in rows] == [1, 2, 4]
    assert rows[0]["name"] == "renamed" and rows[0]["count"] == 2147483647
    assert rows[1][DELETED] is True and rows[1]["amount"] is None
    assert rows[0]["amount"] == Decimal("12345678901234.5678")
    # The table's first snapshot reads the same too (time travel).
    old = assert_every_reader_agrees(lake, dest.schema, "every_type", "id", snapshot=first)
    assert [r["id"] for r in old] == [1, 2, 3, 4]


def test_renamed_widened_and_dropped_columns_read_the_same_everywhere(
    versioned: Destination, lake: Lake
) -> None:
    dest = versioned
    columns = [
        column("id", "INT", pk=True),
        column("n", "INT"),
        column("old_name", "STRING"),
        column("gone", "STRING"),
        column(SYNCED, "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    ok(dest.create("evolving", columns))
    rows = [
        ["1", "2147483647", "a", "x", "2024-03-01T00:00:00Z"],
        ["2", "-5", "b", "y", "2024-03-01T00:00:00Z"],
    ]
    ok(dest.write("evolving", columns, replace=[dest.write_file(header, rows)]))
    ok(
        dest.stub.Migrate(
            pb.MigrateRequest(
                configuration=dest.configuration,
                details=pb.MigrationDetails(
                    schema=dest.schema,
                    table="evolving",
                    rename=pb.RenameOperation(
                        rename_column=pb.RenameColumn(from_column="old_name", to_column="new_name")
                    ),
                ),
            )
        )
    )
    evolved = [
        column("id", "INT", pk=True),
        column("n", "LONG"),
        column("new_name", "STRING"),
        column(SYNCED, "UTC_DATETIME"),
    ]
    ok(dest.alter("evolving", evolved, drop_columns=True))
    more = dest.write_file(
        [c.name for c in evolved], [["3", "9223372036854775807", "c", "2024-03-02T00:00:00Z"]]
    )
    ok(dest.write("evolving", evolved, replace=[more]))
    read = assert_every_reader_agrees(lake, dest.schema, "evolving", "id")
    assert sorted(read[0]) == sorted(["id", "n", "new_name", SYNCED])
    assert [r["n"] for r in read] == [2147483647, -5, 9223372036854775807]
    assert [r["new_name"] for r in read] == ["a", "b", "c"]


def test_a_history_mode_table_reads_the_same_everywhere(versioned: Destination, lake: Lake) -> None:
    dest = versioned
    columns = [
        column("id", "INT", pk=True),
        column("v", "STRING"),
        column(START, "UTC_DATETIME", pk=True),
        column(END, "UTC_DATETIME"),
        column(ACTIVE, "BOOLEAN"),
        column(SYNCED, "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    params = dest.params()

    def history(**files: list[tuple[str, bytes]]) -> None:
        every = [f for group in files.values() for f in group]
        ok(
            dest.stub.WriteHistoryBatch(
                pb.WriteHistoryBatchRequest(
                    configuration=dest.configuration,
                    schema_name=dest.schema,
                    table=common.Table(name="hist", columns=columns),
                    keys=dict(every),
                    earliest_start_files=[p for p, _ in files.get("earliest", [])],
                    update_files=[p for p, _ in files.get("update", [])],
                    replace_files=[p for p, _ in files.get("replace", [])],
                    delete_files=[p for p, _ in files.get("delete", [])],
                    file_params=pb.FileParams(
                        compression=params.compression.value,
                        encryption=params.encryption.value,
                        null_string=NULL,
                        unmodified_string=UNMOD,
                    ),
                )
            )
        )

    tmax = "9999-12-31T23:59:59.999Z"
    history(
        replace=[
            dest.write_file(
                header,
                [
                    ["1", "a", "2024-01-01T00:00:00Z", tmax, "true", "2024-01-01T00:00:00Z"],
                    ["2", "b", "2024-01-01T00:00:00Z", tmax, "true", "2024-01-01T00:00:00Z"],
                ],
            )
        ]
    )
    history(
        earliest=[dest.write_file(["id", START], [["1", "2024-01-02T00:00:00Z"]])],
        update=[
            dest.write_file(
                header, [["1", UNMOD, "2024-01-02T00:00:00Z", tmax, "true", "2024-01-02T00:00:00Z"]]
            )
        ],
        delete=[dest.write_file(["id", END], [["2", "2024-01-03T00:00:00Z"]])],
    )
    read = assert_every_reader_agrees(lake, dest.schema, "hist", "id", START)
    assert [(r["id"], r["v"], r[ACTIVE]) for r in read] == [
        (1, "a", False),
        (1, "a", True),
        (2, "b", False),
    ]


def test_the_readers_cover_every_fivetran_type() -> None:
    declared = {kind for _, kind, _ in EVERY_TYPE}
    assert declared == {t.name for t in DataType if t is not DataType.UNSPECIFIED}
