"""A short retry budget for tests: the policy's shape (exponential pauses with jitter, a time
budget per kind of trouble) with pauses of milliseconds and budgets of seconds."""

from __future__ import annotations

import pytest

from spark_destination.runtime.execute import retry_policy
from spark_destination.runtime.execute.retry_policy import RetryPolicy

SHORT = RetryPolicy(
    race_seconds=2.0,
    unavailable_seconds=2.0,
    first_pause_seconds=0.02,
    longest_pause_seconds=0.4,
)


def short_retries(monkeypatch: pytest.MonkeyPatch, policy: RetryPolicy = SHORT) -> RetryPolicy:
    """Every request started from now on in this process retries under ``policy``."""
    monkeypatch.setattr(retry_policy, "DEFAULT_POLICY", policy)
    return policy
