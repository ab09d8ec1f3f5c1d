"""Index-build progress on the console (stderr): a rich bar on a terminal, a line every 10% otherwise (logs, CI)."""

from __future__ import annotations

import threading
import time
from typing import Any


class ConsoleProgress:
    """A `Progress` callback (done, total) for DenseIndex builds; safe to call from the build thread."""

    def __init__(self, label: str = "Embedding the knowledge chunks", console: Any = None) -> None:
        from rich.console import Console

        self.label = label
        self.console = console or Console(stderr=True)
        self._bar: Any = None
        self._task: Any = None
        self._last_step = -1
        self._started = 0.0
        self._lock = threading.Lock()

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            if not self._started:
                self._started = time.monotonic()
            if self.console.is_terminal:
                self._bar_update(done, total)
            else:
                self._line(done, total)
            if total and done >= total:
                self.close()

    def _bar_update(self, done: int, total: int) -> None:
        if self._bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            self._bar = Progress(*columns, console=self.console, transient=False)
            self._task = self._bar.add_task(self.label, total=total)
            self._bar.start()
        self._bar.update(self._task, completed=done, total=total)

    def _line(self, done: int, total: int) -> None:
        step = 10 * done // total if total else 10
        if step == self._last_step:
            return
        self._last_step = step
        elapsed = time.monotonic() - self._started
        self.console.print(f"{self.label}: {done}/{total} ({elapsed:.0f} s)", highlight=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            elapsed = time.monotonic() - self._started
            self.console.print(f"{self.label}: done in {elapsed:.0f} s", highlight=False)
