"""A failed request undoes only its own commits, on the Hadoop catalog and a real Hive metastore,
while another writer commits to the same table: a property change or a schema change (commits
without a snapshot, so without a summary saying whose they are) between two statements of the
request, or inside one statement's window (after its commit, before the request reads the table
again). Theirs survive; the request's are left for the retry, which completes. When nothing
foreign happened, the restore is built from the current metadata: the table's last sequence
number does not go back. A table the request dropped is registered again where the catalog
kept its files (the metastore), or the log says it cannot be (the Hadoop catalog)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from spark_destination.dialects.quoting import qualified
from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute import commits, faults
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import CATALOGS, Destination, Lake, column

pytestmark = [
    pytest.mark.spark,
    # The restore does not depend on the write mode; the steps these tests count are merge
    # mode's (deferred mode's AlterTable first flushes the pending rows).
    pytest.mark.one_write_mode,
    pytest.mark.parametrize("catalog_kind", CATALOGS, indirect=True),
]

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
HEADER = [c.name for c in COLUMNS]
# Metadata-only commits: n widened in place, m added, the column metadata set.
WIDENED = [*COLUMNS[:2], column("n", "LONG"), column("m", "STRING")]
# n INT -> STRING cannot change in place: the table is rewritten (a snapshot), then the key and
# the column metadata are set.
REWRITTEN = [*COLUMNS[:2], column("n", "STRING")]
OUTSIDE = "outside.owner"


def _seeded(dest: Destination, name: str = "t") -> None:
    assert dest.create(name, COLUMNS).WhichOneof("response") == "success"
    batch = dest.write_file(HEADER, [["1", "a", "5"], ["2", "b", "6"]])
    assert dest.write(name, COLUMNS, replace=[batch]).WhichOneof("response") == "success"


def _statements(dest: Destination, columns: list[Any]) -> list[faults.Boundary]:
    """The step boundaries of the AlterTable to ``columns``, from a clean run on a table of its
    own."""
    _seeded(dest, "ref")
    with faults.recording() as seen:
        assert dest.alter("ref", columns).WhichOneof("response") == "success"
    return list(seen)


def _rows(lake: Lake, dest: Destination) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"]) for r in lake.rows(dest.schema, "t"))


def _table(lake: Lake, dest: Destination) -> Any:
    ref = TableRef(catalog=lake.catalog, schema=dest.schema, name="t")
    return commits.iceberg_table(lake.child(), ref)


def _sql(lake: Lake, dest: Destination, text: str) -> None:
    lake.child().sql(text.format(t=qualified(lake.catalog, dest.schema, "t"))).collect()


def _set_property(lake: Lake, dest: Destination) -> Callable[[], None]:
    return lambda: _sql(lake, dest, f"ALTER TABLE {{t}} SET TBLPROPERTIES ('{OUTSIDE}'='x')")


def _add_column(lake: Lake, dest: Destination) -> Callable[[], None]:
    return lambda: _sql(lake, dest, "ALTER TABLE {t} ADD COLUMN outside_col STRING")


@pytest.mark.parametrize("theirs", ["property", "schema"])
@pytest.mark.parametrize("where", ["between statements", "inside a statement's window"])
def test_another_writers_metadata_only_commit_survives_a_failed_request(
    theirs: str,
    where: str,
    dest: Destination,
    lake: Lake,
    caplog: pytest.LogCaptureFixture,
) -> None:
    points = _statements(dest, WIDENED)
    last = points[-1].index  # fail before the last statement, after the earlier ones committed
    assert last >= 1, "the AlterTable has a single statement"
    _seeded(dest)
    outside = _set_property(lake, dest) if theirs == "property" else _add_column(lake, dest)
    done: list[str] = []

    def after_first_commit(index: int, table: str) -> None:
        # In the window: the request's statement 0 committed, the request has not read the
        # table again yet.
        if where != "between statements" and index == 0 and table == "t" and not done:
            done.append("outside")
            outside()

    def at_boundary(point: faults.Boundary) -> None:
        if point.index == last and where == "between statements" and "outside" not in done:
            done.append("outside")
            outside()
        if point.index == last and "failed" not in done:
            done.append("failed")
            raise faults.InjectedFault("injected after the request's first commits")

    with (
        caplog.at_level(logging.WARNING, logger="spark_destination.runtime.execute.restore"),
        faults.after_commit(after_first_commit),
        faults.installed(at_boundary),
    ):
        failed = dest.alter("t", WIDENED)
    assert done == ["outside", "failed"], done
    assert failed.WhichOneof("response") == "task", failed
    table = _table(lake, dest)
    if theirs == "property":
        assert str(table.properties().get(OUTSIDE)) == "x"
    else:
        assert "outside_col" in [str(f.name()) for f in table.schema().columns()]
    assert "not restored after the failed request" in caplog.text
    # The retry completes from the table as it is, and theirs still survives.
    assert dest.alter("t", WIDENED).WhichOneof("response") == "success"
    table = _table(lake, dest)
    if theirs == "property":
        assert str(table.properties().get(OUTSIDE)) == "x"
    else:
        assert "outside_col" in [str(f.name()) for f in table.schema().columns()]
    columns = dest.describe("t").table.columns
    described = [(c.name, common.DataType.Name(c.type)) for c in columns]
    assert described[:4] == [("id", "INT"), ("v", "STRING"), ("n", "LONG"), ("m", "STRING")]
    assert _rows(lake, dest) == [(1, "a"), (2, "b")]


def test_a_restore_never_takes_the_sequence_number_back(dest: Destination, lake: Lake) -> None:
    """The request's rewrite (a snapshot, the next sequence number) is undone: the table's
    rows, schema and current snapshot are as before, and its last sequence number is not
    lower than the undone commit's, so the next commit cannot reuse it."""
    points = _statements(dest, REWRITTEN)
    rewrite = next(p.index for p in points if p.op == "RewriteTableOp")
    assert len(points) > rewrite + 1, "nothing runs after the rewrite"
    _seeded(dest)
    before = _table(lake, dest)
    rows = _rows(lake, dest)
    seen: list[int] = []

    def fail_after_the_rewrite(point: faults.Boundary) -> None:
        if point.index == rewrite + 1 and not seen:
            seen.append(int(_table(lake, dest).operations().current().lastSequenceNumber()))
            raise faults.InjectedFault("injected after the rewrite")

    with faults.installed(fail_after_the_rewrite):
        failed = dest.alter("t", REWRITTEN)
    assert failed.WhichOneof("response") == "task", failed
    after = _table(lake, dest)
    assert seen and seen[0] > int(before.operations().current().lastSequenceNumber())
    assert int(after.currentSnapshot().snapshotId()) == int(before.currentSnapshot().snapshotId())
    assert str(after.schema().findField("n").type()) == "int"
    assert int(after.operations().current().lastSequenceNumber()) >= seen[0]
    assert _rows(lake, dest) == rows
    assert dest.alter("t", REWRITTEN).WhichOneof("response") == "success"
    assert int(_table(lake, dest).currentSnapshot().sequenceNumber()) > seen[0]


