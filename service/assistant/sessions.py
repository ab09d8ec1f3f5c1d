"""Session metadata (title, times, turns) in SQLite beside the LangGraph checkpoints; survives restarts."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from service.assistant.types import SessionInfo
from service.errors import AdvisorError


class SessionNotFoundError(AdvisorError):
    code = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Unknown session '{session_id}'.", "Start a new chat without session_id, or list "
                         "sessions with GET /v1/sessions.")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SessionStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("CREATE TABLE IF NOT EXISTS advisor_sessions (id TEXT PRIMARY KEY, title TEXT, "
                             "created_at TEXT, updated_at TEXT, turns INTEGER)")

    def _row(self, session_id: str) -> SessionInfo | None:
        cur = self._db.execute("SELECT id, title, created_at, updated_at, turns FROM advisor_sessions WHERE id=?",
                               (session_id,))
        r = cur.fetchone()
        return None if r is None else SessionInfo(session_id=r[0], title=r[1], created_at=r[2], updated_at=r[3],
                                                   turns=r[4])

    def exists(self, session_id: str) -> bool:
        with self._lock:
            return self._row(session_id) is not None

    def touch(self, session_id: str, first_message: str) -> None:
        now = _now()
        with self._lock, self._db:
            if self._row(session_id) is None:
                title = " ".join(first_message.split())[:40] or "chat"
                self._db.execute("INSERT INTO advisor_sessions VALUES (?, ?, ?, ?, 1)", (session_id, title, now, now))
            else:
                self._db.execute("UPDATE advisor_sessions SET updated_at=?, turns=turns+1 WHERE id=?",
                                 (now, session_id))

    def list(self) -> list[SessionInfo]:
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT id FROM advisor_sessions ORDER BY updated_at DESC")]
            return [s for i in ids if (s := self._row(i)) is not None]

    def rename(self, session_id: str, title: str) -> SessionInfo:
        with self._lock, self._db:
            if self._row(session_id) is None:
                raise SessionNotFoundError(session_id)
            self._db.execute("UPDATE advisor_sessions SET title=? WHERE id=?", (title.strip()[:80], session_id))
            row = self._row(session_id)
        assert row is not None
        return row

    def delete(self, session_id: str) -> None:
        with self._lock, self._db:
            if self._row(session_id) is None:
                raise SessionNotFoundError(session_id)
            self._db.execute("DELETE FROM advisor_sessions WHERE id=?", (session_id,))
