"""A fresh ``serve`` in an empty folder leaves it empty when its requests name another
warehouse: the default warehouse is claimed (locked) only when a request uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from spark_destination.tester.server_process import free_port

pytestmark = pytest.mark.spark


def test_serve_in_an_empty_folder_leaves_it_empty(tmp_path: Path) -> None:
    cwd, warehouse = tmp_path / "cwd", tmp_path / "elsewhere"
    cwd.mkdir()
    port = free_port()
    command = [sys.executable, "-m", "spark_destination.cli.main", "serve", "--port", str(port)]
    command.append("--prewarm")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=120)
            stub = pb_grpc.DestinationConnectorStub(channel)
            created = stub.CreateTable(
                pb.CreateTableRequest(
                    configuration={"warehouse": str(warehouse), "catalog": "other"},
                    schema_name="s",
                    table=common.Table(
                        name="t",
                        columns=[common.Column(name="id", type=common.INT, primary_key=True)],
                    ),
                ),
                timeout=300,
            )
            assert created.WhichOneof("response") == "success", created
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert (warehouse / "s" / "t" / "metadata").is_dir()
    assert sorted(p.name for p in cwd.iterdir()) == [], log.read_text()[-2000:]
