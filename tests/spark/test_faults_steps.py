"""A failure injected at every step boundary of every request type (after staging, between
statements, just before the committing statement) leaves every table the request touches exactly
as before it — rows, DescribeTable, Iceberg snapshot ids and current snapshot — and the retry
then gives what a run with no fault gives.

Each scenario runs twice on one gRPC server: once cleanly in schema A (recording the boundaries
its plan reaches), then in schema B with a fault injected at each boundary in turn, then retried
without a fault; B must then equal A.

In deferred write mode (``SPARK_DESTINATION_WRITE_MODE=deferred``) a WriteBatch's steps are
staging and the append to the intermediate table, and the tables are compared after a flush (as
merge mode would have them). A request other than a deferred WriteBatch first merges the table's
pending rows (a flush of its own); a fault in that flush must leave the table and its pending
rows exactly as they were, and the retry must converge (the last test, always in deferred mode).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.deferred import MARKER_PROPERTY
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import NULL, PENDING_PREFIX, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark

SYNCED, DELETED = "_fivetran_synced", "_fivetran_deleted"
START, END, ACTIVE = "_fivetran_start", "_fivetran_end", "_fivetran_active"
TMAX = "9999-12-31T23:59:59.999Z"

COLUMNS = [
    column("id", "INT", pk=True),
    column("n", "INT"),
    column("s", "STRING"),
    column(SYNCED, "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
HISTORY = [
    column("id", "INT", pk=True),
    column("v", "STRING"),
    column(START, "UTC_DATETIME", pk=True),
    column(END, "UTC_DATETIME"),
    column(ACTIVE, "BOOLEAN"),
    column(SYNCED, "UTC_DATETIME"),
]

Files = dict[str, tuple[str, bytes]]


@dataclass(frozen=True)
class Scenario:
    """``prepare`` writes the batch files once; ``setup`` builds the starting tables in a schema;
    ``request`` sends the request under test; ``tables`` are the tables it touches."""

    prepare: Callable[[Destination], Files]
    setup: Callable[[Destination, Files], None]
    request: Callable[[Destination, Files], Any]
    tables: tuple[str, ...] = ("t",)


def _ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def _base_files(dest: Destination) -> Files:
    return {
        "seed": dest.write_file(
            HEADER,
            [[str(i), str(i * 10), f"s{i}", f"2024-01-0{i}T00:00:00Z"] for i in range(1, 6)],
        )
    }


def _seed(dest: Destination, files: Files) -> None:
    _ok(dest.create("t", COLUMNS))
    _ok(dest.write("t", COLUMNS, replace=[files["seed"]]))


def _write_files(dest: Destination) -> Files:
    files = _base_files(dest)
    files["replace"] = dest.write_file(HEADER, [["6", "60", "s6", "2024-02-01T00:00:00Z"]])
    files["update"] = dest.write_file(HEADER, [["2", "99", UNMOD, "2024-02-01T00:00:00Z"]])
    files["delete"] = dest.write_file(HEADER, [["3", NULL, NULL, "2024-02-01T00:00:00Z"]])
    return files


def _write(dest: Destination, files: Files) -> Any:
    return dest.write(
        "t", COLUMNS, replace=[files["replace"]], update=[files["update"]], delete=[files["delete"]]
    )


def _history_files(dest: Destination) -> Files:
    header = [c.name for c in HISTORY]
    return {
        "seed": dest.write_file(
            header,
            [
                ["1", "a", "2024-01-01T00:00:00Z", TMAX, "true", "2024-01-01T00:00:00Z"],
                ["2", "b", "2024-01-01T00:00:00Z", TMAX, "true", "2024-01-01T00:00:00Z"],
            ],
        ),
        "earliest": dest.write_file(["id", START], [["1", "2024-01-03T00:00:00Z"]]),
        "update": dest.write_file(
            header, [["1", "c", "2024-01-03T00:00:00Z", TMAX, "true", "2024-01-03T00:00:00Z"]]
        ),
    }


def _history(dest: Destination, files: Files, *, earliest: bool, seed: bool) -> Any:
    names = ("earliest", "update") if earliest else ("seed",)
    keyed = [files[n] for n in names]
    params = dest.params()
    return dest.stub.WriteHistoryBatch(
        pb.WriteHistoryBatchRequest(
            configuration=dest.configuration,
            schema_name=dest.schema,
            table=common.Table(name="h", columns=HISTORY),
            keys=dict(keyed),
            earliest_start_files=[files["earliest"][0]] if earliest else [],
            update_files=[files["update"][0]] if earliest else [],
            replace_files=[files["seed"][0]] if seed else [],
            file_params=pb.FileParams(
                compression=params.compression.value,
                encryption=params.encryption.value,
                null_string=NULL,
                unmodified_string=UNMOD,
            ),
        )
    )


def _history_setup(dest: Destination, files: Files) -> None:
    _ok(dest.create("h", HISTORY))
    _ok(_history(dest, files, earliest=False, seed=True))


def _seed_soft_deleted(dest: Destination, files: Files) -> None:
    _seed(dest, files)
    _ok(dest.truncate("t", _ts("2024-01-02T00:00:00Z"), soft=True))


def _migrate(**operation: Any) -> Callable[[Destination, Files], Any]:
    def send(dest: Destination, files: Files) -> Any:
        return dest.stub.Migrate(
            pb.MigrateRequest(
                configuration=dest.configuration,
                details=pb.MigrationDetails(schema=dest.schema, table="t", **operation),
            )
        )

    return send


_ALTERED = [
    column("id", "INT", pk=True),
    column("n", "STRING"),  # INT -> STRING: a rewrite
    column("s", "STRING", pk=True),  # joins the key: checks, then identifier fields
    column(SYNCED, "UTC_DATETIME"),
    column("extra", "LONG"),  # added
]

SCENARIOS: dict[str, Scenario] = {
    "create_table": Scenario(
        prepare=lambda d: {},
        setup=lambda d, f: None,
        request=lambda d, f: d.create("t", COLUMNS),
    ),
    "write_batch": Scenario(prepare=_write_files, setup=_seed, request=_write),
    "write_history_batch": Scenario(
        prepare=_history_files,
        setup=_history_setup,
        request=lambda d, f: _history(d, f, earliest=True, seed=False),
        tables=("h",),
    ),
    "truncate_soft_new_column": Scenario(
        prepare=_base_files,
        setup=_seed,
        request=lambda d, f: d.truncate("t", _ts("2024-01-03T00:00:00Z"), soft=True),
    ),
    "alter_table": Scenario(
        prepare=_base_files, setup=_seed, request=lambda d, f: d.alter("t", _ALTERED)
    ),
    "migrate_rename_table": Scenario(
        prepare=_base_files,
        setup=_seed,
        request=_migrate(
            rename=pb.RenameOperation(rename_table=pb.RenameTable(from_table="t", to_table="u"))
        ),
        tables=("t", "u"),
    ),
    "migrate_copy_table": Scenario(
        prepare=_base_files,
        setup=_seed,
        request=_migrate(
            copy=pb.CopyOperation(copy_table=pb.CopyTable(from_table="t", to_table="c"))
        ),
        tables=("t", "c"),
    ),
    "migrate_add_column_default": Scenario(
        prepare=_base_files,
        setup=_seed,
        request=_migrate(
            add=pb.AddOperation(
                add_column_with_default_value=pb.AddColumnWithDefaultValue(
                    column="d", column_type=common.INT, default_value="7"
                )
            )
        ),
    ),
    "migrate_soft_delete_to_history": Scenario(
        prepare=_base_files,
        setup=_seed_soft_deleted,
        request=_migrate(
            table_sync_mode_migration=pb.TableSyncModeMigrationOperation(
                type=pb.SOFT_DELETE_TO_HISTORY, soft_deleted_column=DELETED
            )
        ),
    ),
}


def _ts(text: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def state(dest: Destination, lake: Lake, tables: tuple[str, ...]) -> dict[str, Any]:
    """Everything a fault must not change: DescribeTable, rows, snapshot ids, current one."""
    lake.settle()  # deferred mode: the tables as merge mode would have them
    return stored(dest, lake, tables)


def stored(dest: Destination, lake: Lake, tables: tuple[str, ...]) -> dict[str, Any]:
    """``state`` as stored, without a flush first."""
    found: dict[str, Any] = {}
    for name in tables:
        described = dest.describe(name)
        if described.WhichOneof("response") != "table":
            found[name] = None
            continue
        found[name] = {"described": str(described.table), **_contents(dest, lake, name)}
    return found


def _contents(dest: Destination, lake: Lake, name: str) -> dict[str, Any]:
    """A table's rows, and its commits as Iceberg keeps them (snapshot ids, the current one)
    or, on Delta, its properties: a Delta restore is a commit of its own, so the versions grow
    while the rows, the description and the properties (the table's metadata, which a restore
    puts back too) are as they were."""
    session = lake.child()
    table = qualified(lake.catalog, dest.schema, name)
    frame = session.table(table)
    # As text: PySpark cannot turn the minimum timestamp (0001-01-01) into a datetime.
    frame = frame.selectExpr(*(f"CAST(`{c}` AS STRING)" for c in frame.columns))
    rows = sorted(tuple(r) for r in frame.collect())
    if lake.on_delta:
        shown = session.sql(f"SHOW TBLPROPERTIES {table}").collect()
        # A failed flush leaves its record on the intermediate table by design: the next
        # flush reads it, finds the MERGE undone in the table's log and runs again.
        properties = sorted(tuple(r) for r in shown if r[0] != MARKER_PROPERTY)
        return {"rows": rows, "properties": properties}
    snapshots = [
        (r[0], r[1])
        for r in session.sql(
            f"SELECT snapshot_id, operation FROM {table}.snapshots ORDER BY committed_at"
        ).collect()
    ]
    current = session.sql(
        f"SELECT snapshot_id FROM {table}.history WHERE is_current_ancestor "
        "ORDER BY made_current_at DESC LIMIT 1"
    ).collect()
    return {"rows": rows, "snapshots": snapshots, "current": current[0][0] if current else None}


def comparable(found: dict[str, Any]) -> dict[str, Any]:
    """A state without snapshot ids (two schemas never share them), for clean-run comparison."""
    return {
        name: None if value is None else {**value, **_without_ids(value)}
        for name, value in found.items()
    }


def _without_ids(value: dict[str, Any]) -> dict[str, Any]:
    if "snapshots" not in value:
        return {}
    return {"snapshots": [op for _, op in value["snapshots"]], "current": None}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_fault_at_every_step_boundary_changes_nothing_and_the_retry_converges(
    name: str, dest: Destination, lake: Lake
) -> None:
    scenario = SCENARIOS[name]
    files = scenario.prepare(dest)
    clean, faulty = dest, replace(dest, schema=dest.schema + "_f")

    scenario.setup(clean, files)
    # Deferred mode: the setup's pending rows are merged first here as in schema B, so the
    # boundaries are those of the request's own plan (its flush: the test below).
    lake.settle()
    with faults.recording() as seen:
        _ok(scenario.request(clean, files))
    expected = comparable(state(clean, lake, scenario.tables))
    boundaries = list(dict.fromkeys(b.name for b in seen))
    assert boundaries, f"{name}: its plan has one statement; nothing to inject between"
    print(f"{name}: {len(boundaries)} fault point(s): {', '.join(boundaries)}")

    scenario.setup(faulty, files)
    before = state(faulty, lake, scenario.tables)
    for point in boundaries:
        with faults.inject(point) as hits:
            response = scenario.request(faulty, files)
        assert hits, f"{name}: boundary {point} was not reached"
        assert response.WhichOneof("response") == "task", (point, response)
        assert "injected fault" in response.task.message
        assert state(faulty, lake, scenario.tables) == before, f"{name}: changed at {point}"
    _ok(scenario.request(faulty, files))
    assert comparable(state(faulty, lake, scenario.tables)) == expected


# The scenarios whose request, in deferred mode, first merges rows the setup left pending.
FLUSHING_FIRST = (
    "alter_table",
    "migrate_add_column_default",
    "migrate_copy_table",
    "migrate_rename_table",
    "truncate_soft_new_column",
)


@pytest.mark.parametrize("dest", ["deferred"], indirect=True)
@pytest.mark.parametrize("name", FLUSHING_FIRST)
def test_a_fault_in_the_flush_a_request_runs_first_keeps_the_pending_rows(
    name: str, dest: Destination, lake: Lake
) -> None:
    """Deferred mode: the request's flush fails before its clean-up, after its MERGE; the
    table and its intermediate table are restored, the request answers a task, and the retry
    flushes and converges."""
    scenario = SCENARIOS[name]
    files = scenario.prepare(dest)
    clean, faulty = dest, replace(dest, schema=dest.schema + "_f")
    scenario.setup(clean, files)
    _ok(scenario.request(clean, files))
    expected = comparable(state(clean, lake, scenario.tables))

    scenario.setup(faulty, files)
    pending = PENDING_PREFIX + "t"
    before = stored(faulty, lake, scenario.tables), _contents(faulty, lake, pending)
    assert len(before[1]["rows"]) == 5 and before[0]["t"]["rows"] == []
    with faults.inject("before 1:ClearPendingOp", table="t") as hits:
        response = scenario.request(faulty, files)
    assert hits, f"{name}: its request did not flush first"
    assert response.WhichOneof("response") == "task", response
    assert "injected fault" in response.task.message
    assert (stored(faulty, lake, scenario.tables), _contents(faulty, lake, pending)) == before
    _ok(scenario.request(faulty, files))
    assert comparable(state(faulty, lake, scenario.tables)) == expected


def test_the_hook_is_off_by_default() -> None:
    assert faults._hook is None
    faults.boundary(1, object())  # no hook: nothing happens
    assert faults._point_hook is None
    faults.point(faults.FLUSH_RECORDED, "t")  # nor at a named point
