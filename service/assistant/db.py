"""The SQL store behind sessions, turns and Slack's retry dedup: SQLite under the data dir by default, Postgres
when DATABASE_URL is set (several workers, several hosts).

    db = open_database(settings.database_url, settings.data_dir / "sessions.sqlite")
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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from service.errors import DependencyUnavailableError

log = logging.getLogger(__name__)
Row = tuple[Any, ...]
CONNECT_BACKOFF_S = (0.5, 1.0, 2.0)  # retries before reporting the database unreachable
CONNECT_TIMEOUT_S = 2.0


class Database(Protocol):
    kind: str  # "sqlite" | "postgres"

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[Row]: ...

    def changes(self, sql: str, args: tuple[Any, ...] = ()) -> int: ...

    def lock(self, key: str) -> Any: ...  # a context manager

    def transaction(self) -> Any: ...  # a context manager

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
    """One connection (WAL, busy timeout), statements serialised by a lock; session locks are this process's."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
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

    def lock(self, key: str) -> Any:
        return self._keys.hold(key)

    def describe(self) -> str:
        return f"sqlite ({self.path})"

    def ping(self, timeout_s: float = 2.0) -> None:
        self.execute("SELECT 1")

    def close(self) -> None:
        with self._mutex:
            self._conn.close()


def redacted(url: str) -> str:
    """postgresql://user@host:port/db without the password, for messages and /readyz."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


class PostgresDatabase:
    """A connection pool. `lock(key)` holds a Postgres advisory lock on one pooled connection, and statements run
    by the same thread inside it use that connection, so a turn never waits for a second connection. 20
    connections per worker at most: 4 workers fit Postgres's default max_connections (100)."""

    kind = "postgres"

    def __init__(self, url: str, max_connections: int = 20) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self._errors: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
        self._keys = KeyedLocks()
        self._bound = threading.local()
        last: Exception | None = None
        for delay in (*CONNECT_BACKOFF_S, None):
            pool = ConnectionPool(url, min_size=1, max_size=max_connections, open=False, timeout=120,
                                  kwargs={"autocommit": True, "prepare_threshold": None})
            try:
                pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
                self.pool = pool
                return
            except Exception as exc:  # server down, bad URL, wrong password
                last = exc
                pool.close()
                if delay is not None:
                    time.sleep(delay)
        raise DependencyUnavailableError(
            f"The session database {redacted(url)} cannot be reached: {type(last).__name__}: {str(last)[:200]}",
            "Start Postgres or fix DATABASE_URL; the service retries and /readyz reports the state.",
        )

    def _unavailable(self, exc: BaseException) -> DependencyUnavailableError:
        return DependencyUnavailableError(f"The session database {redacted(self.url)} failed: {str(exc)[:200]}",
                                          "Check that Postgres is running; /readyz reports the state.")

    def _run(self, sql: str, args: tuple[Any, ...], fetch: bool) -> Any:
        sql = sql.replace("?", "%s")
        conn = getattr(self._bound, "conn", None)
        try:
            if conn is not None:
                cur = conn.execute(sql, args)
                return cur.fetchall() if fetch and cur.description else cur.rowcount
            with self.pool.connection() as c:
                cur = c.execute(sql, args)
                return cur.fetchall() if fetch and cur.description else cur.rowcount
        except self._errors as exc:
            raise self._unavailable(exc) from exc

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[Row]:
        rows = self._run(sql, args, True)
        return rows if isinstance(rows, list) else []

    def changes(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        return int(self._run(sql, args, False))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._bound_connection() as conn, conn.transaction():
            yield

    @contextmanager
    def _bound_connection(self) -> Iterator[Any]:
        outer = getattr(self._bound, "conn", None)
        if outer is not None:
            yield outer
            return
        try:
            with self.pool.connection() as conn:
                self._bound.conn = conn
                try:
                    yield conn
                finally:
                    self._bound.conn = None
        except self._errors as exc:
            raise self._unavailable(exc) from exc

    @contextmanager
    def lock(self, key: str) -> Iterator[None]:
        # threads of this process queue on a local lock first, so waiting holds no connection
        with self._keys.hold(key), self._bound_connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    def describe(self) -> str:
        return f"postgres ({redacted(self.url)})"

    def ping(self, timeout_s: float = 2.0) -> None:
        """SELECT 1 on a pooled connection, now: /readyz asks at each call (Postgres may stop after the start)."""
        try:
            with self.pool.connection(timeout=timeout_s) as conn:
                conn.execute("SELECT 1")
        except Exception as exc:  # server down (OperationalError), or no connection within the timeout
            raise self._unavailable(exc) from exc

    def close(self) -> None:
        self.pool.close()


def open_database(database_url: str, sqlite_path: Path) -> SqliteDatabase | PostgresDatabase:
    """Postgres when a URL is configured (or DependencyUnavailableError), else SQLite at `sqlite_path`."""
    if not database_url:
        return SqliteDatabase(sqlite_path)
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise DependencyUnavailableError(
            f"DATABASE_URL is set but the Postgres driver is missing ({exc.name}).",
            "Install the service extra: pip install -e '.[service]' (psycopg[binary], psycopg-pool).",
        ) from exc
    return PostgresDatabase(database_url)
