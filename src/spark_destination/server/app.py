"""Start the gRPC server."""

from __future__ import annotations

import logging
from concurrent import futures
from typing import Final

import grpc

from spark_destination.runtime.spark import scratch
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from spark_destination.server.servicer import DestinationServicer
from spark_destination.service.engine import Engine

log = logging.getLogger("spark_destination.server")

DEFAULT_PORT: Final = 50052
DEFAULT_HOST: Final = "127.0.0.1"
# gRPC binds "[::]" as one dual-stack socket (IPv6 and IPv4), or as IPv4 0.0.0.0 alone where the
# machine has no IPv6: exactly what Fivetran asks of a destination (reference §1).
ALL_INTERFACES: Final = "::"
# Fivetran's documented maximum message size, both directions.
MAX_MESSAGE_BYTES: Final = 128 * 1024 * 1024


def create_server(
    engine: Engine,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    workers: int = 8,
    exclusive_port: bool = False,
) -> tuple[grpc.Server, int]:
    """A started-but-not-serving server and the port it bound (``port=0`` picks a free one).

    ``exclusive_port`` turns off SO_REUSEPORT (on by default in gRPC), so a port another process
    already serves on is an error instead of two servers sharing the connections.
    """
    options: list[tuple[str, int]] = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    if exclusive_port:
        options.append(("grpc.so_reuseport", 0))
    scratch.clean_orphans()  # staged batches and Spark scratch of servers that were killed
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rpc"),
        options=options,
    )
    pb_grpc.add_DestinationConnectorServicer_to_server(DestinationServicer(engine), server)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpcio raises instead of returning 0 since 1.5x
        raise OSError(f"cannot listen on {address}: {exc}") from None
    if bound == 0:
        raise OSError(f"cannot listen on {address}")
    return server, bound


def serve(engine: Engine, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    server, bound = create_server(engine, host=host, port=port)
    server.start()
    log.info("spark-destination listening on %s:%d", host, bound)
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        log.info("shutting down")
        server.stop(grace=5).wait()
