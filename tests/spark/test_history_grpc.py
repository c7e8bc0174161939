"""WriteHistoryBatch (history mode, SCD type 2) end to end: a gRPC client writes history batch
files the way Fivetran does, the server applies them with one MERGE on local Spark + Iceberg,
and the tables are read back."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import CATALOGS_AND_DELTA, NULL, UNMOD, Destination, Lake, column

pytestmark = [
    pytest.mark.spark,
    # History mode on the Hadoop catalog, on a real Hive metastore, and on Delta tables.
    pytest.mark.parametrize("catalog_kind", CATALOGS_AND_DELTA, indirect=True),
]

TMAX = "9999-12-31T23:59:59.999Z"
START, END = "_fivetran_start", "_fivetran_end"
ACTIVE, SYNCED = "_fivetran_active", "_fivetran_synced"
Files = list[tuple[str, bytes]]
# The tests that also run on Delta in CI (the others with SPARK_DESTINATION_DELTA_ALL=1).
DELTA_IN_CI = {
    "test_seed_001_update_file_fills_unmodified_columns_from_the_previous_version",
    "test_seed_003_three_syncs_a_delete_only_batch_and_truncates",
    "test_all_four_file_kinds_in_one_request_are_one_commit",
    "test_bad_history_input_is_a_clear_task_and_leaves_the_table_unchanged",
    "test_repeated_key_and_start_keeps_the_later_row_and_fills_from_the_earlier_one",
}


def ts(text: str) -> datetime:
    """A stored timestamp as Spark returns it (naive, UTC session time zone)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def minus_ms(text: str) -> datetime:
    return ts(text) - timedelta(milliseconds=1)


def history_columns(*values: common.Column, key: str = "INT") -> list[common.Column]:
    return [
        column("id", key, pk=True),
        *values,
        column(START, "UTC_DATETIME", pk=True),
        column(END, "UTC_DATETIME"),
        column(ACTIVE, "BOOLEAN"),
        column(SYNCED, "UTC_DATETIME"),
    ]


def write_history(
    dest: Destination,
    name: str,
    columns: list[common.Column],
    *,
    earliest: Files = (),
    update: Files = (),
    replace: Files = (),
    delete: Files = (),
) -> pb.WriteBatchResponse:
    files = [*earliest, *update, *replace, *delete]
    params = dest.params()
    return dest.stub.WriteHistoryBatch(
        pb.WriteHistoryBatchRequest(
            configuration=dest.configuration,
            schema_name=dest.schema,
            table=common.Table(name=name, columns=columns),
            keys=dict(files),
            earliest_start_files=[p for p, _ in earliest],
            update_files=[p for p, _ in update],
            replace_files=[p for p, _ in replace],
            delete_files=[p for p, _ in delete],
            file_params=pb.FileParams(
                compression=params.compression.value,
                encryption=params.encryption.value,
                null_string=NULL,
                unmodified_string=UNMOD,
            ),
        )
    )


def ok(response: object) -> None:
    assert response.WhichOneof("response") == "success", response  # type: ignore[attr-defined]


def table_state(lake: Lake, dest: Destination, name: str, values: list[str]) -> set[tuple]:
    return {
        (r["id"], *(r[v] for v in values), r[START], r[END], r[ACTIVE], r[SYNCED])
        for r in lake.rows(dest.schema, name)
    }


T1, T2, T3, T4, T5 = (f"2024-01-0{n}T00:00:00Z" for n in range(1, 6))
S100, S101, S103, S107, S108, S109 = (
    f"2024-02-01T00:00:00.{n}Z" for n in ("100", "101", "103", "107", "108", "109")
)


def test_seed_001_update_file_fills_unmodified_columns_from_the_previous_version(
    dest: Destination, lake: Lake
) -> None:
    columns = history_columns(column("col1", "STRING"), column("col2", "INT"))
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    described = dest.describe("hist")
    assert list(described.table.columns) == columns
    # The starting table: its own versions as a replace file (no earliest file needed).
    ok(
        write_history(
            dest,
            "hist",
            columns,
            replace=[
                dest.write_file(
                    header,
                    [
                        ["1", "abc", "1", T1, "2024-01-01T23:59:59.999Z", "false", S100],
                        ["1", "pqr", "2", T2, TMAX, "true", S101],
                        ["2", "mno", "3", T2, TMAX, "true", S103],
                    ],
                )
            ],
        )
    )
    earliest = dest.write_file(["id", START], [["1", T3], ["2", T4]])
    update = dest.write_file(
        header,
        [
            ["1", "xyz", UNMOD, T3, "2024-01-04T23:59:59.999Z", "false", S107],
            ["1", "def", UNMOD, T5, TMAX, "true", S109],
            ["2", UNMOD, "1000", T4, TMAX, "true", S108],
        ],
    )
    ok(write_history(dest, "hist", columns, earliest=[earliest], update=[update]))
    assert table_state(lake, dest, "hist", ["col1", "col2"]) == {
        (1, "abc", 1, ts(T1), minus_ms(T2), False, ts(S100)),
        (1, "pqr", 2, ts(T2), minus_ms(T3), False, ts(S101)),
        (2, "mno", 3, ts(T2), minus_ms(T4), False, ts(S103)),
        (1, "def", 2, ts(T5), ts(TMAX), True, ts(S109)),
        (1, "xyz", 2, ts(T3), minus_ms(T5), False, ts(S107)),
        (2, "mno", 1000, ts(T4), ts(TMAX), True, ts(S108)),
    }


