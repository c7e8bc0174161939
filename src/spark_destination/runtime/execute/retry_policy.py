"""How long a request keeps retrying, and how it waits between attempts: one policy, one budget
per request, shared by every retry the request makes (a statement's lost commit race, a service
that does not answer, a commit the catalog did not confirm, a request planned again).

A retry budget is a time, not a count: an attempt's length varies from milliseconds (a refused
connection) to minutes (a MERGE into a large table), and what must be bounded is how long a
sync waits before Fivetran hears about it. Pauses grow exponentially with "equal jitter" (half
fixed, half random), so concurrent writers that lost the same race do not retry in step. Each
kind of trouble has its own budget, counted from its first retry in the request: commit races
get minutes (another writer's compaction can hold a table for that long), a service that does not
answer gets less (Fivetran retries the whole request later; a sync should not hang on it).
"""

from __future__ import annotations

import enum
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, assert_never

log = logging.getLogger(__name__)


class Trouble(enum.Enum):
    """Why an attempt is made again; each has its own budget."""

    RACE = "lost a commit race"
    UNAVAILABLE = "a service did not answer"


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    # Seconds of retrying per kind of trouble, from its first retry in the request. A commit
    # race lost in every attempt of 150 s means another writer holds the table for longer than
    # a sync should wait.
    race_seconds: float = 150.0
    unavailable_seconds: float = 45.0
    # The pause before the first retry, doubled each time up to the longest.
    first_pause_seconds: float = 0.5
    longest_pause_seconds: float = 8.0

    def budget(self, trouble: Trouble) -> float:
        match trouble:
            case Trouble.RACE:
                return self.race_seconds
            case Trouble.UNAVAILABLE:
                return self.unavailable_seconds
            case _:
                assert_never(trouble)


DEFAULT_POLICY: Final = RetryPolicy()


class RetryBudget:
    """The retries of one request: ``wait`` before each new attempt, until the budget of that
    trouble is spent. Not thread-safe: a request runs on one thread."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.policy = policy or DEFAULT_POLICY
        self._clock, self._sleep = clock, sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security
        self._first: dict[Trouble, float] = {}
        self._retries: dict[Trouble, int] = {}

    def retries(self, trouble: Trouble) -> int:
        return self._retries.get(trouble, 0)

    def spent(self, trouble: Trouble) -> float:
        """Seconds since the first retry of ``trouble`` (0 before it)."""
        first = self._first.get(trouble)
        return 0.0 if first is None else self._clock() - first

    def wait(self, trouble: Trouble, what: str, reason: str) -> bool:
        """Pause before the next attempt of ``what`` and say True, or say False (at once) when
        the pause would end past ``trouble``'s budget. Logs each retry once."""
        now = self._clock()
        first = self._first.setdefault(trouble, now)
        done = self._retries.get(trouble, 0)
        ceiling = min(self.policy.longest_pause_seconds, self.policy.first_pause_seconds * 2**done)
        pause = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        budget = self.policy.budget(trouble)
        if now + pause - first > budget:
            return False
        self._retries[trouble] = done + 1
        log.warning(
            "%s failed (%s: %s); retry %d in %.1f s (%.0f of %.0f s of retries spent)",
            what,
            trouble.value,
            reason,
            done + 1,
            pause,
            now - first,
            budget,
        )
        self._sleep(pause)
        return True
