"""The tester emulation: input JSON -> steps and batch files, the gRPC client, and replay.

Pure: no Spark. The client and replay run against a fake in-process servicer on 127.0.0.1
(``tests.support.fake_destination``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from spark_destination.core.model import (
    DELETED,
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    Compression,
    DataType,
    Encryption,
    Table,
)
from spark_destination.replay import input_files as tester_input
from spark_destination.replay.client import (
    TESTER_NULL_STRING,
    TESTER_UNMODIFIED_STRING,
    DestinationClient,
    connect,
    response_outcome,
    timestamp_ms,
)
from spark_destination.replay.input_files import (
    TMAX,
    AlterStep,
    CreateStep,
    DescribeStep,
    MigrateStep,
    Step,
    TruncateStep,
    WriteHistoryStep,
    WriteStep,
    close_versions,
    format_instant,
    parse_instant,
    sample_paths,
)
from spark_destination.replay.run import format_rows, replay
from spark_destination.runtime.batch.csv_text import read_batch_file
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.fake_destination import FakeServicer, serving

# Aliases: pytest would try to collect classes whose names start with "Test".
Session = tester_input.TesterSession
InputError = tester_input.TesterInputError
NULL = TESTER_NULL_STRING
UNMOD = TESTER_UNMODIFIED_STRING
T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
SAMPLES = {p.name: p for p in sample_paths()}


def fixed_clock() -> int:
    return T0


def make_session(tmp_path: Path, *, plain_text: bool = False, seed: int = 7) -> Session:
    return Session(
        workdir=tmp_path,
        plain_text=plain_text,
        clock=fixed_clock,
        rng=random.Random(seed),
    )


def load_samples(session: Session, *names: str) -> list[list[Step]]:
    return [session.load(SAMPLES[name]) for name in names]


def writes(steps: list[Step]) -> dict[str, WriteStep]:
    return {s.table.name: s for s in steps if isinstance(s, WriteStep)}


def read_rows(step: WriteStep | WriteHistoryStep, path: str) -> list[dict[str, str]]:
    table = read_batch_file(
        path,
        key=step.keys.get(path),
        params=step.file_params,
        columns=[c.name for c in step.table.columns],
    )
    return table.to_pylist()


def header_of(step: WriteStep | WriteHistoryStep, path: str) -> list[str]:
    table = read_batch_file(
        path,
        key=step.keys.get(path),
        params=step.file_params,
        columns=[c.name for c in step.table.columns],
    )
    return list(table.column_names)


# ---------------------------------------------------------------------------------------------
# Samples -> steps
# ---------------------------------------------------------------------------------------------


def test_samples_are_shipped_in_name_order() -> None:
    assert list(SAMPLES) == [
        "01_basic.json",
        "02_next_sync.json",
        "03_truncate_missing.json",
        "04_history.json",
        "05_schema_changes.json",
    ]


def test_basic_sample_step_order(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    kinds = [(type(s).__name__, getattr(s, "table", None)) for s in steps]
    names = [(k, t if isinstance(t, str) else t.name) for k, t in kinds]
    assert names == [
        ("DescribeStep", "all_types"),
        ("DescribeStep", "events"),
        ("CreateStep", "all_types"),
        ("CreateStep", "events"),
        ("WriteStep", "all_types"),
        ("WriteStep", "events"),
        ("TruncateStep", "events"),
        ("DescribeStep", "all_types"),
        ("DescribeStep", "events"),
    ]


def test_file_naming_one_file_per_table_and_op(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    by_table = writes(steps)
    all_types, events = by_table["all_types"], by_table["events"]
    assert all_types.replace_files == (str(tmp_path / "all_types_01_basic_upsert.csv.zstd.aes"),)
    # update + soft_delete share the update file.
    assert all_types.update_files == (str(tmp_path / "all_types_01_basic_update.csv.zstd.aes"),)
    assert all_types.delete_files == (str(tmp_path / "all_types_01_basic_delete.csv.zstd.aes"),)
    # Two upsert ops (before and after the truncate) still make one replace file.
    assert events.replace_files == (str(tmp_path / "events_01_basic_upsert.csv.zstd.aes"),)
    assert events.update_files == ()
    assert events.delete_files == (str(tmp_path / "events_01_basic_delete.csv.zstd.aes"),)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        Path(f).name for s in by_table.values() for f in s.files
    )


def test_encrypted_mode_params_and_keys(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    for step in writes(steps).values():
        assert step.file_params.compression is Compression.ZSTD
        assert step.file_params.encryption is Encryption.AES
        assert (step.file_params.null_string, step.file_params.unmodified_string) == (NULL, UNMOD)
        # Keyed by the exact string in the file lists, one fresh 32-byte key per file.
        assert set(step.keys) == set(step.files)
        assert all(len(k) == 32 for k in step.keys.values())
    keys = [k for s in writes(steps).values() for k in s.keys.values()]
    assert len(set(keys)) == len(keys)
    assert "keys" not in repr(next(iter(writes(steps).values())))


def test_plain_text_mode(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path, plain_text=True), "01_basic.json")
    step = writes(steps)["events"]
    assert step.file_params.compression is Compression.OFF
    assert step.file_params.encryption is Encryption.NONE
    assert (step.file_params.null_string, step.file_params.unmodified_string) == (NULL, UNMOD)
    assert step.keys == {}
    assert step.replace_files == (str(tmp_path / "events_01_basic_upsert.csv"),)
    text = Path(step.replace_files[0]).read_text()
    assert "ev-1" in text and "signup" in text


def test_system_columns(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    created = {s.table.name: s.table for s in steps if isinstance(s, CreateStep)}
    all_types = created["all_types"]
    assert all_types.key == ("id",)
    assert len([c for c in all_types.columns if not c.name.startswith("_fivetran")]) == 15
    assert {c.type for c in all_types.columns} >= set(DataType) - {DataType.UNSPECIFIED}
    assert all_types.column(SYNCED) == Column(name=SYNCED, type=DataType.UTC_DATETIME)
    assert all_types.column(DELETED) == Column(name=DELETED, type=DataType.BOOLEAN)
    assert all_types.column(FIVETRAN_ID) is None
    decimal = all_types.column("dec_val")
    assert decimal is not None and decimal.decimal is not None
    assert (decimal.decimal.precision, decimal.decimal.scale) == (20, 4)
    events = created["events"]
    assert events.key == (FIVETRAN_ID,)
    assert events.column(FIVETRAN_ID) == Column(
        name=FIVETRAN_ID, type=DataType.STRING, primary_key=True
    )
    assert events.column(DELETED) is not None
    # The WriteBatch carries the same full table.
    assert writes(steps)["events"].table == events


def test_upsert_file_keeps_duplicate_keys_in_file_order(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    step = writes(steps)["all_types"]
    rows = read_rows(step, step.replace_files[0])
    assert [r["id"] for r in rows] == ["1", "2", "3", "2"]
    assert rows[1]["string_val"] == "first version of id 2"
    assert rows[3]["string_val"] == 'second version of id 2: comma, "quotes"\nand a newline'
    assert {r[DELETED] for r in rows} == {"false"}


def test_values_are_written_as_the_json_text(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    step = writes(steps)["all_types"]
    first, second, nulls, _ = read_rows(step, step.replace_files[0])
    assert first["double_val"] == "100.45"
    assert first["float_val"] == "1.5"
    assert first["long_val"] == "9223372036854775807"
    assert first["dec_val"] == "12345678901234.5678"
    assert first["bool_val"] == "true"
    assert first["utc_val"] == "2023-10-27T15:00:00.000Z"
    assert first["json_val"] == '{"k": [1, 2]}'
    assert first["xml_val"] == '<a x="1">one</a>'
    assert second["double_val"] == "-2.2250738585072014E-308"
    assert second["float_val"] == "3.4028235E38"
    assert second["bool_val"] == "false"
    assert second["binary_val"] == ""  # an empty string, not NULL
    assert {v for k, v in nulls.items() if k not in ("id", SYNCED, DELETED)} == {NULL}


def test_update_and_soft_delete_rows(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    step = writes(steps)["all_types"]
    update, soft_delete = read_rows(step, step.update_files[0])
    assert update["id"] == "1"
    assert update["string_val"] == "one, updated"
    assert update["dec_val"] == "99.0001"
    assert update[DELETED] == "false"
    untouched = set(update) - {"id", "string_val", "dec_val", DELETED, SYNCED}
    assert {update[c] for c in untouched} == {UNMOD}
    assert soft_delete["id"] == "3"
    assert soft_delete[DELETED] == "true"
    assert {v for k, v in soft_delete.items() if k not in ("id", DELETED, SYNCED)} == {UNMOD}


def test_delete_rows_hold_null_sentinels(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    step = writes(steps)["events"]
    (row,) = read_rows(step, step.delete_files[0])
    assert row[FIVETRAN_ID] == "ev-2"
    assert row[SYNCED] == format_instant(T0 + 3)
    assert {v for k, v in row.items() if k not in (FIVETRAN_ID, SYNCED)} == {NULL}


def test_synced_times_increase_per_op_and_truncate_uses_the_op_time(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "01_basic.json")
    all_types, events = writes(steps)["all_types"], writes(steps)["events"]
    synced = [
        read_rows(all_types, all_types.replace_files[0])[0][SYNCED],
        *(r[SYNCED] for r in read_rows(all_types, all_types.update_files[0])),
        read_rows(all_types, all_types.delete_files[0])[0][SYNCED],
    ]
    millis = [parse_instant(s) for s in synced]
    assert millis == [T0, T0 + 1, T0 + 2, T0 + 3]
    (truncate,) = [s for s in steps if isinstance(s, TruncateStep)]
    assert truncate.soft_deleted_column is None
    assert truncate.synced_column == SYNCED
    assert truncate.utc_delete_before == datetime.fromtimestamp((T0 + 4) / 1000, tz=UTC)
    # The upsert after the truncate op is newer than the truncate time, so it survives it.
    event_rows = read_rows(events, events.replace_files[0])
    assert [parse_instant(r[SYNCED]) for r in event_rows] == [T0, T0, T0, T0 + 5]


def test_clock_going_backwards_still_gives_increasing_times(tmp_path: Path) -> None:
    ticks = iter([T0 + 10, T0 + 5, T0 + 5, T0 + 20])
    session = Session(workdir=tmp_path, clock=lambda: next(ticks), rng=random.Random(1))
    steps = session.steps(
        {
            "ops": [
                {"truncate_before": ["a"]},
                {"truncate_before": ["a"]},
                {"truncate_before": ["a"]},
                {"truncate_before": ["a"]},
            ]
        },
        input_name="x",
    )
    times = [s.utc_delete_before for s in steps if isinstance(s, TruncateStep)]
    millis = [parse_instant(t.isoformat()) for t in times]
    assert millis == [T0 + 10, T0 + 11, T0 + 12, T0 + 20]


def test_columns_are_shuffled_per_file_and_seeded(tmp_path: Path) -> None:
    def headers(where: Path) -> tuple[list[str], list[list[str]]]:
        (steps,) = load_samples(make_session(where, seed=3), "01_basic.json")
        step = writes(steps)["all_types"]
        return [c.name for c in step.table.columns], [header_of(step, f) for f in step.files]

    table_order, first = headers(tmp_path / "a")
    assert headers(tmp_path / "b")[1] == first  # same seed, same orders
    assert all(sorted(h) == sorted(table_order) for h in first)
    # Each of the three files has its own order, none of them the table's.
    assert len({tuple(h) for h in first} | {tuple(table_order)}) == 4


def test_next_sync_keeps_tables_and_alters(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    _, steps = load_samples(session, "01_basic.json", "02_next_sync.json")
    (alter,) = [s for s in steps if isinstance(s, AlterStep)]
    assert not alter.drop_columns
    assert alter.table.column("note") == Column(name="note", type=DataType.STRING)
    assert alter.table.column(DELETED) is not None
    # events was created by 01 and is written in 02 without a create_table.
    events = writes(steps)["events"]
    assert events.table.key == (FIVETRAN_ID,)
    all_types = writes(steps)["all_types"]
    updates = read_rows(all_types, all_types.update_files[0])
    assert [(r["id"], r[DELETED]) for r in updates] == [
        ("1", "false"),
        ("4", "false"),
        ("404", "false"),
        ("406", "true"),
    ]
    assert updates[0]["note"] == "note for an old row"
    assert [r["id"] for r in read_rows(all_types, all_types.delete_files[0])] == ["5", "405"]
    (truncate,) = [s for s in steps if isinstance(s, TruncateStep)]
    assert (truncate.table, truncate.soft_deleted_column) == ("events", DELETED)


def test_truncate_of_a_missing_table(tmp_path: Path) -> None:
    (steps,) = load_samples(make_session(tmp_path), "03_truncate_missing.json")
    assert [type(s) for s in steps] == [DescribeStep, TruncateStep, DescribeStep]
    assert steps[1] == TruncateStep(
        table="never_created",
        utc_delete_before=datetime.fromtimestamp(T0 / 1000, tz=UTC),
        soft_deleted_column=None,
    )
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Values, definitions and errors
# ---------------------------------------------------------------------------------------------


def test_number_text_is_kept_and_json_objects_are_serialised(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text(
        """{
          "create_table": {"t": {"columns": {"id": "LONG", "j": "JSON",
                                             "d": {"type": "DECIMAL", "precision": "10",
                                                   "scale": "2"}},
                                 "primary_key": ["id"]}},
          "ops": [{"upsert": {"t": [{"id": 12345678901234567,
                                     "j": {"a": 1.50, "b": [true, null, "x"]},
                                     "d": 1.10}]}}]
        }"""
    )
    steps = make_session(tmp_path / "out", plain_text=True).load(path)
    step = writes(steps)["t"]
    assert step.replace_files == (str(tmp_path / "out" / "t_in_upsert.csv"),)
    (row,) = read_rows(step, step.replace_files[0])
    assert row["id"] == "12345678901234567"
    assert row["j"] == '{"a":1.50,"b":[true,null,"x"]}'
    assert row["d"] == "1.10"
    decimal = step.table.column("d")
    assert decimal is not None and decimal.decimal is not None
    assert (decimal.decimal.precision, decimal.decimal.scale) == (10, 2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"ops": [{"upsert": {}, "delete": {}}]}, "exactly one op key"),
        ({"ops": [{"upsert": {"nope": [{"id": 1}]}}]}, "never defined"),
        ({"ops": [{"merge": {}}]}, "unknown op"),
        ({"opz": []}, "unknown top-level"),
        ({"create_table": {"t": {"columns": {"_fivetran_synced": "INT"}}}}, "added by the tester"),
        ({"create_table": {"t": {"columns": {"a": "NUMBER"}}}}, "unknown type"),
        ({"create_table": {"t": {"columns": {"a": "INT"}, "primary_key": ["b"]}}}, "not declared"),
    ],
)
def test_bad_input_is_rejected(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        make_session(tmp_path).steps(data, input_name="bad")


def test_rows_are_checked_against_the_table(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    session.steps(
        {"create_table": {"t": {"columns": {"id": "INT", "v": "STRING"}, "primary_key": ["id"]}}},
        input_name="a",
    )
    with pytest.raises(InputError, match="unknown column"):
        session.steps({"ops": [{"upsert": {"t": [{"id": 1, "w": "x"}]}}]}, input_name="b")
    with pytest.raises(InputError, match="lacks key"):
        session.steps({"ops": [{"update": {"t": [{"v": "x"}]}}]}, input_name="c")


# ---------------------------------------------------------------------------------------------
# History mode
# ---------------------------------------------------------------------------------------------

HISTORY_TABLE = {
    "columns": {"id": "INT", "amount": "DOUBLE", "desc": "STRING"},
    "primary_key": ["id"],
    "history_mode": True,
}


def test_close_versions() -> None:
    assert close_versions([]) == []
    assert close_versions([100]) == [(-1, True)]
    # Out of order input: the result follows the input order.
    assert close_versions([300, 100, 200]) == [(-1, True), (199, False), (299, False)]


def test_history_table_columns(tmp_path: Path) -> None:
    steps = make_session(tmp_path).steps({"create_table": {"h": HISTORY_TABLE}}, input_name="a")
    (create,) = [s for s in steps if isinstance(s, CreateStep)]
    table = create.table
    assert table.key == ("id", HISTORY_START)
    assert table.column(HISTORY_END) == Column(name=HISTORY_END, type=DataType.UTC_DATETIME)
    assert table.column(HISTORY_ACTIVE) == Column(name=HISTORY_ACTIVE, type=DataType.BOOLEAN)
    assert table.column(SYNCED) is not None
    assert table.column(DELETED) is None


def test_history_batch_files(tmp_path: Path) -> None:
    session = make_session(tmp_path, plain_text=True)
    steps = session.steps(
        {
            "create_table": {"h": HISTORY_TABLE},
            "ops": [
                {
                    "upsert": {
                        "h": [
                            {
                                "id": 1,
                                "amount": 1.5,
                                "desc": "a",
                                "op_time": "2005-05-26T20:57:00Z",
                            },
                            {"id": 2, "amount": 2, "desc": "b", "op_time": "2005-05-26T20:57:00Z"},
                        ]
                    }
                },
                {
                    "upsert": {
                        "h": [
                            {"id": 1, "amount": 3, "desc": "c", "op_time": "2005-05-26T20:58:00Z"},
                        ]
                    }
                },
                {"update": {"h": [{"id": 1, "amount": 4, "op_time": "2005-05-27T00:00:00.250Z"}]}},
                {"delete": {"h": [{"id": 3, "op_time": "2005-08-26T20:57:00Z"}]}},
            ],
        },
        input_name="hist",
    )
    (step,) = [s for s in steps if isinstance(s, WriteHistoryStep)]
    assert [Path(f).name for f in step.files] == [
        "h_hist_earliest.csv",
        "h_hist_upsert.csv",
        "h_hist_update.csv",
        "h_hist_delete.csv",
    ]
    earliest = read_rows(step, step.earliest_start_files[0])
    assert sorted(header_of(step, step.earliest_start_files[0])) == sorted(["id", HISTORY_START])
    assert earliest == [
        {"id": "1", HISTORY_START: "2005-05-26T20:57:00Z"},
        {"id": "2", HISTORY_START: "2005-05-26T20:57:00Z"},
    ]
    upserts = read_rows(step, step.replace_files[0])
    assert "op_time" not in upserts[0]
    assert DELETED not in upserts[0]
    versions = [(r["id"], r[HISTORY_START], r[HISTORY_END], r[HISTORY_ACTIVE]) for r in upserts]
    assert versions == [
        # Two versions of id 1: the first ends 1 ms before the second starts.
        ("1", "2005-05-26T20:57:00Z", "2005-05-26T20:57:59.999Z", "false"),
        ("2", "2005-05-26T20:57:00Z", TMAX, "true"),
        ("1", "2005-05-26T20:58:00Z", "2005-05-27T00:00:00.249Z", "false"),
    ]
    (update,) = read_rows(step, step.update_files[0])
    assert (update[HISTORY_START], update[HISTORY_END], update[HISTORY_ACTIVE]) == (
        "2005-05-27T00:00:00.250Z",
        TMAX,
        "true",
    )
    assert (update["amount"], update["desc"]) == ("4", UNMOD)
    (delete,) = read_rows(step, step.delete_files[0])
    assert delete == {
        "id": "3",
        "amount": NULL,
        "desc": NULL,
        SYNCED: format_instant(T0 + 3),
        HISTORY_START: NULL,
        HISTORY_END: "2005-08-26T20:57:00Z",
        HISTORY_ACTIVE: "false",
    }


def test_history_delete_only_batch_has_no_earliest_file(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    session.steps({"create_table": {"h": HISTORY_TABLE}}, input_name="a")
    steps = session.steps(
        {"ops": [{"delete": {"h": [{"id": 1, "op_time": "2005-08-26T20:57:00Z"}]}}]},
        input_name="b",
    )
    (step,) = steps
    assert isinstance(step, WriteHistoryStep)
    assert step.earliest_start_files == () and step.replace_files == ()
    assert step.delete_files == (str(tmp_path / "h_b_delete.csv.zstd.aes"),)


# ---------------------------------------------------------------------------------------------
# schema_migration mapping
# ---------------------------------------------------------------------------------------------


def test_schema_migration_mapping(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    steps = session.steps(
        {
            "create_table": {
                "t": {"columns": {"id": "INT", "a": "DOUBLE", "b": "STRING"}, "primary_key": ["id"]}
            },
            "schema_migration": [
                {
                    "add_column": [{"table": "t", "column": "c", "data_type": "LONG"}],
                    "change_column_data_type": [
                        {"table": "t", "column": "a", "data_type": "FLOAT"}
                    ],
                    "drop_column": [{"table": "t", "column": "b"}],
                },
                {
                    "set_column_to_null": [{"table": "t", "column": "c"}],
                    "update_column_value": [{"table": "t", "column": "a", "value": 202.57}],
                    "add_column_with_default_value": [
                        {
                            "table": "t",
                            "column": "d",
                            "data_type": "UTC_DATETIME",
                            "default_value": "2005-05-28T20:57:00Z",
                        }
                    ],
                    "copy_table": [{"from_table": "t", "to_table": "t2"}],
                    "rename_table": [{"from_table": "t2", "to_table": "t3"}],
                    "migrate_soft_delete_to_history": [
                        {"table": "t3", "deleted_column": "_fivetran_deleted"}
                    ],
                    "drop_table": [{"table": "never_made"}],
                },
            ],
        },
        input_name="m",
    )
    migration = steps[1:]
    add, change, drop = migration[:3]
    assert isinstance(add, AlterStep) and not add.drop_columns
    assert add.table.column("c") == Column(name="c", type=DataType.LONG)
    assert isinstance(change, AlterStep)
    assert change.table.column("a") == Column(name="a", type=DataType.FLOAT)
    assert isinstance(drop, AlterStep) and drop.drop_columns
    assert drop.table.column("b") is None
    details = [s.details for s in migration[3:] if isinstance(s, MigrateStep)]
    assert len(details) == 7
    assert all(d.schema == "tester" for d in details)
    null, value, default, copy, rename, sync_mode, drop_table = details
    assert (null.table, null.update_column_value.column, null.update_column_value.value) == (
        "t",
        "c",
        "NULL",
    )
    assert value.update_column_value.value == "202.57"
    assert default.add.add_column_with_default_value == pb.AddColumnWithDefaultValue(
        column="d", column_type=DataType.UTC_DATETIME.value, default_value="2005-05-28T20:57:00Z"
    )
    assert (copy.table, copy.copy.copy_table.to_table) == ("t", "t2")
    assert (rename.table, rename.rename.rename_table.to_table) == ("t2", "t3")
    assert sync_mode.table_sync_mode_migration.type == pb.SOFT_DELETE_TO_HISTORY
    assert sync_mode.table_sync_mode_migration.soft_deleted_column == DELETED
    assert drop_table.drop.drop_table and drop_table.table == "never_made"
    # The session tracks the definitions for later input files.
    assert set(session.tables) == {"t", "t3"}
    assert [c.name for c in session.tables["t"].columns] == ["id", "a", "c", "d"]
    assert session.tables["t3"].history_mode
    assert all(isinstance(s, DescribeStep | AlterStep | MigrateStep | CreateStep) for s in steps)


# ---------------------------------------------------------------------------------------------
# Client and replay against a fake servicer
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[tuple[FakeServicer, DestinationClient]]:
    servicer = FakeServicer()
    with serving(servicer) as port:
        client = connect(f"127.0.0.1:{port}", timeout=30)
        try:
            yield servicer, client
        finally:
            client.close()


CONFIG = {"warehouse": "/tmp/wh", "catalog": "lake"}


def test_client_truncate_soft_presence_and_millisecond_timestamp(
    fake: tuple[FakeServicer, DestinationClient],
) -> None:
    servicer, client = fake
    when = datetime(2024, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
    client.truncate("t", configuration=CONFIG, schema="s", utc_delete_before=when)
    client.truncate(
        "t", configuration=CONFIG, schema="s", utc_delete_before=when, soft_deleted_column=DELETED
    )
    (_, hard), (_, soft) = servicer.requests
    assert not hard.HasField("soft")
    assert soft.HasField("soft") and soft.soft.deleted_column == DELETED
    for request in (hard, soft):
        assert dict(request.configuration) == CONFIG
        assert (request.schema_name, request.table_name) == ("s", "t")
        assert request.synced_column == SYNCED
        assert request.utc_delete_before.seconds == int(when.timestamp())
        assert request.utc_delete_before.nanos == 678_000_000


def test_timestamp_ms_of_naive_and_pre_epoch_datetimes() -> None:
    assert timestamp_ms(datetime(1970, 1, 1, 0, 0, 1, 1500)).nanos == 1_000_000
    before = timestamp_ms(datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC))
    assert (before.seconds, before.nanos) == (-1, 999_000_000)


def test_client_write_batch_request(fake: tuple[FakeServicer, DestinationClient]) -> None:
    servicer, client = fake
    table = Table(
        name="t",
        columns=(
            Column(name="id", type=DataType.INT, primary_key=True),
            Column(name=SYNCED, type=DataType.UTC_DATETIME),
        ),
    )
    response = client.write_batch(
        table,
        configuration=CONFIG,
        schema="s",
        replace_files=["/x/a.csv.zstd.aes"],
        delete_files=["/x/b.csv.zstd.aes"],
        keys={"/x/a.csv.zstd.aes": b"k" * 32, "/x/b.csv.zstd.aes": b"j" * 32},
    )
    assert response_outcome(response) == ("success", "")
    ((name, request),) = servicer.requests
    assert name == "WriteBatch"
    assert request.table.name == "t" and [c.name for c in request.table.columns] == ["id", SYNCED]
    assert request.table.columns[0].primary_key
    assert list(request.replace_files) == ["/x/a.csv.zstd.aes"]
    assert list(request.update_files) == []
    assert request.keys["/x/b.csv.zstd.aes"] == b"j" * 32
    assert request.file_params == pb.FileParams(
        compression=pb.ZSTD, encryption=pb.AES, null_string=NULL, unmodified_string=UNMOD
    )


def test_response_outcome() -> None:
    assert response_outcome(pb.CapabilitiesResponse()) == ("success", "")
    assert response_outcome(pb.WriteBatchResponse(success=True)) == ("success", "")
    assert response_outcome(pb.WriteBatchResponse(success=False))[0] == "failure"
    assert response_outcome(pb.WriteBatchResponse()) == (
        "failure",
        "the response has no member set",
    )
    assert response_outcome(pb.TruncateResponse(task=common.Task(message="boom"))) == (
        "task",
        "boom",
    )
    assert response_outcome(pb.AlterTableResponse(warning=common.Warning(message="w"))) == (
        "warning",
        "w",
    )
    assert response_outcome(pb.DescribeTableResponse(not_found=True)) == ("not_found", "")
    assert response_outcome(pb.MigrateResponse(unsupported=True)) == ("unsupported", "")
    assert response_outcome(common.TestResponse(failure="bad")) == ("failure", "bad")
    described = pb.DescribeTableResponse(
        table=common.Table(
            name="t", columns=[common.Column(name="id", type=common.INT, primary_key=True)]
        )
    )
    assert response_outcome(described) == ("table", "t(id INT PK)")


def test_replay_samples_through_the_fake(
    fake: tuple[FakeServicer, DestinationClient], tmp_path: Path
) -> None:
    servicer, client = fake
    # The syncs of 01-04 (05 is schema migrations, checked in test_migrate_grpc).
    four = ("01_basic.json", "02_next_sync.json", "03_truncate_missing.json", "04_history.json")
    report = replay(
        [SAMPLES[name] for name in four],
        client=client,
        configuration=CONFIG,
        workdir=tmp_path / "work",
        clock=fixed_clock,
        seed=1,
    )
    assert report.ok, report.text()
    names = [name for name, _ in servicer.requests]
    assert names[:3] == ["Capabilities", "ConfigurationForm", "Test"]
    assert names.count("WriteBatch") == 4
    assert names.count("WriteHistoryBatch") == 1
    # 03 truncates a table that was never created; 04 creates and writes a history table.
    truncate_missing = names.index("Truncate", len(names) - 8)
    assert names[truncate_missing - 1 : truncate_missing + 2] == [
        "DescribeTable",
        "Truncate",
        "DescribeTable",
    ]
    assert names[-4:] == ["DescribeTable", "CreateTable", "WriteHistoryBatch", "DescribeTable"]
    assert all(
        dict(r.configuration) == CONFIG
        for n, r in servicer.requests
        if n not in {"Capabilities", "ConfigurationForm"}
    )
    assert all(r.schema_name == "tester" for n, r in servicer.requests if hasattr(r, "schema_name"))
    # The files existed while WriteBatch ran, and are gone afterwards.
    assert len(servicer.seen_files) == 10
    assert list((tmp_path / "work").iterdir()) == []
    assert set(report.tables) == {"all_types", "events", "price_history"}
    assert "03_truncate_missing.json" in report.text()


def test_replay_stops_at_the_first_task(
    fake: tuple[FakeServicer, DestinationClient], tmp_path: Path
) -> None:
    servicer, client = fake
    servicer.answers["CreateTable"] = lambda _r: pb.CreateTableResponse(
        task=common.Task(message="cannot create")
    )
    report = replay(list(SAMPLES.values()), client=client, configuration=CONFIG, workdir=tmp_path)
    assert not report.ok
    assert report.error is not None and "cannot create" in report.error
    assert report.results[-1].outcome == "task"
    assert [n for n, _ in servicer.requests].count("CreateTable") == 1
    assert list(tmp_path.iterdir()) == []


def test_replay_reports_bad_input_and_removes_its_files(
    fake: tuple[FakeServicer, DestinationClient], tmp_path: Path
) -> None:
    servicer, client = fake
    bad = tmp_path / "bad.json"
    bad.write_text(
        """{"create_table": {"t": {"columns": {"id": "INT"}, "primary_key": ["id"]}},
            "ops": [{"upsert": {"t": [{"id": 1}], "unknown": [{"id": 2}]}}]}"""
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    work = tmp_path / "work"
    report = replay([bad, broken], client=client, configuration=CONFIG, workdir=work)
    assert report.error is not None and "'unknown' was never defined" in report.error
    # t's upsert file was written before the error, and removed all the same.
    assert list(work.iterdir()) == []
    assert "CreateTable" not in [n for n, _ in servicer.requests]
    with pytest.raises(InputError, match="not valid JSON"):
        make_session(tmp_path).load(broken)


def test_replay_stops_when_a_configuration_test_fails(
    fake: tuple[FakeServicer, DestinationClient], tmp_path: Path
) -> None:
    servicer, client = fake
    servicer.answers["Test"] = lambda _r: common.TestResponse(failure="no warehouse")
    report = replay(list(SAMPLES.values()), client=client, configuration=CONFIG, workdir=tmp_path)
    assert report.error == "test 'connect' failed: no warehouse"
    assert [n for n, _ in servicer.requests] == ["Capabilities", "ConfigurationForm", "Test"]


def test_format_rows() -> None:
    text = format_rows(["id", "v"], [(1, None), (22, "a\nb")])
    assert text.splitlines() == [
        "+----+------+",
        "| id | v    |",
        "+----+------+",
        "| 1  | NULL |",
        "| 22 | a\\nb |",
        "+----+------+",
    ]
