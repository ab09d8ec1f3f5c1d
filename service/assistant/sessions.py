"""Sessions and their turns, stored once each: a session row (owner, title, times, turn count) and one row per turn
(message, answer, the workload it was planned from, its question type, the compact AskResult (service/assistant/
compact.py), a "stopped" flag), and people's 👍/👎 on a turn (advisor_feedback: one row per turn and rater).
A turn reads back only what it needs: the last CONTEXT_TURNS turns' texts, workloads and types (`context`), so its
cost does not grow with the session; history is read a page at a time (`page`).

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

from service.assistant import compact
from service.assistant.db import Database, SqliteDatabase
from service.assistant.schema import ensure_schema
from service.assistant.types import HistoryTurn, SessionInfo
from service.errors import AdvisorError, InvalidInputError

log = logging.getLogger(__name__)
Rating = Literal["up", "down"]
_RATING = {"up": 1, "down": -1}
_TURN_COLS = "seq, request_id, user_text, answer, workload, result, stopped, created_at"
# the type comes from its column; a row stored before the column had it in its result
_CONTEXT_COLS = "seq, user_text, answer, workload, intent, CASE WHEN intent IS NULL THEN result END"


class SessionNotFoundError(AdvisorError):
    code = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Unknown session '{session_id[:128]}'.", "Start a new chat without session_id, or list "
                         "sessions with GET /v1/sessions.")


class SessionFullError(AdvisorError):
    """The session holds the most turns one session keeps (GPU_ADVISOR_SESSION_MAX_TURNS): HTTP 409."""

    code = "session_full"

    def __init__(self, session_id: str, turns: int) -> None:
        super().__init__(f"Session '{session_id[:128]}' has {turns} turns, the most one session keeps "
                         "(GPU_ADVISOR_SESSION_MAX_TURNS); nothing was stored for this message.",
                         "Start a new chat (send the message without session_id); this session stays readable "
                         "at GET /v1/sessions/{id}/messages.")


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
    stored = compact.unpacked(json.loads(result), answer) if result else None
    intent = stored.get("intent") if isinstance(stored, dict) else None
    return TurnRecord(seq=int(seq), request_id=request_id, user=user, assistant=answer,
                      workload=json.loads(workload) if workload else None, intent=intent,
                      result=stored, stopped=bool(stopped), created_at=created)


def _history(row: tuple[Any, ...]) -> HistoryTurn:
    _seq, user, answer, workload, intent, legacy = row
    if intent is None and legacy:
        intent = json.loads(legacy).get("intent")
    return HistoryTurn(user=user, assistant=answer, workload=json.loads(workload) if workload else None,
                       intent=intent)


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
        """Every turn, oldest first (the CLI's export, the migration); a page at a time is `page`."""
        own = self.resolve(session_id, owner)
        if own is None:
            return []
        rows = self.db.execute(f"SELECT {_TURN_COLS} FROM advisor_turns WHERE owner=? AND session_id=? ORDER BY seq",
                               (own, session_id))
        return [_turn(r) for r in rows]

    def page(self, session_id: str, owner: str, limit: int, before: int | None = None
             ) -> tuple[builtins.list[TurnRecord], bool]:
        """(up to `limit` turns numbered below `before` (the newest when None), oldest first; whether older ones
        exist)."""
        rows = self.db.execute(f"SELECT {_TURN_COLS} FROM advisor_turns WHERE owner=? AND session_id=? AND seq<? "
                               "ORDER BY seq DESC LIMIT ?", (owner, session_id, before or 2**62, limit + 1))
        return [_turn(r) for r in reversed(rows[:limit])], len(rows) > limit

    def context(self, session_id: str, owner: str, turns: int) -> builtins.list[HistoryTurn]:
        """What the next turn reads of the conversation: the last `turns` turns (texts, workloads, question types),
        oldest first, and before them the latest turn that carries a workload or a type when none of those does
        (the question a follow-up continues). Nothing else is read: the cost is flat in the session's length."""
        rows = self.db.execute(f"SELECT {_CONTEXT_COLS} FROM advisor_turns WHERE owner=? AND session_id=? "
                               "ORDER BY seq DESC LIMIT ?", (owner, session_id, turns))
        recent = [_history(r) for r in reversed(rows)]
        if rows and len(rows) == turns and not any(t.workload or t.intent for t in recent):
            carried = self.db.execute(
                f"SELECT {_CONTEXT_COLS} FROM advisor_turns WHERE owner=? AND session_id=? AND seq<? AND "
                "(workload IS NOT NULL OR intent IS NOT NULL OR result IS NOT NULL) ORDER BY seq DESC LIMIT 1",
                (owner, session_id, int(rows[-1][0])))
            recent = [_history(r) for r in carried] + recent
        return recent

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
        """Store one turn (and the session on its first turn) in one transaction, its result compact. Callers hold
        db.lock(session). `owner` None (a trusted caller) continues whoever's session it is, or starts one with no
        owner. On Postgres a transaction whose connection dies is run again once; the second run first looks for
        the turn (its owner, session, time stamp and text), so a turn whose commit went through is never stored
        twice."""
        own = self.resolve(session_id, owner) or ""
        stamp = turn.created_at or now()
        result = _dumps(compact.packed(turn.result, turn.assistant)) if turn.result is not None else None
        tries = 0

        def write() -> int:
            nonlocal tries
            tries += 1
            if tries > 1:
                done = self.db.execute("SELECT seq FROM advisor_turns WHERE owner=? AND session_id=? AND created_at=? "
                                       "AND user_text=?", (own, session_id, stamp, turn.user))
                if done:
                    return int(done[0][0])
            rows = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM advisor_turns WHERE owner=? AND session_id=?",
                                   (own, session_id))
            seq = int(rows[0][0]) + 1
            self.db.execute(
                f"INSERT INTO advisor_turns (session_id, owner, intent, {_TURN_COLS}, request_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, own, turn.intent, seq, turn.request_id, turn.user, turn.assistant,
                 _dumps(turn.workload), result, int(turn.stopped), stamp, turn.request_hash))
            title = " ".join(turn.user.split())[:40] or "chat"
            self.db.execute(
                "INSERT INTO advisor_sessions (id, title, created_at, updated_at, turns, owner) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (owner, id) DO UPDATE SET updated_at=excluded.updated_at, turns=excluded.turns",
                (session_id, title, stamp, stamp, seq, own))
            return seq

        seq = self.db.atomic(write)
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
        rows = self.db.execute("SELECT f.rating, t.intent, CASE WHEN t.intent IS NULL THEN t.result END "
                               "FROM advisor_feedback f JOIN advisor_turns t "
                               "ON t.owner = f.owner AND t.session_id = f.session_id AND t.seq = f.seq")
        out: dict[str, dict[str, int]] = {}
        for rating, kind, result in rows:
            intent = str(kind or (json.loads(result) if result else {}).get("intent") or "unknown")
            counts = out.setdefault(intent, {"up": 0, "down": 0})
            counts["up" if int(rating) > 0 else "down"] += 1
        return dict(sorted(out.items()))

    def sqlite(self) -> SqliteDatabase | None:
        return self.db if isinstance(self.db, SqliteDatabase) else None
