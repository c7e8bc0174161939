"""The batch file format, the way Fivetran meets it: Capabilities first (no configuration), then
files in the announced format. A configuration that asks for the other format changes nothing,
and a file in the other format is a task that says which format was announced, with the table
unchanged and the server still serving."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from spark_destination.engine.engine import Engine
from spark_destination.replay.batch_writer import new_key, write_parquet_table
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import Destination, Lake, column

pytestmark = pytest.mark.spark

COLUMNS = [
    column("id", "INT", pk=True),
    column("v", "STRING"),
    column("_fivetran_synced", "UTC_DATETIME"),
]
HEADER = [c.name for c in COLUMNS]
SYNCED = "2024-05-01T00:00:00Z"
OTHER = {"CSV": "parquet", "PARQUET": "csv"}


def _file(dest: Destination, fmt: str, rows: list[tuple[int, str]]) -> tuple[str, bytes]:
    if fmt == "CSV":
        return dest.write_file(HEADER, [[str(i), v, SYNCED] for i, v in rows])
    table = pa.table(
        {
            "id": pa.array([i for i, _ in rows], pa.int32()),
            "v": pa.array([v for _, v in rows], pa.string()),
            "_fivetran_synced": pa.array([SYNCED] * len(rows), pa.string()),
        }
    )
    dest.counter += 1
    path, key = dest.workdir / f"batch_{dest.counter}.parquet.zstd.aes", new_key()
    write_parquet_table(path, table, params=dest.params(), key=key)
    return str(path), key


def _stored(lake: Lake, dest: Destination) -> Counter[tuple[object, ...]]:
    return Counter((r["id"], r["v"]) for r in lake.rows(dest.schema, "t"))


@pytest.mark.parametrize("announced", ["CSV", "PARQUET"])
def test_files_in_the_announced_format_are_read_whatever_the_configuration_asks(
    announced: str,
    dest: Destination,
    lake: Lake,
    parquet_stub: pb_grpc.DestinationConnectorStub,
    parquet_engine: Engine,
) -> None:
    if announced == "PARQUET":
        dest.stub, lake.flush = parquet_stub, parquet_engine.flush_pending
    capabilities = dest.stub.Capabilities(pb.CapabilitiesRequest())
    assert pb.BatchFileFormat.Name(capabilities.batch_file_format) == announced
    # The user's saved configuration asks for the other format: Fivetran still writes what
    # Capabilities announced, and the destination reads exactly that.
    dest.configuration = {**dest.configuration, "batch_file_format": OTHER[announced]}
    assert dest.create("t", COLUMNS).WhichOneof("response") == "success"
    first = dest.write("t", COLUMNS, replace=[_file(dest, announced, [(1, "a"), (2, "b")])])
    assert first.WhichOneof("response") == "success", first
    assert _stored(lake, dest) == Counter({(1, "a"): 1, (2, "b"): 1})

    # A file in the other format: a task naming the file and the announced format, nothing
    # written, and the next request is served.
    other = "PARQUET" if announced == "CSV" else "CSV"
    wrong = _file(dest, other, [(2, "B"), (3, "c")])
    refused = dest.write("t", COLUMNS, replace=[wrong])
    assert refused.WhichOneof("response") == "task", refused
    message = refused.task.message
    assert wrong[0].rsplit("/", 1)[-1] in message
    assert f"announced {'Parquet' if announced == 'PARQUET' else 'CSV'} in Capabilities" in message
    assert _stored(lake, dest) == Counter({(1, "a"): 1, (2, "b"): 1})
    last = dest.write("t", COLUMNS, replace=[_file(dest, announced, [(3, "c")])])
    assert last.WhichOneof("response") == "success", last
    assert _stored(lake, dest) == Counter({(1, "a"): 1, (2, "b"): 1, (3, "c"): 1})
