"""Java classes and collections reached through py4j, each at the fewest round trips.

py4j resolves a dotted class name (``jvm.java.util.HashMap``) one package at a time, a round
trip each: 1.1-1.6 ms a class, against ~0.1 ms a call on a class already found
(docs/benchmarks.md, "Small syncs"). ``java_class`` finds each class once per
JVM; ``per_jvm`` keeps any other value a JVM cannot change while it runs.

py4j iterates a Java collection through its iterator until ``next`` throws, and PySpark
converts that exception, asking the JVM about its class many times: reading a table's
properties or identifier fields so took 15-19 ms each, against ~0.5 ms through an array
(the same section). Every request reads them.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")

# Each JVM's kept values by name, by its SparkContext (a new JVM has a new one).
_KEPT: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_KEPT_GUARD = threading.Lock()


def per_jvm(session: SparkSession, name: str, make: Callable[[], T]) -> T:
    """``make()``, called once per JVM: later calls with ``name`` get its value back. Only
    for values the JVM cannot change while it runs (classes, settings fixed at start-up,
    management beans)."""
    context: Any = session.sparkContext
    with _KEPT_GUARD:
        kept = _KEPT.setdefault(context, {})
        if name in kept:
            return kept[name]  # type: ignore[no-any-return]
    value = make()  # outside the lock: it may take round trips to the JVM
    with _KEPT_GUARD:
        return kept.setdefault(name, value)  # type: ignore[no-any-return]


def java_class(session: SparkSession, name: str) -> Any:
    """The JVM's class ``name`` (fully qualified): its constructor, static methods and fields."""
    jvm = session.sparkContext._jvm
    return per_jvm(
        session, f"class {name}", lambda: functools.reduce(getattr, name.split("."), jvm)
    )


def java_list(values: Any) -> list[Any]:
    """The elements of a Java collection."""
    return list(values.toArray())


def java_map(values: Any) -> dict[str, str]:
    """A Java map's entries as text."""
    return {str(key): str(values.get(key)) for key in values.keySet().toArray()}


def scala_list(session: SparkSession, values: Any) -> list[Any]:
    """The elements of a Scala sequence (its ``toArray`` wants an implicit class tag)."""
    converters = java_class(session, "scala.collection.JavaConverters")
    return java_list(converters.seqAsJavaList(values))
