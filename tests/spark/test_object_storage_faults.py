"""Faults on S3: the object store (SeaweedFS, with the REST catalog it serves) stops in the
middle of a request, and starts again after the request answered.

The store is stopped from inside the request, at the step boundary before the statement that
commits (``faults.installed``: the statement then runs against a store that is down), so every
run hits the same point. Each request must answer within a bounded time (the retry budget for a
service that does not answer), with gRPC status UNAVAILABLE naming the table (Fivetran retries
it), and leave the table exactly as it was; once the store is back, the same request
(Fivetran's retry) gives the table a clean run gives, and the destination serves on without a
restart. A deferred-mode server process SIGKILLed in its flush on S3 hands over to the next
one with nothing lost and nothing applied twice. The store here is a server of this module's
own (the run's shared one keeps serving the other tests).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest

from spark_destination.core.config import parse_config
from spark_destination.core.errors import DestinationError, RetryableError
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine
from spark_destination.local_services.object_store import ObjectStore, object_store
from spark_destination.local_services.server_process import start_server
from spark_destination.planner.maintenance import MaintenancePolicy
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.retry_policy import RetryPolicy
from spark_destination.runtime.spark.provider import settings_for
from spark_destination.runtime.spark.session import register_catalog
from tests.spark.test_history_grpc import START, TMAX, history_columns, write_history
from tests.support.destination import NULL, PENDING_PREFIX, UNMOD, Destination, Lake, column
from tests.support.kill_at import KILL_AT
from tests.support.retries import short_retries

pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
HEADER = [c.name for c in COLUMNS]
# A request on a store that is down must answer within this (no endless retries): the
# budget below, plus the AWS SDK's and the REST client's own retries of each attempt.
ANSWER_WITHIN_S = 300.0
# The store stays down until the request answers: a budget of seconds keeps the module short.
OUTAGE_RETRIES = RetryPolicy(unavailable_seconds=10.0, first_pause_seconds=0.5)


@pytest.fixture(autouse=True)
def _short_outage_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    short_retries(monkeypatch, OUTAGE_RETRIES)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    with object_store(tmp_path_factory.mktemp("s3_faults")) as running:
        yield running


@pytest.fixture
def fdest(stub: Any, tmp_path: Path, store: ObjectStore) -> Destination:
    return Destination(
        stub=stub,
        workdir=tmp_path,
        configuration={"catalog": "rsfault", **store.rest_configuration()},
        schema=f"f_{uuid.uuid4().hex[:8]}",
    )


@pytest.fixture
def flake(spark: Any, engine: Engine, fdest: Destination) -> Lake:
    spec = settings_for(parse_config(fdest.configuration)).catalog_spec
    return Lake(
        session=spark,
        catalog=spec.name,
        flush=engine.flush_pending,
        prepare=lambda session: register_catalog(session, spec),
    )


def _ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def _rows(lake: Lake, dest: Destination, table: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) for r in lake.rows(dest.schema, table))


def _last_boundary(run: Callable[[], Any]) -> tuple[Any, str]:
    """``run``'s result and the last step boundary it passed (before its committing step)."""
    with faults.recording() as seen:
        result = run()
    assert seen, "the request has one statement: no boundary to stop the store at"
    return result, seen[-1].name