def test_seed_003_three_syncs_a_delete_only_batch_and_truncates(
    dest: Destination, lake: Lake
) -> None:
    columns = history_columns(column("counter", "INT"), key="STRING")
    header = [c.name for c in columns]
    d1, d2, d3 = "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z", "2020-01-03T00:00:00Z"
    s1, s2, s3 = "2020-01-01T01:00:00Z", "2020-01-02T01:00:00Z", "2020-01-03T01:00:00Z"
    ok(dest.create("hist", columns))
    ok(
        write_history(
            dest,
            "hist",
            columns,
            earliest=[dest.write_file(["id", START], [["a", d1], ["b", d1]])],
            replace=[
                dest.write_file(
                    header, [["a", "10", d1, TMAX, "true", s1], ["b", "20", d1, TMAX, "true", s1]]
                )
            ],
        )
    )
    ok(
        write_history(
            dest,
            "hist",
            columns,
            earliest=[dest.write_file(["id", START], [["a", d2], ["b", d1], ["c", d2]])],
            replace=[
                dest.write_file(
                    header,
                    [
                        ["a", "30", d2, TMAX, "true", s2],
                        ["b", "20", d1, TMAX, "true", s2],
                        ["c", "40", d2, TMAX, "true", s2],
                    ],
                )
            ],
        )
    )
    # Delete-only: no earliest file; start and the other columns carry the null sentinel.
    before = lake.snapshot_count(dest.schema, "hist")
    ok(
        write_history(
            dest,
            "hist",
            columns,
            delete=[
                dest.write_file(
                    header,
                    [
                        ["b", NULL, NULL, d3, "false", s3],
                        ["zz", NULL, NULL, d3, "false", s3],  # unknown key: nothing to close
                    ],
                )
            ],
        )
    )
    assert lake.snapshot_count(dest.schema, "hist") == before + 1
    assert table_state(lake, dest, "hist", ["counter"]) == {
        ("a", 10, ts(d1), minus_ms(d2), False, ts(s1)),
        ("a", 30, ts(d2), ts(TMAX), True, ts(s2)),
        ("b", 20, ts(d1), ts(d3), False, ts(s2)),
        ("c", 40, ts(d2), ts(TMAX), True, ts(s2)),
    }
    # Truncate: a soft one closes the active versions synced before the cut-off and adds no
    # column; a hard one removes the rows synced before the cut-off.
    cut = "2020-01-02T12:00:00Z"
    ok(dest.truncate("hist", datetime.fromisoformat(cut.replace("Z", "+00:00")), soft=True))
    assert [c.name for c in dest.describe("hist").table.columns] == header
    ok(dest.truncate("hist", datetime.fromisoformat("2020-01-01T12:00:00+00:00")))
    assert table_state(lake, dest, "hist", ["counter"]) == {
        ("a", 30, ts(d2), ts(cut), False, ts(s2)),
        ("b", 20, ts(d1), ts(d3), False, ts(s2)),
        ("c", 40, ts(d2), ts(cut), False, ts(s2)),
    }


def test_resync_with_an_earlier_start_removes_the_later_versions(
    dest: Destination, lake: Lake
) -> None:
    columns = history_columns(column("counter", "INT"), key="STRING")
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    ok(
        write_history(
            dest,
            "hist",
            columns,
            replace=[
                dest.write_file(
                    header,
                    [
                        [
                            "a",
                            "10",
                            "2020-01-02T00:00:00Z",
                            "2020-01-02T23:59:59.999Z",
                            "false",
                            T1,
                        ],
                        ["a", "30", "2020-01-03T00:00:00Z", TMAX, "true", T1],
                        ["b", "5", "2020-01-03T00:00:00Z", TMAX, "true", T1],
                    ],
                )
            ],
        )
    )
    ok(
        write_history(
            dest,
            "hist",
            columns,
            earliest=[dest.write_file(["id", START], [["a", "2020-01-01T00:00:00Z"]])],
            replace=[
                dest.write_file(header, [["a", "10", "2020-01-01T00:00:00Z", TMAX, "true", T5]])
            ],
        )
    )
    assert table_state(lake, dest, "hist", ["counter"]) == {
        ("a", 10, ts("2020-01-01T00:00:00Z"), ts(TMAX), True, ts(T5)),
        ("b", 5, ts("2020-01-03T00:00:00Z"), ts(TMAX), True, ts(T1)),
    }


