"""The gRPC server: built on a port, run until a signal stops it (and Spark with it)."""

from __future__ import annotations

import logging
import signal
import threading
from concurrent import futures
from types import FrameType
from typing import Final

import grpc

from spark_destination.core.errors import DestinationError
from spark_destination.engine.engine import Engine
from spark_destination.engine.warm_up import warm_write_path
from spark_destination.runtime.spark import scratch
from spark_destination.server.addresses import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    grpc_address,
    listening_on,
)
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from spark_destination.server.servicer import DestinationServicer

log = logging.getLogger("spark_destination.server")

# Logged once a prewarmed server's Spark runs (tools wait for it).
SPARK_READY: Final = "Spark is ready"
# The log line that says where the server listens, with the port bound (``--port 0``: the
# one the system chose; ``local_services.server_process`` reads it).
LISTENING: Final = "spark-destination listening on"
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
    address = grpc_address(host, port)
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpcio raises instead of returning 0 since 1.5x
        raise OSError(f"cannot listen on {address}: {exc}") from None
    if bound == 0:
        raise OSError(f"cannot listen on {address}")
    return server, bound


def run_server(
    engine: Engine, *, host: str, port: int, prewarm: bool, warm_writes: bool = True
) -> int:
    """Serve until SIGTERM or SIGINT, then stop the server, flush what deferred mode left
    pending, and stop Spark (waiting for the JVM).

    A port that is taken is a SEVERE log line and exit code 1. With ``prewarm`` Spark starts
    in the background at once (gRPC answers meanwhile), so the first request does not pay for
    it; "Spark is ready" is logged when it has. Then, unless not ``warm_writes``, small batches
    warm the write path on throwaway tables (``engine.warm_up``).
    """
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s; shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server, bound = create_server(engine, host=host, port=port, exclusive_port=True)
    except OSError as exc:
        log.error("%s", exc)
        return 1
    server.start()
    log.info("%s %s", LISTENING, listening_on(host, bound))
    if prewarm:
        threading.Thread(
            target=_prewarm, args=(engine, warm_writes), name="prewarm", daemon=True
        ).start()
    # A bounded wait, so the signal handler runs promptly on every platform.
    while not stop.wait(0.5):
        pass
    server.stop(grace=5).wait()
    try:
        engine.close()  # deferred mode: flush what is pending (logged per table)
    finally:
        engine.sessions.stop()
    log.info("stopped")
    return 0


def _prewarm(engine: Engine, warm_writes: bool) -> None:
    try:
        engine.sessions.root(engine.config({}))
        log.info(SPARK_READY)
        if warm_writes:
            warm_write_path(engine)
    except DestinationError as exc:
        # The first request retries and reports it to Fivetran.
        log.warning("starting Spark at start-up failed: %s", exc.loggable)
    except Exception as exc:
        log.error("starting Spark at start-up failed: %s", type(exc).__name__)
