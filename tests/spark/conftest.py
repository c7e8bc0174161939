"""One SparkSession for the whole test run: a JVM costs 5-10 s to start, and a process can
hold only one (``build_session`` refuses a second).

``SPARK_DESTINATION_WRITE_MODE=deferred`` runs the whole suite with deferred write mode as the
server's default (the ``Lake`` flushes before it reads); a module parametrizes ``dest``
(``indirect``) with ``WRITE_MODES`` to run its tests in both modes on every run; CI
(``scripts/test.sh``) runs the whole suite in merge mode, then again in deferred mode every
test the server's default reaches (``pytest_collection_modifyitems``).

``SPARK_DESTINATION_CATALOG=hive`` runs the whole suite against a real Hive metastore (started
from pyspark's jars, ``local_services.metastore``) instead of the Hadoop catalog: requests and
the ``Lake`` get their catalog from ``catalog_configuration`` (or, for a driver that outlives a
test, ``run_catalog_configuration``); tests that start a server process of their own (crashes,
clusters) or are about a Hadoop warehouse's folders keep one. A module parametrizes
``catalog_kind`` (``indirect``) with ``CATALOGS`` to run its tests against both on every run.
``rest`` does the same against a real Iceberg REST catalog server
(``local_services.rest_catalog``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest

from spark_destination.core.config import parse_config
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.local_services import rest_catalog as rest
from spark_destination.local_services.metastore import (
    Metastore,
    destination_configuration,
    hive_metastore,
)
from spark_destination.local_services.object_store import ObjectStore, object_store
from spark_destination.runtime.spark.provider import settings_for
from spark_destination.runtime.spark.session import (
    DRIVER_JAVA_OPTIONS,
    SparkSettings,
    build_session,
    register_catalog,
)
from spark_destination.server.app import create_server
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import (
    DELTA,
    DELTA_CATALOG,
    DELTA_CONFIGURATION,
    Destination,
    Lake,
    mode_configuration,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MARKERS = (
    "spark: needs a JVM and a local Spark session (slow start-up, shared across the run)",
    "one_write_mode: the server's default write mode does not reach it; the deferred pass "
    "leaves it out",
    "delta_all: a Delta test left out of CI for its time; SPARK_DESTINATION_DELTA_ALL=1 runs it",
)
# The server's default write mode for the whole run.
WRITE_MODE = os.environ.get("SPARK_DESTINATION_WRITE_MODE", "merge")
# Every Delta variant of the parametrized modules, not only their ``DELTA_IN_CI`` tests.
DELTA_ALL = os.environ.get("SPARK_DESTINATION_DELTA_ALL") == "1"
# The catalog of the tests that do not choose one: ``hadoop`` or ``hive``.
CATALOG = os.environ.get("SPARK_DESTINATION_CATALOG", "hadoop")
# The catalog name a Hive metastore's tables get in requests and in the ``Lake``.
HIVE_CATALOG = "hms"
# The same for the REST catalog server's tables.
REST_CATALOG = "rst"
# The same for SeaweedFS's REST catalog, and for a metastore whose tables are on S3.
REST_S3_CATALOG = "rs3"
HIVE_S3_CATALOG = "hs3"


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml registers the markers; register them here only when run without that file
    # (``--strict-markers`` would otherwise reject them).
    registered = {line.split(":", 1)[0].strip() for line in config.getini("markers")}
    for marker in _MARKERS:
        if marker.split(":", 1)[0] not in registered:
            config.addinivalue_line("markers", marker)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the deferred pass (``SPARK_DESTINATION_WRITE_MODE=deferred``), keep only the tests
    the server's default write mode reaches; the others would only run a second time as they
    ran in the first pass. Left out: tests that never reach the shared server (its ``engine``
    is not among their fixtures: they run Spark directly, or processes of their own), those
    whose ``dest`` is parametrized with a mode (both ran there), modules marked
    ``one_write_mode`` (they set their modes, or run servers of their own), and the variants
    on a catalog other than the run's (``catalog_kind``): the catalog does not change which
    steps a request takes, and each catalog's own deferred-mode tests (test_hive_catalog,
    test_rest_catalog) set the mode, so they ran in the first pass."""
    unsupported: list[pytest.Item] = []
    # A module may run only some of its tests on Delta in CI (``DELTA_IN_CI``, the names of
    # its test functions), and a Delta test may be marked ``delta_all``;
    # SPARK_DESTINATION_DELTA_ALL=1 runs every one.
    if not DELTA_ALL:
        unsupported += [
            item
            for item in items
            if (
                getattr(getattr(item, "callspec", None), "params", {}).get("catalog_kind") == DELTA
                and getattr(item, "originalname", None)
                not in getattr(item.module, "DELTA_IN_CI", {item.originalname})  # type: ignore[attr-defined]
            )
            or item.get_closest_marker("delta_all") is not None
        ]
    if unsupported:
        config.hook.pytest_deselected(items=unsupported)
        left_out = {id(item) for item in unsupported}
        items[:] = [item for item in items if id(item) not in left_out]
    if WRITE_MODE == "merge":
        return
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        reached = (
            "engine" in getattr(item, "fixturenames", ())
            and "dest" not in params
            and params.get("catalog_kind", CATALOG) == CATALOG
            and item.get_closest_marker("one_write_mode") is None
        )
        (kept if reached else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


OPERATOR_JAVA_OPTION = "-Dspark_destination.test=operator"


@pytest.fixture(scope="session")
def spark_settings(tmp_path_factory: pytest.TempPathFactory) -> SparkSettings:
    """The settings of the shared session; the warehouse lives in a per-run temp folder.

    The jars are the installed ones (``$SPARK_DESTINATION_CACHE`` or
    ``~/.cache/spark-destination``), as in production: ``scripts/test.sh`` installs them.
    """
    return SparkSettings(
        warehouse=str(tmp_path_factory.mktemp("warehouse")),
        # An operator's own Java option, as ``spark_conf`` passes it: every later request
        # through these settings must find the running JVM compatible (Spark puts its own
        # options before it, and the session the log configuration).
        extra_conf=((DRIVER_JAVA_OPTIONS, OPERATOR_JAVA_OPTION),),
    )


@pytest.fixture(scope="session")
def spark(spark_settings: SparkSettings) -> Iterator[SparkSession]:
    session = build_session(spark_settings)
    try:
        yield session
    finally:
        session.stop()


# --- The destination behind a real gRPC server, driven the way Fivetran drives it ------------


@pytest.fixture(scope="session")
def engine(spark: SparkSession, spark_settings: SparkSettings) -> Engine:
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    provider = SessionProvider.shared(spark, parse_config(configuration))
    return Engine(provider, defaults={**configuration, **mode_configuration(WRITE_MODE)})


@pytest.fixture(scope="session")
def server_address(engine: Engine) -> Iterator[str]:
    server, port = create_server(engine, port=0)
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)


