"""The request's retry budget: exponential pauses with jitter, bounded by a time per kind of
trouble, each retry logged once; and ``transient.retrying`` under it."""

from __future__ import annotations

import logging
import random

import pytest

from spark_destination.runtime.execute import transient
from spark_destination.runtime.execute.retry_policy import RetryBudget, RetryPolicy, Trouble


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


POLICY = RetryPolicy(
    race_seconds=60.0, unavailable_seconds=10.0, first_pause_seconds=0.5, longest_pause_seconds=8.0
)


def _budget(clock: _Clock, seed: int = 1) -> RetryBudget:
    return RetryBudget(POLICY, clock=clock, sleep=clock.sleep, rng=random.Random(seed))


def test_pauses_double_up_to_the_longest_with_jitter_and_stop_at_the_budget(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = _Clock()
    budget = _budget(clock)
    with caplog.at_level(logging.WARNING):
        while budget.wait(Trouble.RACE, "merge into 't'", "CommitFailedException"):
            pass
    ceilings = [min(8.0, 0.5 * 2**n) for n in range(len(clock.pauses))]
    assert all(c / 2 <= p <= c for p, c in zip(clock.pauses, ceilings, strict=True))
    assert len(set(clock.pauses)) == len(clock.pauses)  # jittered, not in step
    # Every pause ended inside the budget, and it stopped only when the next pause (at most the
    # longest) could not.
    assert POLICY.race_seconds - POLICY.longest_pause_seconds < sum(clock.pauses)
    assert sum(clock.pauses) <= POLICY.race_seconds
    assert budget.retries(Trouble.RACE) == len(clock.pauses)
    assert len(caplog.records) == len(clock.pauses)  # each retry logged once
    assert "merge into 't'" in caplog.records[0].getMessage()


def test_each_trouble_has_its_own_budget_from_its_first_retry() -> None:
    clock = _Clock()
    budget = _budget(clock)
    clock.now += 500  # a long first attempt does not eat the budget
    assert budget.wait(Trouble.RACE, "w", "r")
    while budget.wait(Trouble.UNAVAILABLE, "w", "r"):
        pass
    assert budget.spent(Trouble.UNAVAILABLE) <= POLICY.unavailable_seconds
    assert budget.wait(Trouble.RACE, "w", "r")  # races keep their own budget


def test_retrying_gives_up_with_the_last_failure_when_the_budget_is_spent() -> None:
    clock = _Clock()
    budget = _budget(clock)
    calls: list[int] = []

    def fails() -> None:
        calls.append(1)
        raise RuntimeError("lost")

    with pytest.raises(transient.GaveUp) as info:
        transient.retrying(
            fails, what="w", budget=budget, resolve=lambda _e: transient.Resolution.UNAVAILABLE
        )
    assert info.value.trouble is Trouble.UNAVAILABLE
    assert len(calls) == info.value.retries + 1 == len(clock.pauses) + 1
    assert isinstance(info.value.error, RuntimeError)


def test_retrying_stops_at_once_on_a_real_failure_and_returns_when_it_landed() -> None:
    clock = _Clock()
    calls: list[int] = []

    def fails() -> str:
        calls.append(1)
        raise ValueError("bad statement")

    with pytest.raises(ValueError):
        transient.retrying(fails, what="w", budget=_budget(clock))
    assert len(calls) == 1 and clock.pauses == []
    landed = transient.retrying(
        fails,
        what="w",
        budget=_budget(clock),
        resolve=lambda _e: transient.Resolution.LANDED,
        landed=lambda: "landed",
    )
    assert landed == "landed"


def test_unreachable_and_race_classes_resolve_to_their_trouble() -> None:
    assert (
        transient.default_resolution({"java.net.ConnectException", "java.io.IOException"})
        is transient.Resolution.UNAVAILABLE
    )
    assert (
        transient.default_resolution({"org.apache.iceberg.exceptions.CommitFailedException"})
        is transient.Resolution.RETRY
    )
    refused = {"org.apache.iceberg.hive.LockException", "java.net.SocketTimeoutException"}
    assert transient.default_resolution(refused) is transient.Resolution.RAISE
    assert transient.default_resolution({"java.lang.IllegalArgumentException"}) is (
        transient.Resolution.RAISE
    )
