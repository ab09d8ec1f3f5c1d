"""Sessions and their turns, stored once each: a session row (owner, title, times, turn count) and one row per turn
(message, answer, the workload it was planned from, the AskResult with its structured plan, a "stopped" flag), and
people's 👍/👎 on a turn (advisor_feedback: one row per turn and rater).
Storage grows linearly with the turns; the conversation handed to the agent is rebuilt from them.

A session is its owner's: it is keyed by (owner, id), so two owners may use the same id (an OpenAI `user`) and
each has a session of their own. `owner=None` is a trusted caller (the CLI, Slack, the evals): it means the most
recently updated session with that id, whoever owns it.

Works on SQLite or Postgres (service.assistant.db); the schema is created and migrated on open (schema.py).
"""

from __future__ import annotations

import builtins
import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from service.assistant.db import Database, SqliteDatabase
from service.assistant.schema import ensure_schema
from service.assistant.types import HistoryTurn, SessionInfo
from service.errors import AdvisorError, InvalidInputError

log = logging.getLogger(__name__)
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
    request_hash: str | None = Field(default=None, description="sha256 of the request the request id came with")
    result: dict[str, Any] | None = Field(default=None, description="the AskResult as answered")
    stopped: bool = False
    created_at: str = ""


def request_digest(message: str, workload: dict[str, Any] | None) -> str:
    """sha256 of a request as the turn reads it (the message, stripped, and the form's workload, keys sorted): two
    bodies that would be answered alike have the same digest; anything else differs (an idempotency key sent with
    another request is refused)."""
    import hashlib

    canonical = json.dumps({"message": message.strip(), "workload": workload}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")  # orders turns within a second


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
            ensure_schema(db)

    def owner_of(self, session_id: str) -> str | None:
        """The owner of the most recently updated session with this id (for trusted callers), or None."""
        rows = self.db.execute("SELECT owner FROM advisor_sessions WHERE id=? ORDER BY updated_at DESC LIMIT 1",
                               (session_id,))
        return str(rows[0][0]) if rows else None

    def resolve(self, session_id: str, owner: str | None) -> str | None:
        """The owner a call means: `owner` itself, or for a trusted caller (None) whoever owns the id."""
        return owner if owner is not None else self.owner_of(session_id)

    def get(self, session_id: str, owner: str | None = None) -> SessionInfo | None:
        own = self.resolve(session_id, owner)
        rows = [] if own is None else self.db.execute(
            "SELECT id, title, created_at, updated_at, turns FROM advisor_sessions WHERE owner=? AND id=?",
            (own, session_id))
        if not rows:
            return None
        r = rows[0]
        return SessionInfo(session_id=r[0], title=r[1], created_at=r[2], updated_at=r[3], turns=r[4])

    def exists(self, session_id: str, owner: str | None = None) -> bool:
        return self.get(session_id, owner) is not None

    def list(self, owner: str | None = None) -> list[SessionInfo]:
        where, args = ("", ()) if owner is None else (" WHERE owner=?", (owner,))
        rows = self.db.execute("SELECT id, title, created_at, updated_at, turns FROM advisor_sessions" + where
                               + " ORDER BY updated_at DESC, id", args)
        return [SessionInfo(session_id=r[0], title=r[1], created_at=r[2], updated_at=r[3], turns=r[4]) for r in rows]

    def rename(self, session_id: str, title: str, owner: str | None = None) -> SessionInfo:
        own = self.resolve(session_id, owner)
        if own is None or self.db.changes("UPDATE advisor_sessions SET title=? WHERE owner=? AND id=?",
                                          (title.strip(), own, session_id)) == 0:
            raise SessionNotFoundError(session_id)
        info = self.get(session_id, own)
        assert info is not None
        return info

    def delete(self, session_id: str, owner: str | None = None) -> None:
        own = self.resolve(session_id, owner)
        if own is None or self.db.changes("DELETE FROM advisor_sessions WHERE owner=? AND id=?",
                                          (own, session_id)) == 0:
            raise SessionNotFoundError(session_id)
        self.db.execute("DELETE FROM advisor_turns WHERE owner=? AND session_id=?", (own, session_id))
        self.db.execute("DELETE FROM advisor_feedback WHERE owner=? AND session_id=?", (own, session_id))

    # -- turns ---------------------------------------------------------------------------------------
    def turns(self, session_id: str, owner: str | None = None) -> builtins.list[TurnRecord]:
        own = self.resolve(session_id, owner)
        if own is None:
            return []
        rows = self.db.execute(f"SELECT {_TURN_COLS} FROM advisor_turns WHERE owner=? AND session_id=? ORDER BY seq",
                               (own, session_id))
        return [_turn(r) for r in rows]

    def session_with_answer(self, owner: str, answer: str) -> str | None:
        """The owner's most recent session whose stored answer is `answer` (a stateless client sent it back)."""
        text = answer.strip()
        if not text:
            return None
        rows = self.db.execute("SELECT session_id FROM advisor_turns WHERE owner=? AND (answer=? OR TRIM(answer)=?) "
                               "ORDER BY created_at DESC, seq DESC LIMIT 1", (owner, text, text))
        return str(rows[0][0]) if rows else None

    def answered(self, owner: str | None, request_id: str) -> tuple[str, TurnRecord] | None:
        """(session id, turn) already answered for this caller's request id, if any."""
        rows = self.db.execute(f"SELECT session_id, request_hash, {_TURN_COLS} FROM advisor_turns WHERE owner=? "
                               "AND request_id=?", (owner or "", request_id))
        if not rows:
            return None
        turn = _turn(rows[0][2:]).model_copy(update={"request_hash": rows[0][1]})
        return str(rows[0][0]), turn

    def append(self, session_id: str, owner: str | None, turn: TurnRecord) -> TurnRecord:
        """Store one turn (and the session on its first turn) in one transaction. Callers hold db.lock(session).
        `owner` None (a trusted caller) continues whoever's session it is, or starts one with no owner."""
        own = self.resolve(session_id, owner) or ""
        stamp = turn.created_at or now()
        with self.db.transaction():
            rows = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM advisor_turns WHERE owner=? AND session_id=?",
                                   (own, session_id))
            seq = int(rows[0][0]) + 1
            self.db.execute(
                f"INSERT INTO advisor_turns (session_id, owner, {_TURN_COLS}, request_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, own, seq, turn.request_id, turn.user, turn.assistant, _dumps(turn.workload),
                 _dumps(turn.result), int(turn.stopped), stamp, turn.request_hash))
            title = " ".join(turn.user.split())[:40] or "chat"
            self.db.execute(
                "INSERT INTO advisor_sessions (id, title, created_at, updated_at, turns, owner) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (owner, id) DO UPDATE SET updated_at=excluded.updated_at, turns=excluded.turns",
                (session_id, title, stamp, stamp, seq, own))
        return turn.model_copy(update={"seq": seq, "created_at": stamp})

    # -- feedback -------------------------------------------------------------------------------------
    def rate(self, session_id: str, seq: int, rating: Rating, rater: str = "", source: str = "",
             owner: str | None = None) -> None:
        """Store one person's rating of one turn (a second click replaces the first)."""
        own = self.resolve(session_id, owner)
        if own is None or not self.db.execute("SELECT 1 FROM advisor_turns WHERE owner=? AND session_id=? AND seq=?",
                                              (own, session_id, seq)):
            raise InvalidInputError(f"Session '{session_id[:128]}' has no turn {seq}.",
                                    "Rate a turn that was answered: its session id and 1-based turn number.")
        self.db.execute(
            "INSERT INTO advisor_feedback (owner, session_id, seq, rater, rating, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner, session_id, seq, rater) DO UPDATE SET "
            "rating=excluded.rating, source=excluded.source, created_at=excluded.created_at",
            (own, session_id, seq, rater, _RATING[rating], source, now()))

    def feedback_counts(self) -> dict[str, dict[str, int]]:
        """👍/👎 per question type (the rated turn's intent): {intent: {"up": n, "down": n}}."""
        rows = self.db.execute("SELECT f.rating, t.result FROM advisor_feedback f JOIN advisor_turns t "
                               "ON t.owner = f.owner AND t.session_id = f.session_id AND t.seq = f.seq")
        out: dict[str, dict[str, int]] = {}
        for rating, result in rows:
            intent = str((json.loads(result) if result else {}).get("intent") or "unknown")
            counts = out.setdefault(intent, {"up": 0, "down": 0})
            counts["up" if int(rating) > 0 else "down"] += 1
        return dict(sorted(out.items()))

    def sqlite(self) -> SqliteDatabase | None:
        return self.db if isinstance(self.db, SqliteDatabase) else None
