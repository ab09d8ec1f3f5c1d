"""The dense index's small parts: its build report, its status as /readyz shows it, the corpus signature a
generation is built from, and the cross-process build lock."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from service.retrieval.types import Chunk

Progress = Callable[[int, int], None]


class BuildCancelled(Exception):
    """The process is stopping; the unfinished generation is left for the next build to delete."""


@dataclass(frozen=True)
class IndexReport:
    added: int
    updated: int
    deleted: int
    unchanged: int
    seconds: float
    rebuilt: bool = False  # the embedding model changed (or --rebuild): everything re-embedded
    total: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DenseStatus:
    state: str = "not loaded"  # not loaded | opening | building | waiting | ready | degraded | failed
    done: int = 0
    total: int = 0
    reason: str = ""
    rebuilding: bool = False  # ready (an index in use: the previous one, or the guide's part) while one builds

    def label(self) -> str:
        """What /readyz shows: `ready`, `building 120/472`, `rebuilding 166/545` (searching the index in use
        meanwhile), `degraded: <why>; rebuilding 12/472`."""
        if self.state == "ready":
            return f"rebuilding {self.done}/{self.total}" if self.rebuilding else "ready"
        if self.state in ("building", "waiting"):
            what = "building" if self.state == "building" else "waiting for another process's build"
            head = f"{what} {self.done}/{self.total}"
            return f"degraded: {self.reason}; re{head}" if self.reason else head
        return f"{self.state}: {self.reason}" if self.reason else self.state


def signature(chunks: Sequence[Chunk], model_id: str) -> str:
    digest = hashlib.sha256(model_id.encode())
    for c in sorted(chunks, key=lambda c: c.id):
        digest.update(f"\n{c.id}\t{c.hash}".encode())
    return digest.hexdigest()[:24]


@contextlib.contextmanager
def build_lock(path: Path, waiting: Callable[[], None], stop: threading.Event) -> Iterator[None]:
    """Exclusive across processes (flock on a file in the data dir); calls `waiting` while another holds it."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if stop.is_set():
                    raise BuildCancelled() from None
                waiting()
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
