"""One progress bar for every long command (sweep, tune, the reproductions, collect): rich, on stderr,
transient, and nothing at all when disabled (``--quiet``, or output that is not a terminal)."""

from __future__ import annotations

from typing import Any


class Progress:
    """A bar counting finished items: ``grow`` adds to the total, ``advance`` counts one done.

    Use as a context manager; with ``enabled=False`` every call does nothing (rich is not imported)."""

    def __init__(self, enabled: bool, label: str = "runs") -> None:
        self.enabled, self.label = enabled, label
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> "Progress":
        import sys

        # rich draws a transient bar only on a terminal; elsewhere it would still leave a newline.
        if self.enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=0)
        return self

    def grow(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=self.bar.tasks[0].total + n)

    def advance(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def describe(self, text: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=text)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()
