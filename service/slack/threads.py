"""A Slack thread is an assistant session: (channel, thread_ts) -> session id, in SQLite under the data dir.

The mapping survives restarts, so a follow-up in an old thread continues its conversation. The database opens on
first use, never at import or when the app is built.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any


class SlackDb:
    """One SQLite file shared by the thread map and the event dedup store; thread-safe, opened lazily."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS slack_threads (channel TEXT NOT NULL, thread_ts TEXT NOT "
                             "NULL, session_id TEXT NOT NULL, updated_at REAL NOT NULL, "
                             "PRIMARY KEY (channel, thread_ts))")
                conn.execute("CREATE TABLE IF NOT EXISTS slack_events (event_id TEXT PRIMARY KEY, "
                             "seen_at REAL NOT NULL)")
                conn.execute("CREATE INDEX IF NOT EXISTS slack_events_seen ON slack_events (seen_at)")
            self._conn = conn
        return self._conn

    def execute(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Run one statement in its own transaction; returns the rows (for SELECT) or [] ."""
        with self._lock:
            conn = self._open()
            with conn:
                cur = conn.execute(sql, args)
                return cur.fetchall()

    def changes(self, sql: str, args: tuple[object, ...] = ()) -> int:
        """Run one write statement; returns how many rows it changed."""
        with self._lock:
            conn = self._open()
            with conn:
                return conn.execute(sql, args).rowcount

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class SharedSlackDb(SlackDb):
    """The same tables on Postgres (DATABASE_URL): every worker sees one thread map and one dedup store."""

    def __init__(self, database_url: str) -> None:
        super().__init__(Path("postgres"))
        self.database_url = database_url
        self._db: Any = None

    def _shared(self) -> Any:
        with self._lock:
            if self._db is None:
                from service.assistant.open_db import open_database

                db = open_database(self.database_url, Path("unused"))
                db.execute("CREATE TABLE IF NOT EXISTS slack_threads (channel TEXT NOT NULL, thread_ts TEXT NOT "
                           "NULL, session_id TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL, "
                           "PRIMARY KEY (channel, thread_ts))")
                db.execute("CREATE TABLE IF NOT EXISTS slack_events (event_id TEXT PRIMARY KEY, "
                           "seen_at DOUBLE PRECISION NOT NULL)")
                db.execute("CREATE INDEX IF NOT EXISTS slack_events_seen ON slack_events (seen_at)")
                self._db = db
            return self._db

    def execute(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        rows: list[tuple[object, ...]] = self._shared().execute(sql, args)
        return rows

    def changes(self, sql: str, args: tuple[object, ...] = ()) -> int:
        return int(self._shared().changes(sql, args))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def slack_db(data_file: Path, database_url: str) -> SlackDb:
    """Postgres when DATABASE_URL is set (shared by all workers), else SQLite at `data_file`."""
    return SharedSlackDb(database_url) if database_url else SlackDb(data_file)


class ThreadSessions:
    def __init__(self, db: SlackDb) -> None:
        self.db = db

    def get(self, channel: str, thread_ts: str) -> str | None:
        rows = self.db.execute("SELECT session_id FROM slack_threads WHERE channel=? AND thread_ts=?",
                               (channel, thread_ts))
        return str(rows[0][0]) if rows else None

    def put(self, channel: str, thread_ts: str, session_id: str) -> None:
        self.db.execute("INSERT INTO slack_threads VALUES (?, ?, ?, ?) ON CONFLICT (channel, thread_ts) "
                        "DO UPDATE SET session_id=excluded.session_id, updated_at=excluded.updated_at",
                        (channel, thread_ts, session_id, time.time()))
