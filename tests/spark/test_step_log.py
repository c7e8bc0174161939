"""Each step's log line says what of its time the driver's JVM spent compiling code and
collecting garbage (``runtime.execute.jvm_time``): a fresh server's first big MERGE of a shape
is mostly HotSpot's JIT (docs/benchmarks.md, "What a fresh server pays"), and the log is where
an operator can tell that from a slow table."""

from __future__ import annotations

import logging
import re

import pytest

from spark_destination.runtime.execute import executor, jvm_time
from tests.support.destination import Destination, Lake, column

pytestmark = pytest.mark.spark

STEP = re.compile(r".+: \d+\.\d\d s \(JVM compiling (\d+\.\d\d) s, GC (\d+\.\d\d) s\)")


def test_each_step_logs_the_jvms_compiling_and_gc_time(
    dest: Destination, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=executor.__name__)
    columns = [column("id", "LONG", pk=True), column("note", "STRING")]
    assert dest.create("steps", columns).WhichOneof("response") == "success"
    caplog.clear()
    before = jvm_time.read(lake.session)
    batch = dest.write_file(["id", "note"], [[str(i), f"n{i}"] for i in range(50)])
    assert dest.write("steps", columns, replace=[batch]).WhichOneof("response") == "success"
    after = jvm_time.read(lake.session)

    steps = [r.getMessage() for r in caplog.records if r.name == executor.__name__]
    timed = [m for m in map(STEP.fullmatch, steps) if m]
    assert len(timed) >= 2, steps  # staging and writing at least
    # The figures are the JVM's own counters: a JVM that has run Spark has compiled code, and
    # the steps' figures add up to no more than the counters moved over the whole request.
    assert before.compiling_ms > 0
    spent = after.since(before)
    rounding = 0.005 * len(timed)
    assert sum(float(m.group(1)) for m in timed) <= spent.compiling_ms / 1000 + rounding
    assert sum(float(m.group(2)) for m in timed) <= spent.gc_ms / 1000 + rounding
