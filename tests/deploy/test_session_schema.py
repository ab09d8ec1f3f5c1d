"""The session store's migration to owner-scoped ids (schema version 2) on Postgres: a store from before keeps its
sessions, turns and ratings, and two owners may then use the same id. (tests/api/test_session_owners.py has the
SQLite side.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.assistant.postgres import PostgresDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
V1 = (
    "CREATE TABLE advisor_sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, updated_at TEXT, "
    "turns INTEGER, owner TEXT NOT NULL DEFAULT '')",
    "CREATE TABLE advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL DEFAULT '', "
    "request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, result TEXT, stopped INTEGER NOT "
    "NULL DEFAULT 0, created_at TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE UNIQUE INDEX advisor_turns_request ON advisor_turns (owner, request_id)",
    "CREATE TABLE advisor_feedback (session_id TEXT NOT NULL, seq INTEGER NOT NULL, rater TEXT NOT NULL DEFAULT '', "
    "rating INTEGER NOT NULL, source TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, "
    "PRIMARY KEY (session_id, seq, rater))",
    "INSERT INTO advisor_sessions VALUES ('carol@corp.example', '旧会话', 't0', 't0', 1, 'client:first')",
    "INSERT INTO advisor_turns VALUES ('carol@corp.example', 1, 'client:first', 'r1', '问题', '回答', NULL, "
    "'{\"intent\": \"plan\"}', 0, 't0')",
    "INSERT INTO advisor_feedback VALUES ('carol@corp.example', 1, 'U1', -1, 'slack', 't0')",
)


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"the Postgres migration test needs Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


def test_a_v1_store_on_postgres_is_rekeyed_and_keeps_everything(postgres: PgServer) -> None:
    db = PostgresDatabase(postgres.url)
    try:
        for statement in V1:
            db.execute(statement)
        store = SessionStore(db)
        SessionStore(db)  # a second worker opening it afterwards: nothing left to migrate
        sid = "carol@corp.example"
        assert [t.user for t in store.turns(sid, "client:first")] == ["问题"]
        assert store.answered("client:first", "r1") is not None
        assert store.feedback_counts() == {"plan": {"up": 0, "down": 1}}
        assert not store.exists(sid, "client:carol")
        store.append(sid, "client:carol", TurnRecord(user="我的问题", assistant="回答"))
        assert [len(store.turns(sid, who)) for who in ("client:first", "client:carol")] == [1, 1]
        assert db.execute("SELECT value FROM advisor_meta WHERE key='schema_version'") == [("3",)]
    finally:
        db.close()
