"""The bounded-session store on Postgres: context, pages, the compact stored turn, retention and rekey run the same
SQL as on SQLite (tests/assistant/test_session_bounds.py and test_retention.py), here on a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.assistant import compact, retention
from service.assistant.postgres import PostgresDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from tests.assistant.test_retention import NOW, fill
from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"needs Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


@pytest.fixture
def store(postgres: PgServer) -> Iterator[SessionStore]:
    db = PostgresDatabase(postgres.url, max_connections=4)
    for table in ("advisor_turns", "advisor_sessions", "advisor_feedback"):
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute("DROP TABLE IF EXISTS advisor_meta")
    yield SessionStore(db)
    db.close()


def test_context_pages_and_the_compact_turn(store: SessionStore) -> None:
    plan = {"kind": "training", "candidates": [{"instance_type": t, "cloud": "tencent", "billing": "monthly",
                                                "cost_cny": {"monthly": 1, "spot": 2}} for t in "ABCD"],
            "n_candidates": 4, "picks": {"tencent": "A"}, "alternatives": {"cheaper": "C"}, "pick_reasons": {},
            "rejected": [{"instance_type": "Z", "reason": "x"}] * 5, "frontier": {"tencent:A": []}}
    result = {"intent": "plan", "answer": {"kind": "plan", "plan": plan}, "recommendation": plan,
              "answer_markdown": "答1"}
    store.append("s", "alice", TurnRecord(user="q1", assistant="答1", workload={"model": "Qwen2-7B"},
                                          intent="plan", result=result))
    for n in range(2, 26):
        store.append("s", "alice", TurnRecord(user=f"q{n}", assistant=f"a{n}"))
    context = store.context("s", "alice", 20)
    assert context[0].user == "q1" and context[0].intent == "plan" and len(context) == 21
    page, more = store.page("s", "alice", 10, before=11)
    assert [t.seq for t in page] == list(range(1, 11)) and not more
    first = page[0].result
    assert first is not None and first["answer_markdown"] == "答1"
    kept = first["answer"]["plan"]
    assert [c["instance_type"] for c in kept["candidates"]] == ["A", "C"]
    assert "recommendation" not in first  # a retired copy of the plan (an earlier release stored it) is left out
    assert kept["frontier"] == {} and len(kept["rejected"]) == compact.REJECTED_KEPT
    assert kept["candidates"][0]["cost_cny"] == {"monthly": 1}


def test_retention_and_rekey(store: SessionStore) -> None:
    fill(store)
    done = retention.prune(store, 30, NOW)
    assert (done.sessions, done.turns) == (2, 4)
    assert [s.session_id for s in store.list()] == ["recent"]
    store.append("x", "key:old/client:bob", TurnRecord(user="q", assistant="a"))
    store.append("y", "key:old", TurnRecord(user="q", assistant="a"))
    store.append("y", "keyid:team_a", TurnRecord(user="q", assistant="a"))  # clashes with the moved "y"
    moved = retention.rekey(store, "key:old", "keyid:team_a")
    assert (moved.sessions, moved.skipped) == (1, ("y",))
    assert store.exists("x", "keyid:team_a/client:bob") and not store.exists("x", "key:old/client:bob")
    assert retention.rekey(store, "key:ol", "keyid:z").sessions == 0  # a prefix of an owner is not its scope
