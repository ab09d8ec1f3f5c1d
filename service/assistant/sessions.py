"""Sessions and their turns, stored once each: a session row (owner, title, times, turn count) and one row per turn
(message, answer, the workload it was planned from, the AskResult with its structured plan, a "stopped" flag), and
people's 👍/👎 on a turn (advisor_feedback: one row per turn and rater).
Storage grows linearly with the turns; the conversation handed to the agent is rebuilt from them.

Works on SQLite or Postgres (service.assistant.db); the schema is created and migrated on open.
"""

from __future__ import annotations

import builtins
import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from service.assistant.db import Database, SqliteDatabase
from service.assistant.types import HistoryTurn, SessionInfo
from service.errors import AdvisorError, InvalidInputError

log = logging.getLogger(__name__)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS advisor_sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, "
    "updated_at TEXT, turns INTEGER, owner TEXT NOT NULL DEFAULT '')",
    "CREATE TABLE IF NOT EXISTS advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "owner TEXT NOT NULL DEFAULT '', request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, "
    "workload TEXT, result TEXT, stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, "
    "PRIMARY KEY (session_id, seq))",
    "CREATE UNIQUE INDEX IF NOT EXISTS advisor_turns_request ON advisor_turns (owner, request_id)",
    "CREATE INDEX IF NOT EXISTS advisor_sessions_owner ON advisor_sessions (owner, updated_at)",
    # a person's 👍 (1) or 👎 (-1) on one turn; their last click counts. Added to existing stores on open.
    "CREATE TABLE IF NOT EXISTS advisor_feedback (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "rater TEXT NOT NULL DEFAULT '', rating INTEGER NOT NULL, source TEXT NOT NULL DEFAULT '', "
    "created_at TEXT NOT NULL, PRIMARY KEY (session_id, seq, rater))",
)
Rating = Literal["up", "down"]
_RATING = {"up": 1, "down": -1}
_TURN_COLS = "seq, request_id, user_text, answer, workload, result, stopped, created_at"


class SessionNotFoundError(AdvisorError):
    code = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Unknown session '{session_id[:128]}'.", "Start a new chat without session_id, or list "
                         "sessions with GET /v1/sessions.")


