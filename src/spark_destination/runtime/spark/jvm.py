"""Notice that the Spark JVM died (killed, out of memory) and let go of its dead session.

PySpark keeps the gateway to its JVM in class attributes; once the JVM is gone every call fails
with a py4j error and ``getOrCreate`` would hand back the dead session forever. ``alive`` asks
the JVM process (and, failing that, the gateway); ``discard`` forgets the session so the next
``build_session`` launches a new JVM.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from spark_destination.runtime.spark.java_values import java_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


def alive(session: SparkSession) -> bool:
    from py4j.protocol import Py4JError

    context = session.sparkContext
    process = getattr(context._gateway, "proc", None)
    if process is not None and process.poll() is not None:
        return False
    if context._jsc is None:  # stopped
        return False
    try:
        assert context._jvm is not None
        java_class(session, "java.lang.System").nanoTime()
    except (Py4JError, OSError, AssertionError):
        return False
    return True


def discard(session: SparkSession) -> None:
    """Forget a session whose JVM is gone (and end the JVM process if it still lingers)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = session.sparkContext
    process = getattr(context._gateway, "proc", None)
    with contextlib.suppress(Exception):
        context.stop()  # tolerates a dead JVM; stops the accumulator server
    if process is not None and process.poll() is None:
        process.kill()
    gateway = context._gateway
    if gateway is not None:
        with contextlib.suppress(Exception):
            gateway.shutdown()
    with SparkContext._lock:
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
