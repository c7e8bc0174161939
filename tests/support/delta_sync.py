"""The table the Delta test modules sync (``test_delta``, ``test_delta_hive``,
``test_delta_s3``): its columns, the header of its batch files, and two sync days."""

from __future__ import annotations

from pathlib import Path

from spark_destination.local_services.server_process import ServerProcess
from tests.support.destination import Destination, column

COLUMNS = [
    column("id", "INT", pk=True),
    column("name", "STRING"),
    column("amount", "DECIMAL", precision=10, scale=2),
    column("_fivetran_synced", "UTC_DATETIME"),
    column("_fivetran_deleted", "BOOLEAN"),
]
HEADER = ["id", "name", "amount", "_fivetran_synced"]
DAY1, DAY2 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"


def ok(response: object) -> None:
    """``response`` (any of the protocol's) is a success."""
    assert response.WhichOneof("response") == "success", response  # type: ignore[attr-defined]


def driver_of(
    server: ServerProcess, workdir: Path, configuration: dict[str, str], schema: str
) -> Destination:
    """A Fivetran-like driver of a server process of the test's own, its batch files in
    ``workdir``."""
    workdir.mkdir(exist_ok=True)
    return Destination(
        stub=server.stub, workdir=workdir, configuration=configuration, schema=schema
    )
