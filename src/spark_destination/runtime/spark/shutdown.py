"""Stop Spark and wait for its JVM to exit.

``SparkSession.stop`` stops the SparkContext but leaves the gateway JVM running until the
Python process exits. A frozen one-file binary deletes its unpacked folder (the JDK and the
jars) right after Python exits, so a JVM still shutting down then fails on missing files;
waiting for it here makes SIGTERM a clean stop.
"""

from __future__ import annotations

import logging
import subprocess
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Seconds the JVM gets to exit after its stdin closes, before it is killed.
JVM_EXIT_TIMEOUT: Final = 30.0


def stop_session(session: SparkSession) -> None:
    """Stop the session, shut the py4j gateway down and wait for the JVM process."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    session.stop()
    if gateway is None:
        return
    process = getattr(gateway, "proc", None)  # set by pyspark's launch_gateway
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if not isinstance(process, subprocess.Popen):
        return
    if process.stdin is not None:
        # Spark's PythonGatewayServer exits when its stdin reaches EOF.
        process.stdin.close()
    try:
        process.wait(timeout=JVM_EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        log.warning("the Spark JVM did not exit within %.0f s; killing it", JVM_EXIT_TIMEOUT)
        process.kill()
        process.wait()