def test_three_versions_in_one_update_file_carry_forward_and_a_retry_changes_nothing(
    dest: Destination, lake: Lake
) -> None:
    columns = history_columns(column("c1", "STRING"), column("c2", "INT"), column("c3", "STRING"))
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    ok(
        write_history(
            dest,
            "hist",
            columns,
            replace=[
                dest.write_file(
                    header,
                    [
                        ["1", "A", "1", "X", T1, TMAX, "true", S100],
                    ],
                )
            ],
        )
    )
    t2, t3, t4 = "2024-01-02T00:00:00.123456789Z", "2024-01-03T00:00:00Z", "2024-01-04T00:00:00Z"
    earliest = dest.write_file(["id", START], [["1", t2], ["2", t3]])
    update = dest.write_file(
        header,
        [
            # Deliberately out of start order in the file: filling follows _fivetran_start.
            ["1", UNMOD, UNMOD, NULL, t4, TMAX, "true", S109],
            ["1", "B", UNMOD, UNMOD, t2, "2024-01-02T23:59:59.999Z", "false", S107],
            ["1", UNMOD, "2", UNMOD, t3, "2024-01-03T23:59:59.999Z", "false", S108],
            ["2", UNMOD, "7", UNMOD, t3, TMAX, "true", S108],  # no earlier version: NULLs
        ],
    )
    ok(write_history(dest, "hist", columns, earliest=[earliest], update=[update]))
    expected = {
        (1, "A", 1, "X", ts(T1), ts("2024-01-02T00:00:00.122456Z"), False, ts(S100)),
        (
            1,
            "B",
            1,
            "X",
            ts("2024-01-02T00:00:00.123456Z"),
            ts("2024-01-02T23:59:59.999Z"),
            False,
            ts(S107),
        ),
        (1, "B", 2, "X", ts(t3), ts("2024-01-03T23:59:59.999Z"), False, ts(S108)),
        (1, "B", 2, None, ts(t4), ts(TMAX), True, ts(S109)),
        (2, None, 7, None, ts(t3), ts(TMAX), True, ts(S108)),
    }
    assert table_state(lake, dest, "hist", ["c1", "c2", "c3"]) == expected
    # Fivetran retries a request whose answer it did not get: the table must not change.
    ok(write_history(dest, "hist", columns, earliest=[earliest], update=[update]))
    assert table_state(lake, dest, "hist", ["c1", "c2", "c3"]) == expected


def test_all_four_file_kinds_in_one_request_are_one_commit(dest: Destination, lake: Lake) -> None:
    columns = history_columns(column("col1", "STRING"), column("col2", "INT"))
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    ok(
        write_history(
            dest,
            "hist",
            columns,
            replace=[
                dest.write_file(
                    header,
                    [
                        ["1", "one", "1", T1, TMAX, "true", S100],
                        ["2", "two", "2", T1, TMAX, "true", S100],
                        ["3", "three", "3", T1, TMAX, "true", S100],
                    ],
                )
            ],
        )
    )
    t6, t7 = "2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z"
    before = lake.snapshot_count(dest.schema, "hist")
    response = write_history(
        dest,
        "hist",
        columns,
        earliest=[dest.write_file(["id", START], [["1", T5], ["2", T5], ["4", T5]])],
        update=[dest.write_file(header, [["1", UNMOD, "10", T5, TMAX, "true", S107]])],
        replace=[
            dest.write_file(
                header,
                [
                    ["2", "two-a", "20", T5, "2024-01-05T23:59:59.999Z", "false", S108],
                    ["2", "two-b", "21", t6, TMAX, "true", S108],
                    ["4", "four", "4", T5, TMAX, "true", S108],
                ],
            )
        ],
        delete=[
            dest.write_file(
                header,
                [
                    ["4", NULL, NULL, NULL, t7, "false", S109],  # closes the version inserted above
                    ["3", NULL, NULL, NULL, t7, "false", S109],  # closes the stored active version
                ],
            )
        ],
    )
    ok(response)
    assert lake.snapshot_count(dest.schema, "hist") == before + 1
    assert table_state(lake, dest, "hist", ["col1", "col2"]) == {
        (1, "one", 1, ts(T1), minus_ms(T5), False, ts(S100)),
        (1, "one", 10, ts(T5), ts(TMAX), True, ts(S107)),
        (2, "two", 2, ts(T1), minus_ms(T5), False, ts(S100)),
        (2, "two-a", 20, ts(T5), minus_ms(t6), False, ts(S108)),
        (2, "two-b", 21, ts(t6), ts(TMAX), True, ts(S108)),
        (3, "three", 3, ts(T1), ts(t7), False, ts(S100)),
        (4, "four", 4, ts(T5), ts(t7), False, ts(S108)),
    }


