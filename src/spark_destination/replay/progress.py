"""What ``replay`` shows while it runs: a progress bar on a terminal, plain lines otherwise.

Both write to stderr (the human channel): stdout carries only Fivetran JSON log lines, as the
destination's stdout does under Fivetran. Every step result is also logged, so stdout alone is
a complete record of the run.
"""

from __future__ import annotations

import logging
import sys
from types import TracebackType
from typing import TextIO

from spark_destination.replay.run import StepResult

log = logging.getLogger(__name__)


class PlainProgress:
    """One line per answered step, for logs and pipes."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def file_started(self, name: str, steps: int) -> None:
        log.info("replay: %s: %d step(s)", name, steps)
        self._stream.write(f"{name}: {steps} step(s)\n")
        self._stream.flush()

    def step_done(self, result: StepResult, seconds: float) -> None:
        log.info("replay: %s (%.2f s)", result.line(), seconds)
        self._stream.write(f"  {result.line()} ({seconds:.2f} s)\n")
        self._stream.flush()


class BarProgress:
    """A ``rich`` progress bar over the input files and their steps, on a terminal."""

    def __init__(self, stream: TextIO, files: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        # When stdout is the same terminal, log lines are printed above the bar, not through it.
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream),
            redirect_stdout=sys.stdout.isatty(),
            redirect_stderr=False,
        )
        self._files = self._progress.add_task("input files", total=files)
        self._steps = self._progress.add_task("set-up", total=None)
        self._started = 0

    def __enter__(self) -> BarProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        if self._started:
            self._progress.advance(self._files)
        self._progress.stop()

    def file_started(self, name: str, steps: int) -> None:
        log.info("replay: %s: %d step(s)", name, steps)
        if self._started:
            self._progress.advance(self._files)
        self._started += 1
        self._progress.reset(self._steps, total=steps, description=name)

    def step_done(self, result: StepResult, seconds: float) -> None:
        log.info("replay: %s (%.2f s)", result.line(), seconds)
        if result.outcome not in ("success", "table"):
            self._progress.console.print(f"{result.line()}", markup=False, highlight=False)
        self._progress.update(self._steps, advance=1, description=f"{result.step}")


def progress_for(stream: TextIO, files: int) -> PlainProgress | BarProgress:
    return BarProgress(stream, files) if stream.isatty() else PlainProgress(stream)