def test_a_table_the_failed_request_dropped_is_brought_back_or_said_not_to_be(
    dest: Destination,
    lake: Lake,
    catalog_kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A rename is a copy, then the source's drop: a failure after the drop registers the
    source again where the metastore kept its files; the Hadoop catalog deleted them, and the
    log says the table cannot be brought back."""
    _seeded(dest)
    rename = pb.RenameOperation(rename_table=pb.RenameTable(from_table="t", to_table="u"))
    dropped: list[str] = []

    def after_the_drop(index: int, table: str) -> None:
        gone = dest.describe("t").WhichOneof("response") == "not_found"
        if table == "t" and not dropped and gone:
            dropped.append(table)
            raise faults.InjectedFault("injected after the drop")

    request = pb.MigrateRequest(
        configuration=dest.configuration,
        details=pb.MigrationDetails(schema=dest.schema, table="t", rename=rename),
    )
    with (
        caplog.at_level(logging.INFO, logger="spark_destination.runtime.execute.restore"),
        faults.after_commit(after_the_drop),
    ):
        failed = dest.stub.Migrate(request)
    assert dropped, "the request never dropped the table"
    assert failed.WhichOneof("response") == "task", failed
    if catalog_kind == "hive":
        assert "registered" in caplog.text
        assert _rows(lake, dest) == [(1, "a"), (2, "b")]
    else:
        assert "cannot be brought back" in caplog.text
        assert dest.describe("t").WhichOneof("response") == "not_found"
