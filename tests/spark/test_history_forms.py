"""The history MERGE's full- and filled-versions forms give exactly the table the general form
gives.

The same sequence of WriteHistoryBatch requests (one new version per key per batch) goes to two
tables: one through the engine as it runs (the full-versions form when no value is unmodified,
the filled-versions form when some are), one with the general form forced. The batches cover
every rule: a new version at a stored version's start (that version is replaced), later (the
active one is closed), earliest-start rows alone (newer versions deleted, the survivor closed),
a version older than every stored one (they are deleted), delete rows alone (the active version
ends at the delete time), a new version and a delete of one key in one batch, a new key, and a
re-delivered batch; with unmodified values, each place a value is filled from: the active
version, an older one when the active one is replaced, the newest closed one of a deleted key,
none (a new key, or every stored version replaced).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, FileParams, Table
from spark_destination.core.requests import CreateTableRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.rendered import Statement
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.spark.session import SparkSettings
from tests.support.destination import Lake
from tests.support.requests import batch_request

pytestmark = pytest.mark.spark

PARAMS = FileParams(null_string="NUL", unmodified_string="UNM")
SCHEMA = "history_forms"
COLUMNS = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="v", type=DataType.STRING),
    Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
    Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_active", type=DataType.BOOLEAN),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
)
T = {n: f"2024-01-0{n}T00:00:00Z" for n in range(1, 8)}
TMAX = "9999-12-31T23:59:59.999Z"
SYNCED = "2024-02-01T00:00:00Z"


def version(key: int, value: str, start: int) -> list[str]:
    return [str(key), value, T[start], TMAX, "true", SYNCED]


def deleted(key: int, at: int) -> list[str]:
    return [str(key), "NUL", "NUL", T[at], "false", SYNCED]


def earliest(key: int, start: int) -> list[str]:
    return [str(key), T[start]]


def updated(key: int, value: str, start: int, synced: str = SYNCED) -> list[str]:
    """A new version in an update file; "UNM" leaves a value unmodified."""
    return [str(key), value, T[start], TMAX, "true", synced]


# Each batch: {file kind: rows}. Keys 1..5 exist after the first two batches.
BATCHES: list[dict[str, list[list[str]]]] = [
    {"replace": [version(k, f"a{k}", 1) for k in range(1, 7)]},
    {
        "earliest_start": [earliest(k, 2) for k in (1, 2, 3)],
        "replace": [version(k, f"b{k}", 2) for k in (1, 2, 3)],
    },
    {
        # 1: a new version at the active version's start replaces it; 2: a later version
        # closes it; 3: earliest start alone deletes the newer version, closes the survivor.
        "earliest_start": [earliest(1, 2), earliest(2, 3), earliest(3, 2), earliest(5, 4)],
        "replace": [version(1, "c1", 2), version(2, "c2", 4), version(5, "c5", 4)],
        # 4: deleted (active version ends then); 5: a new version and a delete of it.
        "delete": [deleted(4, 3), deleted(5, 5)],
    },
    {
        "earliest_start": [earliest(5, 6), earliest(7, 6)],
        # 1: a version older than the stored ones, without an earliest-start row (they go).
        "replace": [version(5, "d5", 6), version(7, "d7", 6), version(1, "d1", 1)],  # 7: new
        "delete": [deleted(6, 6)],
    },
]


# With unmodified values (update files), one new version per key per batch.
UPDATE_BATCHES: list[dict[str, list[list[str]]]] = [
    {"replace": [version(k, f"a{k}", 1) for k in range(1, 7)]},
    {
        "earliest_start": [earliest(k, 2) for k in (1, 2, 3)],
        # 1, 3: values from the active version; 2: its synced time.
        "update": [updated(1, "b1", 2), updated(2, "b2", 2, "UNM"), updated(3, "UNM", 2)],
    },
    {
        # 1: the active version (b1) is replaced: the value comes from the one before (a1);
        # 2: from the active version, closed; 8: a new key (NULL); 5: new version, deleted.
        "earliest_start": [earliest(1, 2), earliest(2, 3), earliest(5, 4), earliest(8, 4)],
        "update": [
            updated(1, "UNM", 2),
            updated(2, "UNM", 4),
            updated(5, "UNM", 4, "UNM"),
            updated(8, "UNM", 4),
        ],
        "delete": [deleted(4, 3), deleted(5, 5)],
    },
    {
        # 4: deleted before, so no active version: from its newest (closed) one; 1: older than
        # every stored version, all replaced: nothing to fill from.
        "earliest_start": [earliest(4, 6), earliest(2, 6)],
        "update": [updated(4, "UNM", 6, "UNM"), updated(2, "c2", 6, "UNM"), updated(1, "UNM", 1)],
        "delete": [deleted(6, 6)],
    },
]


def _write(engine: Engine, folder: Path, table: Table, files: dict[str, list[list[str]]]) -> None:
    paths: dict[str, tuple[str, ...]] = {}
    keys: dict[str, bytes] = {}
    for kind, rows in files.items():
        path = folder / f"{table.name}-{len(list(folder.iterdir()))}.csv"
        header = ["id", "_fivetran_start"] if kind == "earliest_start" else None
        keys[str(path)] = new_key()
        write_batch_file(
            path,
            header or [c.name for c in table.columns],
            rows,
            params=PARAMS,
            key=keys[str(path)],
        )
        paths[kind] = (str(path),)
    engine.apply({}, batch_request(SCHEMA, table, paths, params=PARAMS, keys=keys, history=True))


def _rows(lake: Lake, table: Table) -> list[tuple[object, ...]]:
    session = lake.child()  # the root session's catalog caches tables as last loaded
    session.conf.set("spark.sql.session.timeZone", "UTC")
    frame = session.table(qualified(lake.catalog, SCHEMA, table.name))
    return sorted(tuple(r) for r in frame.collect())  # type: ignore[type-var]


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The text of every history MERGE the executor runs."""
    texts: list[str] = []
    original = Executor.sql

    def spy(self: Executor, text: str, **kwargs: object) -> list[tuple[object, ...]]:
        if text.startswith("MERGE INTO"):
            texts.append(text)
        return original(self, text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Executor, "sql", spy)
    yield texts


