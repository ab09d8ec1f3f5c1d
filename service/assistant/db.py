"""The SQL store behind sessions, turns and Slack's retry dedup: SQLite under the data dir by default, Postgres
when DATABASE_URL is set (several workers, several hosts).

    db = open_database(settings.database_url, settings.data_dir / "sessions.sqlite")   # service/assistant/open_db.py
    db.execute("SELECT ... WHERE id=?", (sid,))      # rows; `?` placeholders in both dialects
    with db.lock(f"session:{sid}"):                  # one writer per key, across threads and (Postgres) processes
        ...

Statements use SQL both dialects run (`INSERT ... ON CONFLICT ... DO NOTHING | DO UPDATE`). A DATABASE_URL that
cannot be reached raises DependencyUnavailableError after a few retries with backoff: the service reports it in
/readyz and retries; it never falls back to a local SQLite file, which would split conversations across workers.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

log = logging.getLogger(__name__)
T = TypeVar("T")
Row = tuple[Any, ...]
CONNECT_BACKOFF_S = (0.5, 1.0, 2.0)  # retries before reporting the database unreachable
CONNECT_TIMEOUT_S = 2.0
WAL_AUTOCHECKPOINT_PAGES = 64  # SQLite folds its write-ahead log into the file every 64 pages (256 KiB) ...
WAL_SIZE_LIMIT_BYTES = 256 * 1024  # ... and truncates the log to this after each fold (it would stay at its peak)


class Database(Protocol):
    kind: str  # "sqlite" | "postgres"

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[Row]: ...

    def changes(self, sql: str, args: tuple[Any, ...] = ()) -> int: ...

    def lock(self, key: str) -> Any: ...  # a context manager

    def transaction(self) -> Any: ...  # a context manager

    def atomic(self, fn: Callable[[], T]) -> T: ...  # fn in one transaction (Postgres: run again on a lost connection)

    def describe(self) -> str: ...

    def ping(self, timeout_s: float = 2.0) -> None: ...  # raises when the store does not answer now

    def close(self) -> None: ...


class KeyedLocks:
    """One threading.Lock per key, created on demand and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users <= 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


class SqliteDatabase:
    """One connection (WAL, busy timeout), statements serialised by a lock; session locks are this process's. The
    write-ahead log is folded into the file every WAL_AUTOCHECKPOINT_PAGES and kept under WAL_SIZE_LIMIT_BYTES, and
    truncated on close and by `checkpoint()` (the prune command)."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
        self._conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
        self._mutex = threading.RLock()
        self._keys = KeyedLocks()

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[Row]:
        with self._mutex:
            return self._conn.execute(sql, args).fetchall()

    def changes(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._mutex:
            return self._conn.execute(sql, args).rowcount

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Statements inside run as one transaction (no other thread interleaves)."""
        with self._mutex:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def atomic(self, fn: Callable[[], T]) -> T:
        with self.transaction():
            return fn()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file and truncate it to nothing."""
        with self._mutex:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def lock(self, key: str) -> Any:
        return self._keys.hold(key)

    def describe(self) -> str:
        return f"sqlite ({self.path})"

    def ping(self, timeout_s: float = 2.0) -> None:
        self.execute("SELECT 1")

    def close(self) -> None:
        with self._mutex:
            with suppress(sqlite3.Error):  # closed already, or another process reads: the log stays for next open
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()


def redacted(url: str) -> str:
    """postgresql://user@host:port/db without the password, for messages and /readyz."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"