class TurnRecord(HistoryTurn):
    """A stored turn: the history fields plus its number, the request id that asked it and the full result."""

    seq: int = 0
    request_id: str | None = None
    result: dict[str, Any] | None = Field(default=None, description="the AskResult as answered")
    stopped: bool = False
    created_at: str = ""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _dumps(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _turn(row: tuple[Any, ...]) -> TurnRecord:
    seq, request_id, user, answer, workload, result, stopped, created = row
    stored = json.loads(result) if result else None
    intent = stored.get("intent") if isinstance(stored, dict) else None
    return TurnRecord(seq=int(seq), request_id=request_id, user=user, assistant=answer,
                      workload=json.loads(workload) if workload else None, intent=intent,
                      result=stored, stopped=bool(stopped), created_at=created)


class SessionStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        with db.lock("advisor-schema"):
            self._migrate_columns()
            for statement in SCHEMA:
                db.execute(statement)

    def _migrate_columns(self) -> None:
        """Session files from before turns were stored have no owner column: add it (existing rows: no owner)."""
        try:
            self.db.execute("SELECT turns FROM advisor_sessions LIMIT 1")
        except Exception:
            return  # no table yet: SCHEMA creates it
        try:
            self.db.execute("SELECT owner FROM advisor_sessions LIMIT 1")
        except Exception:
            self.db.execute("ALTER TABLE advisor_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''")

    @staticmethod
    def _owned(owner: str | None) -> tuple[str, tuple[Any, ...]]:
        return ("", ()) if owner is None else (" AND owner=?", (owner,))

    def get(self, session_id: str, owner: str | None = None) -> SessionInfo | None:
        where, args = self._owned(owner)
        rows = self.db.execute("SELECT id, title, created_at, updated_at, turns FROM advisor_sessions WHERE id=?"
                               + where, (session_id, *args))
        if not rows:
            return None
        r = rows[0]
        return SessionInfo(session_id=r[0], title=r[1], created_at=r[2], updated_at=r[3], turns=r[4])

    def exists(self, session_id: str, owner: str | None = None) -> bool:
        return self.get(session_id, owner) is not None

    def owner_of(self, session_id: str) -> str | None:
        rows = self.db.execute("SELECT owner FROM advisor_sessions WHERE id=?", (session_id,))
        return str(rows[0][0]) if rows else None

    def list(self, owner: str | None = None) -> list[SessionInfo]:
        where, args = ("", ()) if owner is None else (" WHERE owner=?", (owner,))
        rows = self.db.execute("SELECT id, title, created_at, updated_at, turns FROM advisor_sessions" + where
                               + " ORDER BY updated_at DESC, id", args)
        return [SessionInfo(session_id=r[0], title=r[1], created_at=r[2], updated_at=r[3], turns=r[4]) for r in rows]

    def rename(self, session_id: str, title: str, owner: str | None = None) -> SessionInfo:
        where, args = self._owned(owner)
        if self.db.changes("UPDATE advisor_sessions SET title=? WHERE id=?" + where,
                           (title.strip(), session_id, *args)) == 0:
            raise SessionNotFoundError(session_id)
        info = self.get(session_id)
        assert info is not None
        return info

    def delete(self, session_id: str, owner: str | None = None) -> None:
        where, args = self._owned(owner)
        if self.db.changes("DELETE FROM advisor_sessions WHERE id=?" + where, (session_id, *args)) == 0:
            raise SessionNotFoundError(session_id)
        self.db.execute("DELETE FROM advisor_turns WHERE session_id=?", (session_id,))
        self.db.execute("DELETE FROM advisor_feedback WHERE session_id=?", (session_id,))

    # -- turns ---------------------------------------------------------------------------------------
    def turns(self, session_id: str) -> builtins.list[TurnRecord]:
        rows = self.db.execute(f"SELECT {_TURN_COLS} FROM advisor_turns WHERE session_id=? ORDER BY seq",
                               (session_id,))
        return [_turn(r) for r in rows]

    def answered(self, owner: str | None, request_id: str) -> tuple[str, TurnRecord] | None:
        """(session id, turn) already answered for this caller's request id, if any."""
        rows = self.db.execute(f"SELECT session_id, {_TURN_COLS} FROM advisor_turns WHERE owner=? AND request_id=?",
                               (owner or "", request_id))
        return (str(rows[0][0]), _turn(rows[0][1:])) if rows else None

    def append(self, session_id: str, owner: str | None, turn: TurnRecord) -> TurnRecord:
        """Store one turn (and the session on its first turn) in one transaction. Callers hold db.lock(session)."""
        stamp = turn.created_at or now()
        with self.db.transaction():
            rows = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM advisor_turns WHERE session_id=?",
                                   (session_id,))
            seq = int(rows[0][0]) + 1
            self.db.execute(
                f"INSERT INTO advisor_turns (session_id, owner, {_TURN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, owner or "", seq, turn.request_id, turn.user, turn.assistant, _dumps(turn.workload),
                 _dumps(turn.result), int(turn.stopped), stamp))
            title = " ".join(turn.user.split())[:40] or "chat"
            self.db.execute(
                "INSERT INTO advisor_sessions (id, title, created_at, updated_at, turns, owner) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET updated_at=excluded.updated_at, turns=excluded.turns",
                (session_id, title, stamp, stamp, seq, owner or ""))
        return turn.model_copy(update={"seq": seq, "created_at": stamp})

    # -- feedback -------------------------------------------------------------------------------------
    def rate(self, session_id: str, seq: int, rating: Rating, rater: str = "", source: str = "") -> None:
        """Store one person's rating of one turn (a second click replaces the first)."""
        if not self.db.execute("SELECT 1 FROM advisor_turns WHERE session_id=? AND seq=?", (session_id, seq)):
            raise InvalidInputError(f"Session '{session_id[:128]}' has no turn {seq}.",
                                    "Rate a turn that was answered: its session id and 1-based turn number.")
        self.db.execute(
            "INSERT INTO advisor_feedback (session_id, seq, rater, rating, source, created_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_id, seq, rater) DO UPDATE SET rating=excluded.rating, source=excluded.source, "
            "created_at=excluded.created_at", (session_id, seq, rater, _RATING[rating], source, now()))

    def feedback_counts(self) -> dict[str, dict[str, int]]:
        """👍/👎 per question type (the rated turn's intent): {intent: {"up": n, "down": n}}."""
        rows = self.db.execute("SELECT f.rating, t.result FROM advisor_feedback f JOIN advisor_turns t "
                               "ON t.session_id = f.session_id AND t.seq = f.seq")
        out: dict[str, dict[str, int]] = {}
        for rating, result in rows:
            intent = str((json.loads(result) if result else {}).get("intent") or "unknown")
            counts = out.setdefault(intent, {"up": 0, "down": 0})
            counts["up" if int(rating) > 0 else "down"] += 1
        return dict(sorted(out.items()))

    def sqlite(self) -> SqliteDatabase | None:
        return self.db if isinstance(self.db, SqliteDatabase) else None
