"""A test-only fault-injection hook at the step boundaries of every request; off by default.

The executor calls ``boundary`` before every statement of a plan except the first, so a fault
can be injected after staging, between any two statements, and just before the statement that
commits. A boundary is named ``before <n>:<Op>`` (``n`` counts the plan's statements from 0), so
a test can enumerate a request's boundaries with ``recording`` and fail at each in turn.

Enabled only by ``inject`` or ``installed`` (tests, in the server's process): the first
matching boundary reached raises ``InjectedFault`` once. Otherwise ``boundary`` is a global read
and a return.

A few points that are not between two statements of one plan have a name of their own
(``FLUSH_RECORDED``) and a hook of their own (``at_points``), so that the boundaries a test
enumerates with ``recording`` stay those of the plans: a crash test stops there (e.g. a flush
killed after it recorded itself, before its MERGE ran), which no timing from outside can hit.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from spark_destination.core.errors import DestinationError

# A merge flush has written its record in the intermediate table; its MERGE has not run yet
# (``runtime.execute.deferred.run_flush``).
FLUSH_RECORDED: Final = "flush recorded"


class InjectedFault(DestinationError):
    """Raised by an enabled injection point (tests only)."""


@dataclass(frozen=True, slots=True)
class Boundary:
    """A point between two statements of a plan: before statement ``index`` (``op``)."""

    index: int
    op: str
    table: str

    @property
    def name(self) -> str:
        return f"before {self.index}:{self.op}"


Hook = Callable[[Boundary], None]
# Called with a named point (``FLUSH_RECORDED``) and the table it was reached for.
PointHook = Callable[[str, str], None]

_hook: Hook | None = None
_point_hook: PointHook | None = None
_guard = threading.Lock()


def boundary(index: int, op: object) -> None:
    """Called by the executor before statement ``index`` of a plan (index 0 is no boundary)."""
    hook = _hook
    if hook is None or index == 0:
        return
    table = getattr(op, "table", None)
    hook(Boundary(index=index, op=type(op).__name__, table=str(getattr(table, "name", ""))))


def point(name: str, table: str) -> None:
    """Called by the runtime at the named point ``name`` (for ``table``); off by default."""
    hook = _point_hook
    if hook is not None:
        hook(name, table)


@contextlib.contextmanager
def at_points(hook: PointHook) -> Iterator[None]:
    """Call ``hook`` at every named point reached (tests only)."""
    global _point_hook
    with _guard:
        previous, _point_hook = _point_hook, hook
    try:
        yield
    finally:
        with _guard:
            _point_hook = previous


@contextlib.contextmanager
def installed(hook: Hook) -> Iterator[None]:
    global _hook
    with _guard:
        previous, _hook = _hook, hook
    try:
        yield
    finally:
        with _guard:
            _hook = previous


@contextlib.contextmanager
def recording() -> Iterator[list[Boundary]]:
    """Collect the boundaries reached (the points a fault can be injected at)."""
    seen: list[Boundary] = []
    with installed(seen.append):
        yield seen


@contextlib.contextmanager
def inject(name: str, *, table: str = "") -> Iterator[list[Boundary]]:
    """Fail once at the boundary called ``name`` (on ``table`` if given); yields the hits."""
    hits: list[Boundary] = []
    with installed(_failing(name, table, hits)):
        yield hits


def _failing(name: str, table: str, hits: list[Boundary]) -> Hook:
    def hook(point: Boundary) -> None:
        if hits or point.name != name or (table and point.table != table):
            return
        hits.append(point)
        raise InjectedFault(f"injected fault {point.name} on {point.table or 'a table'}")

    return hook


# Called after a statement that writes a table has run (its commit applied), before the
# executor takes it as done: a test raises there what a catalog raises when it applied a commit
# but could not confirm it (``CommitStateUnknownException``).
CommitHook = Callable[[int, str], None]
_after_commit: CommitHook | None = None


def committed(index: int, table: str) -> None:
    """Called by the executor after statement ``index`` (writing ``table``) ran."""
    hook = _after_commit
    if hook is not None:
        hook(index, table)


@contextlib.contextmanager
def after_commit(hook: CommitHook) -> Iterator[None]:
    global _after_commit
    with _guard:
        previous, _after_commit = _after_commit, hook
    try:
        yield
    finally:
        with _guard:
            _after_commit = previous
