"""A fresh ``serve`` in an empty folder leaves it empty when its requests name another
warehouse: the default warehouse is claimed (locked) only when a request uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_destination.local_services.server_process import server_process
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb

pytestmark = pytest.mark.spark


def test_serve_in_an_empty_folder_leaves_it_empty(tmp_path: Path) -> None:
    cwd, warehouse = tmp_path / "cwd", tmp_path / "elsewhere"
    cwd.mkdir()
    log = tmp_path / "serve.log"
    with server_process(log_file=log, cwd=cwd, prewarm=True) as server:
        created = server.stub.CreateTable(
            pb.CreateTableRequest(
                configuration={"warehouse": str(warehouse), "catalog": "other"},
                schema_name="s",
                table=common.Table(
                    name="t", columns=[common.Column(name="id", type=common.INT, primary_key=True)]
                ),
            ),
            timeout=300,
        )
        assert created.WhichOneof("response") == "success", created
    assert (warehouse / "s" / "t" / "metadata").is_dir()
    assert sorted(p.name for p in cwd.iterdir()) == [], log.read_text()[-2000:]
