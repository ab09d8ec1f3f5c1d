"""Issue 41 F6 on Postgres: the request's digest is stored with its key in advisor_turns.request_hash (a column a
store from before gains on open), and a key reused with another message is refused (SQLite:
tests/api/test_idempotency.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.assistant.postgres import PostgresDatabase
from service.assistant.service import build_assistant
from service.assistant.sessions import SessionStore
from service.errors import IdempotencyConflictError
from tests.api.conftest import make_settings
from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres
from tests.web.conftest import GuideRetriever

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"the Postgres idempotency test needs Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


def test_a_store_from_before_gains_the_column(postgres: PgServer) -> None:
    db = PostgresDatabase(postgres.url)
    try:
        db.execute("DROP TABLE IF EXISTS advisor_turns")
        db.execute("CREATE TABLE advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL "
                   "DEFAULT '', request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, "
                   "result TEXT, stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, "
                   "PRIMARY KEY (owner, session_id, seq))")
        db.execute("INSERT INTO advisor_turns VALUES ('s', 1, 'o', 'r1', 'q', 'a', NULL, NULL, 0, 't0')")
        db.execute("CREATE TABLE IF NOT EXISTS advisor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO advisor_meta VALUES ('schema_version', '2') ON CONFLICT (key) DO NOTHING")
        store = SessionStore(db)
        done = store.answered("o", "r1")
        assert done is not None and done[1].request_hash is None
    finally:
        db.execute("DROP TABLE IF EXISTS advisor_turns")
        db.close()


def test_a_reused_key_with_another_message_is_refused(postgres: PgServer, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, database_url=postgres.url)
    assistant = build_assistant(settings, retriever_factory=lambda: GuideRetriever(settings.knowledge_dir))
    first = assistant.ask("4090能跑qwen2.5-14b lora吗", owner="o", request_id="pg-key")
    again = assistant.ask("4090能跑qwen2.5-14b lora吗", owner="o", request_id="pg-key")
    assert again.session_id == first.session_id and again.answer_markdown == first.answer_markdown
    with pytest.raises(IdempotencyConflictError, match="pg-key"):
        assistant.ask("H20一小时多少钱", owner="o", request_id="pg-key")
    assert [t.user for t in assistant.sessions.turns(first.session_id, "o")] == ["4090能跑qwen2.5-14b lora吗"]
