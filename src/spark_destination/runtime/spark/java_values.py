"""Java classes and collections reached through py4j, each at the fewest round trips.

py4j resolves a dotted class name (``jvm.java.util.HashMap``) one package at a time, a round
trip each: 1.1-1.6 ms a class, against ~0.1 ms a call on a class already found
(docs/benchmarks.md, issue 33, eighteenth session). ``java_class`` finds each class once per
JVM.

py4j iterates a Java collection through its iterator until ``next`` throws, and PySpark
converts that exception, asking the JVM about its class many times: reading a table's
properties or identifier fields so took 15-19 ms each, against ~0.5 ms through an array
(docs/benchmarks.md, issue 33, seventeenth session). Every request reads them.
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Each JVM's classes found so far, by its SparkContext (a new JVM has a new one).
_CLASSES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_CLASSES_GUARD = threading.Lock()


def java_class(session: SparkSession, name: str) -> Any:
    """The JVM's class ``name`` (fully qualified): its constructor, static methods and fields."""
    context: Any = session.sparkContext
    with _CLASSES_GUARD:
        classes = _CLASSES.setdefault(context, {})
        found = classes.get(name)
    if found is None:
        found = functools.reduce(getattr, name.split("."), context._jvm)
        with _CLASSES_GUARD:
            classes[name] = found
    return found


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
