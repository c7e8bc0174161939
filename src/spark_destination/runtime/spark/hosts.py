"""Which hosts the Spark executors run on, and which names mean "this host"."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def executor_hosts(session: SparkSession) -> set[str]:
    """Hosts of the registered executors (the driver's entry included)."""
    context = session.sparkContext._jsc
    assert context is not None
    infos = context.sc().statusTracker().getExecutorInfos()
    return {str(info.host()) for info in infos}


def local_hosts() -> set[str]:
    """This machine's names and addresses, as executors on it would report them."""
    names = {socket.gethostname(), socket.getfqdn()}
    addresses: set[str] = set()
    for name in names:
        try:
            addresses.update(socket.gethostbyname_ex(name)[2])
        except OSError:
            continue
    return names | addresses
