"""👍/👎 per turn in the session store (issue 23): stored per turn and rater, replaced on a second click, removed with
the session, counted per intent; a store from before feedback opens with its data intact and takes ratings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from service.assistant.db import SqliteDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from service.errors import InvalidInputError


def turn(intent: str) -> TurnRecord:
    return TurnRecord(user="q", assistant="a", result={"intent": intent, "answer_markdown": "a"})


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(SqliteDatabase(tmp_path / "sessions.sqlite"))


def test_ratings_are_per_turn_and_rater_and_counted_per_intent(store: SessionStore) -> None:
    store.append("s1", None, turn("plan"))
    store.append("s1", None, turn("feasibility"))
    store.rate("s1", 1, "up", "U1", "slack")
    store.rate("s1", 1, "down", "U2", "slack")
    store.rate("s1", 2, "down", "U1", "slack")
    store.rate("s1", 2, "up", "U1", "slack")  # the same person changed their mind: the last click counts
    assert store.feedback_counts() == {"feasibility": {"up": 1, "down": 0}, "plan": {"up": 1, "down": 1}}


def test_a_turn_that_does_not_exist_cannot_be_rated(store: SessionStore) -> None:
    store.append("s1", None, turn("plan"))
    with pytest.raises(InvalidInputError, match="no turn 2"):
        store.rate("s1", 2, "up", "U1")
    with pytest.raises(InvalidInputError):
        store.rate("nope", 1, "up", "U1")


def test_deleting_the_session_deletes_its_ratings(store: SessionStore) -> None:
    store.append("s1", None, turn("plan"))
    store.rate("s1", 1, "up", "U1")
    store.delete("s1")
    store.append("s1", None, turn("plan"))  # a new session with the old id starts unrated
    assert store.feedback_counts() == {}


def test_a_store_from_before_feedback_keeps_its_data_and_takes_ratings(tmp_path: Path) -> None:
    # the schema as it was before advisor_feedback (issue 23), with one answered turn
    path = tmp_path / "sessions.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE advisor_sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, "
                     "updated_at TEXT, turns INTEGER, owner TEXT NOT NULL DEFAULT '')")
        conn.execute("CREATE TABLE advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL "
                     "DEFAULT '', request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, "
                     "result TEXT, stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, "
                     "PRIMARY KEY (session_id, seq))")
        conn.execute("INSERT INTO advisor_sessions VALUES ('old', '旧会话', 't0', 't0', 1, '')")
        conn.execute("INSERT INTO advisor_turns VALUES ('old', 1, '', NULL, '问题', '回答', NULL, ?, 0, 't0')",
                     (json.dumps({"intent": "compare"}),))
    store = SessionStore(SqliteDatabase(path))
    [info] = store.list()
    assert (info.session_id, info.title, info.turns) == ("old", "旧会话", 1)
    assert [t.user for t in store.turns("old")] == ["问题"]
    store.rate("old", 1, "up", "U1", "slack")
    assert store.feedback_counts() == {"compare": {"up": 1, "down": 0}}