@pytest.fixture
def history_engine(
    spark: SparkSession, spark_settings: SparkSettings, catalog_configuration: dict[str, str]
) -> Engine:
    """An engine on the shared session whose requests go to the test's catalog."""
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    provider = SessionProvider.shared(spark, parse_config(configuration))
    return Engine(provider, defaults={**configuration, **catalog_configuration})


def _both_ways(
    engine: Engine,
    lake: Lake,
    folder: Path,
    ran: list[str],
    monkeypatch: pytest.MonkeyPatch,
    batches: list[dict[str, list[list[str]]]],
    name: str,
) -> tuple[list[tuple[object, ...]], list[list[str]]]:
    """The batches (the last one twice) through the engine's own choice of form, then through
    the general form; asserts both tables equal. Returns the rows and the engine's MERGEs."""
    chosen = Table(name=f"{name}_chosen", columns=COLUMNS)
    general = Table(name=f"{name}_general", columns=COLUMNS)
    for table in (chosen, general):
        engine.apply({}, CreateTableRequest(schema=SCHEMA, table=table))

    merges: list[list[str]] = []
    for batch in [*batches, batches[-1]]:  # the last one re-delivered
        ran.clear()
        _write(engine, folder, chosen, batch)
        merges.append(list(ran))

    def general_form(
        statement: Statement, batch: object
    ) -> tuple[str | None, dict[str, object] | None]:
        return statement.sql, None

    with monkeypatch.context() as patch:
        patch.setattr(Executor, "_history_form", staticmethod(general_form))
        ran.clear()
        for batch in [*batches, batches[-1]]:
            _write(engine, folder, general, batch)
        assert ran and all("`__sd_all`" in text for text in ran)

    rows = _rows(lake, chosen)
    assert rows == _rows(lake, general)
    return rows, merges


def _by_key(rows: list[tuple[object, ...]]) -> dict[object, list[tuple[object, ...]]]:
    by_key: dict[object, list[tuple[object, ...]]] = {}
    for row in rows:
        by_key.setdefault(row[0], []).append(row)
    return by_key


def test_the_full_versions_form_gives_the_general_forms_table(
    history_engine: Engine,
    lake: Lake,
    tmp_path: Path,
    ran: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows, merges = _both_ways(history_engine, lake, tmp_path, ran, monkeypatch, BATCHES, "full")
    assert [len(m) for m in merges] == [1] * (len(BATCHES) + 1)
    assert all("`__sd_keyed`" in m[0] and "__sd_all" not in m[0] for m in merges)
    by_key = _by_key(rows)
    # Spot checks of the shared outcome (the comparison above is the test).
    assert [(r[1], r[4]) for r in by_key[1]] == [("d1", True)]
    assert [(r[1], r[4]) for r in by_key[2]] == [("a2", False), ("b2", False), ("c2", True)]
    assert [(r[1], r[4]) for r in by_key[3]] == [("a3", False)]
    assert [(r[1], r[4]) for r in by_key[4]] == [("a4", False)]
    assert [(r[1], r[4]) for r in by_key[5]] == [("a5", False), ("c5", False), ("d5", True)]
    assert [(r[1], r[4]) for r in by_key[7]] == [("d7", True)]


def test_the_filled_versions_form_gives_the_general_forms_table(
    history_engine: Engine,
    lake: Lake,
    tmp_path: Path,
    ran: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows, merges = _both_ways(
        history_engine, lake, tmp_path, ran, monkeypatch, UPDATE_BATCHES, "filled"
    )
    assert [len(m) for m in merges] == [1] * (len(UPDATE_BATCHES) + 1)
    # The first batch has no unmodified value (full versions); every later one has some.
    assert "`__sd_keyed`" in merges[0][0]
    assert all("`__sd_newest_stored`" in m[0] and "__sd_all" not in m[0] for m in merges[1:])
    by_key = _by_key(rows)
    # Spot checks of the fills (value, active, synced); the comparison above is the test.
    assert [(r[1], r[4]) for r in by_key[1]] == [(None, True)]
    assert [(r[1], r[4], str(r[5])[:10]) for r in by_key[2]] == [
        ("a2", False, "2024-02-01"),
        ("b2", False, "2024-02-01"),
        ("b2", False, "2024-02-01"),
        ("c2", True, "2024-02-01"),
    ]
    assert [(r[1], r[4]) for r in by_key[3]] == [("a3", False), ("a3", True)]
    assert [(r[1], r[4]) for r in by_key[4]] == [("a4", False), ("a4", True)]
    assert [(r[1], r[4]) for r in by_key[5]] == [("a5", False), ("a5", False)]
    assert [(r[1], r[4]) for r in by_key[8]] == [(None, True)]
