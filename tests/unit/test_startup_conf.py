"""The running JVM's start-up settings are read once per JVM, and anew for a new one.

``check_compatible`` compares every request's settings with them; a read through py4j costs a
round trip per setting, so it is kept. A JVM started again (after a crash, with other settings)
is a new SparkContext: comparing against the old JVM's settings would accept a request the new
one cannot take, or refuse one it can.
"""

from __future__ import annotations

from spark_destination.runtime.spark.session import startup_conf
from tests.support.fake_spark import FakeConf, FakeContext, FakeSession


class _CountingContext(FakeContext):
    def __init__(self, startup: dict[str, str]) -> None:
        super().__init__(startup)
        self.reads = 0

    def getConf(self) -> FakeConf:  # noqa: N802 - PySpark's name
        self.reads += 1
        return super().getConf()


def test_the_start_up_settings_are_read_once_per_jvm() -> None:
    session = FakeSession()
    first = _CountingContext({"spark.driver.memory": "2g"})
    session.sparkContext = first
    assert startup_conf(session)["spark.driver.memory"] == "2g"
    assert startup_conf(session)["spark.driver.memory"] == "2g"
    assert first.reads == 1

    restarted = _CountingContext({"spark.driver.memory": "4g"})
    session.sparkContext = restarted
    assert startup_conf(session)["spark.driver.memory"] == "4g"
    assert restarted.reads == 1
