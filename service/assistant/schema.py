"""The session store's tables, created on open and migrated in place (SQLite and Postgres alike).

    ensure_schema(db)     # under db.lock("advisor-schema"): columns added, version 2 keys, missing tables made

Version 2 (issue "The edges users hit", item 7): a session is identified by its owner and its id together, so the
same id (an OpenAI `user` such as carol@corp.example) from two owners is two sessions; before, the id alone was the
key and the first caller to use it owned it. Turns and ratings carry the session's owner in their key too. A store
from before is rebuilt once (copy, drop, rename: both dialects run it): every session keeps its owner and id, so
it reads as before.

Version 3 (issue "Request text never becomes code...", item 8): a turn's question type has a column of its own
(`intent`), so the next turn reads its context without parsing stored results; rows from before get it from their
stored result once, on open.
"""

from __future__ import annotations

import json
import logging

from service.assistant.db import Database

log = logging.getLogger(__name__)
VERSION = 3
SESSIONS = ("advisor_sessions", "(id TEXT NOT NULL, title TEXT, created_at TEXT, updated_at TEXT, turns INTEGER, "
            "owner TEXT NOT NULL DEFAULT '', PRIMARY KEY (owner, id))")
TURNS = ("advisor_turns", "(session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL DEFAULT '', "
         "request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, result TEXT, "
         "stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, intent TEXT, request_hash TEXT, "
         "PRIMARY KEY (owner, session_id, seq))")
# a person's 👍 (1) or 👎 (-1) on one turn; their last click counts
FEEDBACK = ("advisor_feedback", "(session_id TEXT NOT NULL, seq INTEGER NOT NULL, rater TEXT NOT NULL DEFAULT '', "
            "rating INTEGER NOT NULL, source TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, "
            "owner TEXT NOT NULL DEFAULT '', PRIMARY KEY (owner, session_id, seq, rater))")
TABLES = (SESSIONS, TURNS, FEEDBACK)
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS advisor_turns_request ON advisor_turns (owner, request_id)",
    "CREATE INDEX IF NOT EXISTS advisor_sessions_owner ON advisor_sessions (owner, updated_at)",
    "CREATE INDEX IF NOT EXISTS advisor_sessions_id ON advisor_sessions (id, updated_at)",
    "CREATE INDEX IF NOT EXISTS advisor_sessions_updated ON advisor_sessions (updated_at)",  # retention
)
META = "CREATE TABLE IF NOT EXISTS advisor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
SESSION_COLS = "id, title, created_at, updated_at, turns, owner"
TURN_COLS = "session_id, seq, owner, request_id, user_text, answer, workload, result, stopped, created_at"
FEEDBACK_COLS = "session_id, seq, rater, rating, source, created_at, owner"


def _works(db: Database, sql: str) -> bool:
    try:
        db.execute(sql)
        return True
    except Exception:  # no such table or column (outside a transaction: Postgres carries on)
        return False


def _version(db: Database) -> int:
    rows = db.execute("SELECT value FROM advisor_meta WHERE key='schema_version'")
    return int(rows[0][0]) if rows else 0


def ensure_schema(db: Database) -> None:
    """Create or migrate the tables. The caller holds db.lock("advisor-schema") (several workers start at once)."""
    if _works(db, "SELECT turns FROM advisor_sessions LIMIT 1") and not _works(
            db, "SELECT owner FROM advisor_sessions LIMIT 1"):  # session files from before owners
        db.execute("ALTER TABLE advisor_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    existing = {name for name, _ in TABLES if _works(db, f"SELECT 1 FROM {name} LIMIT 1")}
    db.execute(META)
    version = _version(db) if existing else VERSION
    if existing and version < 2:
        _rekey(db, existing)
    for name, columns in TABLES:
        db.execute(f"CREATE TABLE IF NOT EXISTS {name} {columns}")
    if not _works(db, "SELECT intent FROM advisor_turns LIMIT 1"):
        db.execute("ALTER TABLE advisor_turns ADD COLUMN intent TEXT")
    if version < 3:
        _backfill_intent(db)
    if not _works(db, "SELECT request_hash FROM advisor_turns LIMIT 1"):  # stores from before idempotency checks
        db.execute("ALTER TABLE advisor_turns ADD COLUMN request_hash TEXT")
    for statement in INDEXES:
        db.execute(statement)
    db.execute("INSERT INTO advisor_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE "
               "SET value=excluded.value", (str(VERSION),))


def _backfill_intent(db: Database, batch: int = 500) -> None:
    """Version 2 -> 3: each stored turn's question type into its column, from its stored result."""
    done = 0
    while rows := db.execute("SELECT owner, session_id, seq, result FROM advisor_turns WHERE intent IS NULL AND "
                             "result IS NOT NULL AND result <> '' LIMIT ?", (batch,)):
        with db.transaction():
            for owner, sid, seq, result in rows:
                try:
                    intent = str(json.loads(result).get("intent") or "")
                except (ValueError, AttributeError):  # an unreadable result: "" (no type), so it is not read again
                    intent = ""
                db.execute("UPDATE advisor_turns SET intent=? WHERE owner=? AND session_id=? AND seq=?",
                           (intent, owner, sid, seq))
        done += len(rows)
    if done:
        log.info("session store: question types of %d stored turns moved to their column", done)


def _rekey(db: Database, existing: set[str]) -> None:
    """Version 1 -> 2: the tables keyed by owner and id. Turns and ratings take their session's owner (a turn
    added by a trusted caller, the CLI or Slack, was stored without one)."""
    owner_of = "COALESCE((SELECT s.owner FROM advisor_sessions s WHERE s.id = t.session_id), {fallback})"
    with db.transaction():
        for name, columns in TABLES:
            if name not in existing:
                continue
            db.execute(f"CREATE TABLE {name}_v2 {columns}")
        if "advisor_turns" in existing:
            db.execute(f"INSERT INTO advisor_turns_v2 ({TURN_COLS}) SELECT t.session_id, t.seq, "
                       f"{owner_of.format(fallback='t.owner')}, t.request_id, t.user_text, t.answer, t.workload, "
                       "t.result, t.stopped, t.created_at FROM advisor_turns t")
        if "advisor_feedback" in existing:
            db.execute(f"INSERT INTO advisor_feedback_v2 ({FEEDBACK_COLS}) SELECT t.session_id, t.seq, t.rater, "
                       f"t.rating, t.source, t.created_at, {owner_of.format(fallback=chr(39) * 2)} "
                       "FROM advisor_feedback t")
        if "advisor_sessions" in existing:
            db.execute(f"INSERT INTO advisor_sessions_v2 ({SESSION_COLS}) SELECT {SESSION_COLS} FROM advisor_sessions")
        for name, _ in TABLES:
            if name in existing:
                db.execute(f"DROP TABLE {name}")
                db.execute(f"ALTER TABLE {name}_v2 RENAME TO {name}")
    log.info("session store migrated to schema version %d (sessions keyed by owner and id)", VERSION)
