"""WriteBatch, CreateTable, DescribeTable, AlterTable and Truncate end to end: a gRPC client
writes batch files the way Fivetran does, the server runs them on local Spark + Iceberg, and
the tables are read back. Every test runs in both write modes (deferred: the ``Lake`` flushes
before it reads)."""

from __future__ import annotations

import base64
from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from spark_destination.dialects.quoting import qualified
from tests.support.destination import (
    METASTORES,
    NULL,
    UNMOD,
    WRITE_MODES,
    Destination,
    Lake,
    column,
)

pytestmark = [pytest.mark.spark, pytest.mark.parametrize("dest", WRITE_MODES, indirect=True)]

SYNC1 = "2024-03-01T10:00:00.000Z"
SYNC2 = "2024-03-02T10:00:00.000Z"


def orders() -> list:
    return [
        column("id", "INT", pk=True),
        column("amount", "DECIMAL", precision=10, scale=2),
        column("note", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
        column("_fivetran_deleted", "BOOLEAN"),
    ]


HEADER = ["id", "amount", "note", "_fivetran_synced", "_fivetran_deleted"]


def outcome(response) -> str:
    return response.WhichOneof("response")


def seed(dest: Destination, rows: list[list[str]]) -> None:
    assert outcome(dest.create("orders", orders())) == "success"
    assert (
        outcome(dest.write("orders", orders(), replace=[dest.write_file(HEADER, rows)]))
        == "success"
    )


def by_id(lake: Lake, dest: Destination, table: str = "orders") -> dict[object, dict]:
    """The rows by id; fails if an id is stored twice (``Lake.by_key``)."""
    return lake.by_key(dest.schema, table)


def test_all_fifteen_types_round_trip_and_describe_reports_what_create_received(
    dest: Destination, lake: Lake
) -> None:
    columns = [
        column("id", "LONG", pk=True),
        column("b", "BOOLEAN"),
        column("sh", "SHORT"),
        column("i", "INT"),
        column("dec", "DECIMAL", precision=38, scale=10),
        column("f", "FLOAT"),
        column("d", "DOUBLE"),
        column("nd", "NAIVE_DATE"),
        column("ndt", "NAIVE_DATETIME"),
        column("utc", "UTC_DATETIME"),
        column("bin", "BINARY"),
        column("x", "XML"),
        column("s", "STRING"),
        column("j", "JSON"),
        column("t", "NAIVE_TIME"),
        column("_fivetran_synced", "UTC_DATETIME"),
        column("_fivetran_deleted", "BOOLEAN"),
    ]
    assert outcome(dest.create("all_types", columns)) == "success"
    described = dest.describe("all_types")
    assert outcome(described) == "table"
    assert list(described.table.columns) == columns

    header = [c.name for c in columns]
    row = [
        "1",
        "true",
        "-32768",
        "2147483647",
        "12345678901234567890.0123456789",
        "1.5",
        "-2.2250738585072014E-308",
        "2007-12-03",
        "2007-12-03T10:15:30",
        "2023-10-27T15:00:00.123456789Z",
        base64.b64encode(b"\x00\xffbin").decode(),
        "<a>x</a>",
        'héllo, "world"\nline',
        '{"k": [1, 2]}',
        "10:15:30",
        SYNC1,
        "false",
    ]
    assert (
        outcome(dest.write("all_types", columns, replace=[dest.write_file(header, [row])]))
        == "success"
    )
    (stored,) = lake.rows(dest.schema, "all_types")
    assert stored["b"] is True and stored["sh"] == -32768 and stored["i"] == 2147483647
    assert stored["dec"] == Decimal("12345678901234567890.0123456789")
    assert stored["f"] == 1.5 and stored["d"] == -2.2250738585072014e-308
    assert stored["nd"] == date(2007, 12, 3)
    assert stored["ndt"] == datetime(2007, 12, 3, 10, 15, 30)
    # Nanoseconds are truncated to Spark's microseconds.
    assert stored["utc"].replace(tzinfo=UTC) == datetime(
        2023, 10, 27, 15, 0, 0, 123456, tzinfo=UTC
    ) or stored["utc"] == datetime(2023, 10, 27, 15, 0, 0, 123456)
    assert bytes(stored["bin"]) == b"\x00\xffbin"
    assert stored["x"] == "<a>x</a>" and stored["s"] == 'héllo, "world"\nline'
    assert stored["j"] == '{"k": [1, 2]}' and stored["t"] == "10:15:30"


def test_create_table_creates_the_schema_and_fails_on_an_existing_table(dest: Destination) -> None:
    assert outcome(dest.describe("orders")) == "not_found"
    assert outcome(dest.create("orders", orders())) == "success"
    again = dest.create("orders", orders())
    assert outcome(again) == "task"
    assert "already exists" in again.task.message


def test_key_columns_are_required_identifier_fields(dest: Destination, lake: Lake) -> None:
    assert outcome(dest.create("orders", orders())) == "success"
    session = lake.child()
    name = qualified(lake.catalog, dest.schema, "orders")
    if lake.on_delta:
        # Delta has no identifier fields and refuses SHOW CREATE TABLE: the key is a
        # required column of the table's schema (the key itself is in fivetran.columns).
        required = {f.name for f in session.table(name).schema.fields if not f.nullable}
        assert required == {"id"}
        return
    ddl = session.sql(f"SHOW CREATE TABLE {name}").collect()[0][0]  # noqa: S608 - test read
    assert "id INT NOT NULL" in ddl
    assert "'identifier-fields' = '[id]'" in ddl


def test_upsert_update_soft_delete_and_hard_delete(dest: Destination, lake: Lake) -> None:
    seed(
        dest,
        [
            ["1", "1.10", "one", SYNC1, "false"],
            ["2", "2.20", "two", SYNC1, "false"],
            ["3", "3.30", "three", SYNC1, "false"],
            ["4", "4.40", "four", SYNC1, "false"],
        ],
    )
    update = dest.write_file(
        HEADER,
        [
            ["1", UNMOD, "uno", SYNC2, "false"],  # amount kept
            ["2", NULL, "", SYNC2, "false"],  # amount NULL, note empty string
            ["3", UNMOD, UNMOD, SYNC2, "true"],  # soft delete
            ["99", "9.99", "ghost", SYNC2, "false"],  # unknown key: ignored
        ],
    )
    delete = dest.write_file(
        HEADER, [["4", NULL, NULL, SYNC2, NULL], ["98", NULL, NULL, SYNC2, NULL]]
    )
    assert outcome(dest.write("orders", orders(), update=[update], delete=[delete])) == "success"
    rows = by_id(lake, dest)
    assert set(rows) == {1, 2, 3}
    assert rows[1]["amount"] == Decimal("1.10") and rows[1]["note"] == "uno"
    assert rows[2]["amount"] is None and rows[2]["note"] == ""
    assert rows[3]["_fivetran_deleted"] is True and rows[3]["note"] == "three"
    assert rows[3]["amount"] == Decimal("3.30")


def test_upsert_replaces_the_whole_row(dest: Destination, lake: Lake) -> None:
    seed(dest, [["1", "1.10", "one", SYNC1, "false"]])
    replace = dest.write_file(HEADER, [["1", NULL, "new", SYNC2, "false"]])
    assert outcome(dest.write("orders", orders(), replace=[replace])) == "success"
    rows = by_id(lake, dest)
    assert rows[1]["amount"] is None and rows[1]["note"] == "new"


def test_repeated_keys_apply_in_file_order_as_the_tester_sends_them(
    dest: Destination, lake: Lake
) -> None:
    seed(dest, [["5", "5.00", "five", SYNC1, "false"], ["6", "6.00", "six", SYNC1, "false"]])
    replace = dest.write_file(
        HEADER,
        [
            ["10", "1.00", "first", SYNC2, "false"],
            ["10", "2.00", "second", SYNC2, "false"],  # same key twice: the later wins
            ["11", "3.00", "new key", SYNC2, "false"],
            ["12", "4.00", "upserted then deleted", SYNC2, "false"],
        ],
    )
    update = dest.write_file(
        HEADER,
        [
            ["11", UNMOD, "updated after upsert", SYNC2, "false"],  # keeps the new row
            ["5", "50.00", UNMOD, SYNC2, "false"],
            ["5", UNMOD, UNMOD, SYNC2, "true"],  # update then soft delete
            ["6", "60.00", "x", SYNC2, "false"],
        ],
    )
    delete = dest.write_file(
        HEADER, [["12", NULL, NULL, SYNC2, NULL], ["6", NULL, NULL, SYNC2, NULL]]
    )
    response = dest.write("orders", orders(), replace=[replace], update=[update], delete=[delete])
    assert outcome(response) == "success"
    # As a multiset: a key inserted twice (each copy of 10, say) must show as two rows.
    stored = lake.counted(dest.schema, "orders", "id", "amount", "note", "_fivetran_deleted")
    assert stored == Counter(
        {
            (5, Decimal("50.00"), "five", True): 1,
            (10, Decimal("2.00"), "second", False): 1,
            (11, Decimal("3.00"), "updated after upsert", False): 1,
        }
    )


def test_one_write_batch_is_one_iceberg_commit(dest: Destination, lake: Lake) -> None:
    seed(dest, [["1", "1.00", "a", SYNC1, "false"]])
    # Deferred: the commit is the append to the intermediate table; the table is untouched.
    changed, same = ("sd__pending__orders", "orders") if dest.deferred else ("orders", None)
    before = lake.snapshot_count(dest.schema, changed)
    untouched = lake.snapshot_count(dest.schema, same) if same else None
    replace = dest.write_file(HEADER, [["2", "2.00", "b", SYNC2, "false"]])
    update = dest.write_file(HEADER, [["1", UNMOD, "a2", SYNC2, "false"]])
    delete = dest.write_file(HEADER, [["2", NULL, NULL, SYNC2, NULL]])
    dest.write("orders", orders(), replace=[replace], update=[update], delete=[delete])
    assert lake.snapshot_count(dest.schema, changed) == before + 1
    if same:
        assert lake.snapshot_count(dest.schema, same) == untouched


def test_keyless_table_is_keyed_by_fivetran_id(dest: Destination, lake: Lake) -> None:
    columns = [
        column("_fivetran_id", "STRING", pk=True),
        column("name", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
        column("_fivetran_deleted", "BOOLEAN"),
    ]
    header = [c.name for c in columns]
    assert outcome(dest.create("events", columns)) == "success"
    replace = dest.write_file(header, [["abc", "A", SYNC1, "false"], ["def", "B", SYNC1, "false"]])
    assert outcome(dest.write("events", columns, replace=[replace])) == "success"
    update = dest.write_file(header, [["abc", "A2", SYNC2, "false"]])
    delete = dest.write_file(header, [["def", NULL, SYNC2, NULL]])
    assert outcome(dest.write("events", columns, update=[update], delete=[delete])) == "success"
    rows = lake.rows(dest.schema, "events")
    assert [(r["_fivetran_id"], r["name"]) for r in rows] == [("abc", "A2")]


def test_timestamps_with_zero_to_nine_fractional_digits(dest: Destination, lake: Lake) -> None:
    columns = [
        column("id", "INT", pk=True),
        column("at", "UTC_DATETIME"),
        column("local", "NAIVE_DATETIME"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    assert outcome(dest.create("times", columns)) == "success"
    fractions = [
        "",
        ".1",
        ".12",
        ".123",
        ".1234",
        ".12345",
        ".123456",
        ".1234567",
        ".12345678",
        ".123456789",
    ]
    rows = [
        [str(n), f"2024-01-02T03:04:05{f}Z", f"2024-01-02T03:04:05{f}", SYNC1]
        for n, f in enumerate(fractions)
    ]
    assert (
        outcome(dest.write("times", columns, replace=[dest.write_file(header, rows)])) == "success"
    )
    stored = lake.by_key(dest.schema, "times")
    for n, fraction in enumerate(fractions):
        micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
        assert stored[n]["local"] == datetime(2024, 1, 2, 3, 4, 5, micros)


def test_identifiers_with_spaces_dots_hyphens_and_backticks(
    dest: Destination, lake: Lake, catalog_kind: str
) -> None:
    schema = f"my schema.with-dots {dest.schema}"  # one per test: it runs in both modes
    columns = [
        column("the key", "INT", pk=True),
        column("a.b-c`d", "STRING"),
        column("select", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]
    header = [c.name for c in columns]
    if catalog_kind in METASTORES or lake.on_delta:
        # A Hive metastore, and Spark's session catalog (Delta's), take only ASCII letters,
        # digits and '_' in database and table names: each is refused, by name, before
        # anything is created; column names are the table format's own and keep every
        # character.
        rule = "a Hive metastore" if catalog_kind in METASTORES else "Spark's session catalog"
        refused = dest.create("odd `table`.name", columns, schema=schema)
        assert outcome(refused) == "task"
        assert f"schema name {schema!r} holds ' ', '-', '.'" in refused.task.message
        assert f"{rule} takes only ASCII letters, digits and '_'" in refused.task.message
        refused = dest.create("odd `table`.name", columns)
        assert outcome(refused) == "task"
        assert "table name 'odd `table`.name' holds" in refused.task.message
        assert outcome(dest.describe("odd `table`.name")) != "table"
        schema, table = dest.schema, "odd_table_name"
    else:
        table = "odd `table`.name"
    assert outcome(dest.create(table, columns, schema=schema)) == "success"
    replace = dest.write_file(header, [["1", "v", "w", SYNC1]])
    assert outcome(dest.write(table, columns, replace=[replace], schema=schema)) == "success"
    (row,) = lake.rows(schema, table)
    assert row == {
        "the key": 1,
        "a.b-c`d": "v",
        "select": "w",
        "_fivetran_synced": row["_fivetran_synced"],
    }
    assert outcome(dest.describe(table, schema=schema)) == "table"


def test_truncate_missing_table_is_success(dest: Destination) -> None:
    assert outcome(dest.truncate("never_created", datetime.now(UTC))) == "success"


def test_truncate_hard_and_soft_only_touch_rows_synced_before(
    dest: Destination, lake: Lake
) -> None:
    seed(
        dest,
        [
            ["1", "1.00", "old", "2024-03-01T10:00:00.122Z", "false"],
            ["2", "2.00", "edge", "2024-03-01T10:00:00.123Z", "false"],
            ["3", "3.00", "new", "2024-03-01T10:00:00.124Z", "false"],
        ],
    )
    cut = datetime(2024, 3, 1, 10, 0, 0, 123000, tzinfo=UTC)
    assert outcome(dest.truncate("orders", cut, soft=True)) == "success"
    rows = by_id(lake, dest)
    assert [rows[i]["_fivetran_deleted"] for i in (1, 2, 3)] == [True, False, False]
    assert outcome(dest.truncate("orders", cut)) == "success"
    assert set(by_id(lake, dest)) == {2, 3}


def test_alter_table_adds_columns_and_never_drops_without_drop_columns(
    dest: Destination, lake: Lake
) -> None:
    seed(dest, [["1", "1.00", "one", SYNC1, "false"]])
    wider = [*orders(), column("extra", "DECIMAL", precision=12, scale=3)]
    assert outcome(dest.alter("orders", wider)) == "success"
    assert list(dest.describe("orders").table.columns) == wider
    narrower = [c for c in wider if c.name != "note"]
    assert outcome(dest.alter("orders", narrower)) == "success"
    assert [c.name for c in dest.describe("orders").table.columns] == [c.name for c in wider]
    assert by_id(lake, dest)[1]["note"] == "one"


def test_history_batch_and_migrate_answer_clearly(dest: Destination) -> None:
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

    history = dest.stub.WriteHistoryBatch(pb.WriteHistoryBatchRequest(schema_name=dest.schema))
    assert history.WhichOneof("response") == "task"
    assert "table name is empty" in history.task.message
    migrate = dest.stub.Migrate(pb.MigrateRequest())
    assert migrate.WhichOneof("response") == "unsupported"


def test_configuration_form_tests_and_capabilities(dest: Destination) -> None:
    from spark_destination.server.form import every_field
    from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

    form = dest.stub.ConfigurationForm(common.ConfigurationFormRequest())
    assert {f.name for f in every_field(form)} >= {"warehouse", "catalog", "spark_master"}
    for test in form.tests:
        response = dest.stub.Test(
            common.TestRequest(name=test.name, configuration=dest.configuration)
        )
        assert response.WhichOneof("response") == "success", (test.name, response)
    bad = dest.stub.Test(
        common.TestRequest(
            name="settings_are_valid", configuration={**dest.configuration, "jar_source": "ftp"}
        )
    )
    assert bad.WhichOneof("response") == "failure" and "jar_source" in bad.failure
    other_jvm = dest.stub.Test(
        common.TestRequest(
            name="spark_reaches_warehouse",
            configuration={**dest.configuration, "spark_master": "local[3]"},
        )
    )
    assert other_jvm.WhichOneof("response") == "failure" and "master" in other_jvm.failure
    capabilities = dest.stub.Capabilities(pb.CapabilitiesRequest())
    assert capabilities.batch_file_format == pb.CSV