def test_bad_history_input_is_a_clear_task_and_leaves_the_table_unchanged(
    dest: Destination, lake: Lake
) -> None:
    columns = history_columns(column("col1", "STRING"), column("col2", "INT"))
    header = [c.name for c in columns]
    ok(dest.create("hist", columns))
    ok(
        write_history(
            dest,
            "hist",
            columns,
            replace=[dest.write_file(header, [["1", "one", "1", T1, TMAX, "true", S100]])],
        )
    )
    state = table_state(lake, dest, "hist", ["col1", "col2"])
    snapshots = lake.snapshot_count(dest.schema, "hist")
    earliest = dest.write_file(["id", START], [["1", T2]])

    uncastable = write_history(
        dest,
        "hist",
        columns,
        earliest=[earliest],
        update=[dest.write_file(header, [["1", UNMOD, "not-a-number", T2, TMAX, "true", S101]])],
    )
    assert uncastable.WhichOneof("response") == "task"
    assert "'col2'" in uncastable.task.message and "not-a-number" not in uncastable.task.message

    no_start = write_history(
        dest,
        "hist",
        columns,
        earliest=[earliest],
        replace=[dest.write_file(header, [["1", "x", "2", NULL, TMAX, "true", S101]])],
    )
    assert no_start.WhichOneof("response") == "task"
    assert "'_fivetran_start'" in no_start.task.message

    unknown = write_history(
        dest, "hist", [*columns, column("ghost", "STRING")], earliest=[earliest]
    )
    assert unknown.WhichOneof("response") == "task" and "'ghost'" in unknown.task.message

    path, key = earliest
    wrong_key = write_history(dest, "hist", columns, earliest=[(path, bytes(32))])
    assert wrong_key.WhichOneof("response") == "task"

    missing = write_history(dest, "hist", columns, earliest=[(path + ".gone", key)])
    assert missing.WhichOneof("response") == "task"

    assert table_state(lake, dest, "hist", ["col1", "col2"]) == state
    assert lake.snapshot_count(dest.schema, "hist") == snapshots


def test_repeated_key_and_start_keeps_the_later_row_and_fills_from_the_earlier_one(
    dest: Destination, lake: Lake
) -> None:
    """Rows of one key and start in a batch: the later staged row wins, and its unmodified
    columns carry the earlier row's values; a batch without earliest-start file ends each
    key's rows with a new version (nothing after it in window order)."""
    columns = history_columns(column("c1", "STRING"), column("c2", "INT"))
    header = [c.name for c in columns]
    ok(dest.create("hist_dup", columns))
    # The table's own MERGE distribution mode is respected (no session override).
    lake.child().sql(
        f"ALTER TABLE `{lake.catalog}`.`{dest.schema}`.`hist_dup` "
        "SET TBLPROPERTIES ('write.merge.distribution-mode' = 'hash')"
    )
    ok(
        write_history(
            dest,
            "hist_dup",
            columns,
            replace=[
                dest.write_file(
                    header,
                    [
                        ["1", "A", "1", T1, TMAX, "true", S100],
                        ["2", "P", "5", T1, TMAX, "true", S100],
                    ],
                )
            ],
        )
    )
    update = dest.write_file(
        header,
        [
            ["1", "B", UNMOD, T2, TMAX, "true", S101],
            ["1", UNMOD, "3", T2, TMAX, "true", S103],  # same key and start: this one wins
            ["2", UNMOD, UNMOD, T2, TMAX, "true", S103],
        ],
    )
    ok(write_history(dest, "hist_dup", columns, update=[update]))
    assert table_state(lake, dest, "hist_dup", ["c1", "c2"]) == {
        (1, "A", 1, ts(T1), minus_ms(T2), False, ts(S100)),
        (1, "B", 3, ts(T2), ts(TMAX), True, ts(S103)),
        (2, "P", 5, ts(T1), minus_ms(T2), False, ts(S100)),
        (2, "P", 5, ts(T2), ts(TMAX), True, ts(S103)),
    }