def _store_down_at(store: ObjectStore, point: str, run: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``run`` with the store stopped when it reaches ``point`` (a step boundary's name,
    or a named point such as ``faults.FLUSH_RECORDED``); the result (or the exception) and the
    seconds it took. The store is started again afterwards."""
    hits: list[str] = []

    def reached(name: str) -> None:
        if name == point and not hits:
            hits.append(point)
            store.stop()

    started = time.monotonic()
    try:
        with (
            faults.installed(lambda boundary: reached(boundary.name)),
            faults.at_points(lambda name, _table: reached(name)),
        ):
            try:
                result: Any = run()
            except (DestinationError, grpc.RpcError) as exc:
                result = exc
    finally:
        seconds = time.monotonic() - started
        if hits:
            store.restart()
    assert hits, f"boundary {point} was not reached"
    print(f"answered {seconds:.1f} s after the request began, the store stopped at {point}")
    assert seconds < ANSWER_WITHIN_S, seconds
    return result, seconds


def _failed(error: Any, table: str) -> str:
    """The request ended with what Fivetran retries: gRPC UNAVAILABLE, naming the table."""
    assert isinstance(error, grpc.Call), error
    assert error.code() == grpc.StatusCode.UNAVAILABLE, (error.code(), error.details())
    assert f"'{table}'" in error.details(), error.details()
    print(f"the status: {error.details()}")
    return str(error.details())


def test_a_write_batch_while_the_store_is_down_fails_and_changes_nothing(
    fdest: Destination, flake: Lake, store: ObjectStore
) -> None:
    _ok(fdest.create("t", COLUMNS))
    seed = fdest.write_file(HEADER, [[str(i), f"v{i}", str(i)] for i in range(50)])
    _ok(fdest.write("t", COLUMNS, replace=[seed]))
    before = _rows(flake, fdest, "t")
    upsert = fdest.write_file(HEADER, [["1", "new", "100"], ["99", "added", "99"]])
    update = fdest.write_file(HEADER, [["2", "changed", UNMOD]])

    def request() -> Any:
        return fdest.write("t", COLUMNS, replace=[upsert], update=[update])

    # A clean run in a schema of its own gives the reference and the boundary to stop at.
    clean = Destination(
        stub=fdest.stub, workdir=fdest.workdir, configuration=fdest.configuration,
        schema=fdest.schema + "_ref",
    )  # fmt: skip
    _ok(clean.create("t", COLUMNS))
    _ok(clean.write("t", COLUMNS, replace=[seed]))
    response, point = _last_boundary(
        lambda: clean.write("t", COLUMNS, replace=[upsert], update=[update])
    )
    _ok(response)
    expected = _rows(flake, clean, "t")

    response, _ = _store_down_at(store, point, request)
    _failed(response, "t")
    assert _rows(flake, fdest, "t") == before
    _ok(request())  # Fivetran's retry, the store back, no restart of the destination
    assert _rows(flake, fdest, "t") == expected


def test_a_history_batch_while_the_store_is_down_fails_and_changes_nothing(
    fdest: Destination, flake: Lake, store: ObjectStore
) -> None:
    columns = history_columns(column("v", "STRING"))
    header = [c.name for c in columns]
    t1, t2 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"
    clean = Destination(
        stub=fdest.stub, workdir=fdest.workdir, configuration=fdest.configuration,
        schema=fdest.schema + "_ref",
    )  # fmt: skip
    first = fdest.write_file(
        header, [["1", "a", t1, TMAX, "true", t1], ["2", "x", t1, TMAX, "true", t1]]
    )
    earliest = fdest.write_file(["id", START], [["1", t2]])
    second = fdest.write_file(header, [["1", "b", t2, TMAX, "true", t2]])
    for dest in (clean, fdest):
        _ok(dest.create("h", columns))
        _ok(write_history(dest, "h", columns, replace=[first]))
    response, point = _last_boundary(
        lambda: write_history(clean, "h", columns, earliest=[earliest], replace=[second])
    )
    _ok(response)
    expected = _rows(flake, clean, "h")
    before = _rows(flake, fdest, "h")

    def request() -> Any:
        return write_history(fdest, "h", columns, earliest=[earliest], replace=[second])

    response, _ = _store_down_at(store, point, request)
    _failed(response, "h")
    assert _rows(flake, fdest, "h") == before
    _ok(request())
    assert _rows(flake, fdest, "h") == expected


def _stored(lake: Lake, schema: str, table: str) -> Counter[tuple[Any, ...]]:
    """The table's rows as they are stored (no flush first, unlike ``Lake.rows``), a multiset."""
    frame = lake.child().table(qualified(lake.catalog, schema, table))
    return Counter(tuple(r) for r in frame.collect())


def _pending(lake: Lake, dest: Destination, table: str) -> Counter[tuple[Any, ...]]:
    """The table's intermediate table (its pending batches) as stored, a multiset."""
    return _stored(lake, dest.schema, PENDING_PREFIX + table)


def test_a_flush_while_the_store_is_down_keeps_the_pending_rows_and_applies_them_once_after(
    fdest: Destination, flake: Lake, store: ObjectStore, engine: Engine
) -> None:
    deferred = {**fdest.configuration, "write_mode": "deferred", "merge_interval_ms": "-1"}
    dests = [
        Destination(stub=fdest.stub, workdir=fdest.workdir, configuration=deferred, schema=schema)
        for schema in (fdest.schema + "_ref", fdest.schema)
    ]
    for dest in dests:
        _ok(dest.create("d", COLUMNS))
        _ok(
            dest.write(
                "d", COLUMNS, replace=[dest.write_file(HEADER, [["1", "a", "1"], ["2", "b", "2"]])]
            )
        )
        _ok(dest.write("d", COLUMNS, update=[dest.write_file(HEADER, [["1", "A", UNMOD]])]))
        _ok(dest.write("d", COLUMNS, replace=[dest.write_file(HEADER, [["3", "c", "3"]])]))
    clean, dest = dests
    engine.flush(deferred, clean.schema, "d")
    expected = Counter({(1, "A", 1): 1, (2, "b", 2): 1, (3, "c", 3): 1})
    assert _stored(flake, clean.schema, "d") == expected
    before, pending = _stored(flake, dest.schema, "d"), _pending(flake, dest, "d")
    assert sum(pending.values()) == 4

    # Stopped once the flush recorded itself, before its MERGE ran.
    flush = lambda: engine.flush(deferred, dest.schema, "d")  # noqa: E731
    result, _ = _store_down_at(store, faults.FLUSH_RECORDED, flush)
    assert isinstance(result, RetryableError), result
    assert "'d'" in str(result), str(result)
    assert _stored(flake, dest.schema, "d") == before
    assert _pending(flake, dest, "d") == pending
    engine.flush(deferred, dest.schema, "d")
    assert _stored(flake, dest.schema, "d") == expected
    assert not _pending(flake, dest, "d")


def test_maintenance_while_the_store_is_down_fails_and_loses_no_row(
    fdest: Destination, flake: Lake, store: ObjectStore, engine: Engine
) -> None:
    policy = MaintenancePolicy(retention=timedelta(0))
    clean = Destination(
        stub=fdest.stub, workdir=fdest.workdir, configuration=fdest.configuration,
        schema=fdest.schema + "_ref",
    )  # fmt: skip
    for dest in (clean, fdest):
        _ok(dest.create("m", COLUMNS))
        for i in range(3):
            batch = dest.write_file(HEADER, [[str(i), f"v{i}", str(i)], ["0", f"w{i}", "0"]])
            _ok(dest.write("m", COLUMNS, replace=[batch]))
    now = datetime.now(UTC) + timedelta(seconds=1)

    def run(dest: Destination) -> Any:
        return engine.maintain(dest.configuration, dest.schema, "m", policy=policy, now=now)

    with faults.recording() as seen:
        run(clean)
    assert seen, "maintenance ran one statement"
    before = _rows(flake, fdest, "m")
    # Stopped after its first step (a compaction) committed: the rest runs on a dead store.
    result, _ = _store_down_at(store, seen[0].name, lambda: run(fdest))
    assert isinstance(result, RetryableError), result
    assert _rows(flake, fdest, "m") == before
    report = run(fdest)
    assert _rows(flake, fdest, "m") == before
    assert report.after.snapshots <= report.before.snapshots
    # The destination serves on: a sync after it all.
    batch = fdest.write_file(HEADER, [["7", "seven", "7"]])
    _ok(fdest.write("m", COLUMNS, replace=[batch]))
    assert _rows(flake, fdest, "m") == before + Counter({(7, "seven", 7): 1})


def test_a_deferred_server_killed_in_its_flush_on_s3_loses_nothing_and_applies_nothing_twice(
    fdest: Destination, flake: Lake, tmp_path: Path
) -> None:
    """A deferred-mode server on S3, SIGKILLed (with its JVM) once its flush has recorded itself
    and before its MERGE; the next server finishes the flush before the retried request, and
    flushes the rest when stopped: the table is what merge mode makes of the same requests."""
    rows = 2000
    columns = [*COLUMNS, column("_fivetran_synced", "UTC_DATETIME")]
    header = [c.name for c in columns]
    synced = "2024-03-01T10:00:00.000Z"
    reference = replace(
        fdest,
        configuration={**fdest.configuration, "write_mode": "merge"},
        schema=f"{fdest.schema}_ref",
    )
    first = [[str(i), f"a{i}", str(i), synced] for i in range(rows)]
    second = [[str(i), UNMOD, str(-i), synced] for i in range(0, rows, 2)]
    gone = [[str(i), NULL, NULL, synced] for i in range(rows - 10, rows)]
    third = [[str(i), f"b{i}", NULL, synced] for i in range(rows // 2, rows + 5)]
    requests: list[dict[str, list[list[str]]]] = [
        {"replace": first},
        {"update": second, "delete": gone},
        {"replace": third},
    ]

    def send(dest: Destination, files: dict[str, list[list[str]]]) -> Any:
        return dest.write(
            "t", columns, **{k: [dest.write_file(header, v)] for k, v in files.items()}
        )

    log = tmp_path / "server.log"
    flags = ["--write-mode", "deferred", "--merge-interval-ms=-1"]
    cut = datetime(2000, 1, 1, tzinfo=UTC)  # the truncate deletes nothing: it starts a flush
    _ok(reference.create("t", columns))
    server = start_server(
        log_file=log, flags=flags, prewarm=True, module="tests.support.kill_at",
        env={KILL_AT: faults.FLUSH_RECORDED},
    )  # fmt: skip
    try:
        dest = replace(fdest, stub=server.stub)
        _ok(dest.create("t", columns))
        for files in requests[:2]:
            _ok(send(dest, files))
            _ok(send(reference, files))
        with pytest.raises(grpc.RpcError):  # killed under the request
            dest.truncate("t", cut)
        server.kill()
        assert _stored(flake, dest.schema, "t") == Counter(), "the flush's MERGE ran"
        assert _stored(flake, dest.schema, PENDING_PREFIX + "t").total() == rows + rows // 2 + 10

        server = start_server(log_file=log, flags=flags, prewarm=True)
        dest = replace(dest, stub=server.stub)
        _ok(dest.truncate("t", cut))  # Fivetran's retry of the request that was killed
        _ok(reference.truncate("t", cut))
        _ok(send(dest, requests[2]))
        _ok(send(reference, requests[2]))
        server.stop()
        assert _stored(flake, dest.schema, PENDING_PREFIX + "t") == Counter()
        assert _stored(flake, dest.schema, "t") == _stored(flake, reference.schema, "t")
    finally:
        server.kill()