@pytest.fixture(scope="session")
def stub(server_address: str) -> Iterator[pb_grpc.DestinationConnectorStub]:
    with grpc.insecure_channel(server_address) as channel:
        yield pb_grpc.DestinationConnectorStub(channel)


@pytest.fixture(scope="session")
def parquet_engine(spark: SparkSession, spark_settings: SparkSettings) -> Engine:
    """The shared session behind a server started with ``--batch-file-format parquet``."""
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    provider = SessionProvider.shared(spark, parse_config(configuration))
    defaults = {**configuration, **mode_configuration(WRITE_MODE), "batch_file_format": "parquet"}
    return Engine(provider, defaults=defaults)


@pytest.fixture(scope="session")
def parquet_stub(parquet_engine: Engine) -> Iterator[pb_grpc.DestinationConnectorStub]:
    server, port = create_server(parquet_engine, port=0)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.DestinationConnectorStub(channel)
    finally:
        server.stop(grace=None)


_schemas = iter(range(1_000_000))


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metastore]:
    """A real Hive metastore for the run (started on first use, stopped by its pid)."""
    with hive_metastore(tmp_path_factory.mktemp("metastore")) as running:
        yield running


@pytest.fixture(scope="session")
def rest_catalog(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[rest.RestCatalog]:
    """A real Iceberg REST catalog server for the run (its fault hook on), stopped by its pid."""
    with rest.rest_catalog(tmp_path_factory.mktemp("rest_catalog"), faults=True) as running:
        yield running


@pytest.fixture(scope="session")
def s3_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    """A real S3 server (SeaweedFS, with its own Iceberg REST catalog) for the run, on
    loopback, its data in a temporary folder, stopped by its pid."""
    with object_store(tmp_path_factory.mktemp("s3")) as running:
        yield running


@pytest.fixture(scope="session")
def s3_metastore(
    s3_store: ObjectStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Metastore]:
    """A real Hive metastore whose tables live on ``s3_store`` (its file systems: S3A)."""
    folder = tmp_path_factory.mktemp("s3_metastore")
    with hive_metastore(folder, file_systems=s3_store.hadoop_settings()) as running:
        yield running


@pytest.fixture
def catalog_kind(request: pytest.FixtureRequest) -> str:
    """``hadoop``, ``hive``, ``rest``, ``rest_s3`` or ``hive_s3``: the test's parameter
    (``indirect``), else ``CATALOG``."""
    return str(getattr(request, "param", CATALOG))


def _catalog_keys(kind: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The configuration keys that point requests at catalog ``kind``."""
    if kind == "hadoop":
        return {}
    if kind == DELTA:
        return dict(DELTA_CONFIGURATION)
    if kind == "rest":
        server: rest.RestCatalog = request.getfixturevalue("rest_catalog")
        return {"catalog": REST_CATALOG, **rest.destination_configuration(server)}
    if kind == "rest_s3":
        store: ObjectStore = request.getfixturevalue("s3_store")
        return {"catalog": REST_S3_CATALOG, **store.rest_configuration()}
    if kind == "hive_s3":
        store = request.getfixturevalue("s3_store")
        on_s3: Metastore = request.getfixturevalue("s3_metastore")
        return {"catalog": HIVE_S3_CATALOG, **store.hive_configuration(on_s3.uri)}
    assert kind == "hive", kind
    metastore: Metastore = request.getfixturevalue("metastore")
    return {"catalog": HIVE_CATALOG, **destination_configuration(metastore)}


@pytest.fixture
def catalog_configuration(catalog_kind: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The configuration keys that point requests at the test's catalog."""
    return _catalog_keys(catalog_kind, request)


@pytest.fixture(scope="session")
def run_catalog_configuration(request: pytest.FixtureRequest) -> dict[str, str]:
    """The keys of ``CATALOG``, for drivers that live longer than a test (module-scoped: a
    test's ``catalog_configuration`` cannot reach them); their tests must then not choose
    another ``catalog_kind``."""
    return _catalog_keys(CATALOG, request)


@pytest.fixture
def dest(
    request: pytest.FixtureRequest,
    stub: pb_grpc.DestinationConnectorStub,
    tmp_path: Path,
    catalog_configuration: dict[str, str],
) -> Destination:
    """A fresh schema per test so tests never see each other's tables; in the write mode the
    test is parametrized with (``indirect``), else in the server's default."""
    mode = getattr(request, "param", None)
    configuration = {**catalog_configuration, **(mode_configuration(mode) if mode else {})}
    return Destination(
        stub=stub,
        workdir=tmp_path,
        configuration=configuration,
        schema=f"test_{next(_schemas)}",
        server_mode=WRITE_MODE,
    )


@pytest.fixture
def lake(
    spark: SparkSession,
    spark_settings: SparkSettings,
    engine: Engine,
    catalog_configuration: dict[str, str],
) -> Lake:
    """Reads the test's catalog (a Hive catalog is registered on each session it reads with)."""
    if not catalog_configuration:
        return Lake(session=spark, catalog=spark_settings.catalog, flush=engine.flush_pending)
    if catalog_configuration.get("table_format") == DELTA:
        return Lake(session=spark, catalog=DELTA_CATALOG, flush=engine.flush_pending)
    spec = settings_for(parse_config(catalog_configuration)).catalog_spec
    return Lake(
        session=spark,
        catalog=spec.name,
        flush=engine.flush_pending,
        prepare=lambda session: register_catalog(session, spec),
    )
