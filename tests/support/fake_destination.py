"""A fake destination: a gRPC servicer on 127.0.0.1 that records what a replay sends.

Shared by the tests of the tester emulation and of the ``replay`` command; no Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from spark_destination.runtime.batch.csv_text import read_batch_file
from spark_destination.runtime.batch.parquet_files import read_parquet_batch_file
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc


@dataclass
class FakeServicer(pb_grpc.DestinationConnectorServicer):
    """Records requests; answers success (or what ``answers`` says for an RPC name)."""

    requests: list[tuple[str, Any]] = field(default_factory=list)
    answers: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    # For write requests: the decoded rows of every file, read while the call is in progress.
    seen_files: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    # What Capabilities announce, and so the format the write requests' files are read in.
    batch_file_format: int = pb.CSV

    def _record(self, name: str, request: Any, default: Any) -> Any:
        self.requests.append((name, request))
        answer = self.answers.get(name)
        return answer(request) if answer else default

    def ConfigurationForm(self, request: Any, context: Any) -> Any:  # noqa: N802
        form = common.ConfigurationFormResponse(tests=[common.ConfigurationTest(name="connect")])
        return self._record("ConfigurationForm", request, form)

    def Test(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("Test", request, common.TestResponse(success=True))

    def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802
        announced = pb.CapabilitiesResponse(batch_file_format=self.batch_file_format)
        return self._record("Capabilities", request, announced)

    def DescribeTable(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("DescribeTable", request, pb.DescribeTableResponse(not_found=True))

    def CreateTable(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("CreateTable", request, pb.CreateTableResponse(success=True))

    def AlterTable(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("AlterTable", request, pb.AlterTableResponse(success=True))

    def Truncate(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("Truncate", request, pb.TruncateResponse(success=True))

    def WriteBatch(self, request: Any, context: Any) -> Any:  # noqa: N802
        self._read_files(
            request, [*request.replace_files, *request.update_files, *request.delete_files]
        )
        return self._record("WriteBatch", request, pb.WriteBatchResponse(success=True))

    def WriteHistoryBatch(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("WriteHistoryBatch", request, pb.WriteBatchResponse(success=True))

    def Migrate(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._record("Migrate", request, pb.MigrateResponse(success=True))

    def _read_files(self, request: Any, paths: list[str]) -> None:
        from spark_destination.server.mapping import file_params_from_proto

        params = file_params_from_proto(request.file_params)
        columns = [c.name for c in request.table.columns]
        read = read_parquet_batch_file if self.batch_file_format == pb.PARQUET else read_batch_file
        for path in filter(lambda p: Path(p).exists(), paths):
            table = read(path, key=request.keys.get(path), params=params, columns=columns)
            self.seen_files[path] = table.to_pylist()


@contextmanager
def serving(servicer: FakeServicer) -> Iterator[int]:
    """Serves ``servicer`` on 127.0.0.1; yields its port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_DestinationConnectorServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(grace=None)
