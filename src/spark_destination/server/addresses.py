"""Where the server listens: its default port and host, and how addresses are written."""

from __future__ import annotations

from typing import Final

DEFAULT_PORT: Final = 50052
DEFAULT_HOST: Final = "127.0.0.1"
# gRPC binds "[::]" as one dual-stack socket (IPv6 and IPv4), or as IPv4 0.0.0.0 alone where the
# machine has no IPv6: exactly what Fivetran asks of a destination (reference §1).
ALL_INTERFACES: Final = "::"


def grpc_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listening_on(host: str, port: int) -> str:
    """What the listening line says (the all-interfaces socket serves IPv4 too)."""
    if host == ALL_INTERFACES:
        return f"0.0.0.0:{port} and [::]:{port}"
    return grpc_address(host, port)
