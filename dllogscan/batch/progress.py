"""A rich progress line on a terminal (files done, MB/s, failures so far); silent when piped."""
from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    """Counts what the batch has done; draws it only when standard error is a terminal."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() and sys.stdout.isatty() if enabled is None else enabled
        self.files = self.failures = self.errors = self.bytes = self.links = 0
        self.start = time.perf_counter()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "Progress":
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress as Bar, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task(self._text())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=self._text())
            self._bar.__exit__(*exc)

    @property
    def seconds(self) -> float:
        return max(time.perf_counter() - self.start, 1e-9)

    def _text(self) -> str:
        mbs = self.bytes / self.seconds / 1e6
        return (f"{self.files} sources  {mbs:,.1f} MB/s  [red]{self.failures} with failures[/red]  "
                f"[yellow]{self.errors} unreadable[/yellow]")

    def advance(self, found: bool, error: bool, nbytes: int, link: bool = False) -> None:
        """Count one row; a link's row (its target read under its own name) is no error."""
        self.files += 1
        self.failures += found
        self.errors += error and not link
        self.links += link
        self.bytes += nbytes
        if self._bar is not None and (self.files % 50 == 0 or self.files < 50):
            self._bar.update(self._task, description=self._text())
