"""What the driver's JVM spent compiling code and collecting garbage while a step ran.

A statement's first run in a JVM pays HotSpot's JIT for its plan's code: a fresh server's first
1M-row history MERGE takes about twice its warm time, in the bare engine too
(docs/benchmarks.md, "What a fresh server pays"). Each step's log line says how much of its
time the JVM spent so, so an operator can tell a slow step that was warming up from one that
was not. Read from the JVM's management beans, which count for the whole JVM: with requests
running side by side, a step's figures include the others'. Compiling is the compiler threads'
elapsed time, which on a machine with few cores competes with Spark's task threads, so it is
not CPU time either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_destination.runtime.spark.java_values import java_class, java_list, per_jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, slots=True)
class JvmTime:
    """Milliseconds the JVM has spent, since it started or over a step."""

    compiling_ms: int
    gc_ms: int

    def since(self, earlier: JvmTime) -> JvmTime:
        return JvmTime(self.compiling_ms - earlier.compiling_ms, self.gc_ms - earlier.gc_ms)

    def text(self) -> str:
        return f"JVM compiling {self.compiling_ms / 1000:.2f} s, GC {self.gc_ms / 1000:.2f} s"


@dataclass(frozen=True, slots=True)
class _Beans:
    """One JVM's management beans: the compiler's, and one per garbage collector (G1: young
    and old)."""

    compilation: Any
    collectors: tuple[Any, ...]


def read(session: SparkSession) -> JvmTime:
    """The driver JVM's totals (a local driver's: in a cluster, not the executors')."""
    beans = _beans(session)
    compiling = int(beans.compilation.getTotalCompilationTime())
    # -1 means the collector does not say.
    gc = sum(max(int(bean.getCollectionTime()), 0) for bean in beans.collectors)
    return JvmTime(compiling_ms=compiling, gc_ms=gc)


def _beans(session: SparkSession) -> _Beans:
    """Looked up once per JVM: finding them through py4j (the factory's class by name, the
    collectors' list iterated to the exception that ends py4j's iteration) took ~22 ms a read,
    and every step reads twice; a read of the beans takes ~0.2 ms (docs/benchmarks.md,
    "Small syncs")."""

    def find() -> _Beans:
        factory = java_class(session, "java.lang.management.ManagementFactory")
        return _Beans(
            compilation=factory.getCompilationMXBean(),
            collectors=tuple(java_list(factory.getGarbageCollectorMXBeans())),
        )

    return per_jvm(session, "management beans", find)
