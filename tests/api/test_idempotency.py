"""Issue 41 F6: an Idempotency-Key (or X-Request-Id) reused with another body gets 409 `idempotency_conflict` naming
the key (Stripe's rule), as JSON and before a stream starts; the same body still gets the stored answer, once. The
request's digest is stored with its key (advisor_turns.request_hash; Postgres: tests/deploy/test_idempotency_pg.py).

Regression: a key reused with a different message returned 200 with the first answer and the new message was never
stored (0 of 4 conflicts refused before: JSON and stream, each header; 4 of 4 now)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.assistant.db import SqliteDatabase
from service.assistant.sessions import SessionStore, request_digest
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever

FIRST = "4090能跑qwen2.5-14b lora吗"
OTHER = "H20一小时多少钱"
HEADERS = ("Idempotency-Key", "X-Request-Id")


@pytest.fixture
def client(tmp_path: Path, catalog: Catalog) -> TestClient:
    return TestClient(create_app(make_settings(tmp_path), catalog=catalog, retriever=FakeRetriever()))


def turns(client: TestClient) -> list[str]:
    db = client.app.state.resources.settings.data_dir / "sessions.sqlite"  # type: ignore[attr-defined]
    return [r[0] for r in sqlite3.connect(db).execute("SELECT user_text FROM advisor_turns ORDER BY created_at")]


@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize("stream", [False, True])
def test_the_same_key_with_another_message_is_a_409_naming_the_key(client: TestClient, header: str,
                                                                   stream: bool) -> None:
    route = "/v1/chat?stream=true" if stream else "/v1/chat"
    assert client.post(route, json={"message": FIRST}, headers={header: "key-1"}).status_code == 200
    r = client.post(route, json={"message": OTHER}, headers={header: "key-1"})
    assert r.status_code == 409, r.text[:200]
    error = r.json()["error"]
    assert error["code"] == "idempotency_conflict" and "'key-1'" in error["message"] and error["fix"]
    assert turns(client) == [FIRST]  # the new message was neither answered nor stored


@pytest.mark.parametrize("header", HEADERS)
def test_the_same_body_gets_the_stored_answer_once(client: TestClient, header: str) -> None:
    first = client.post("/v1/chat", json={"message": FIRST}, headers={header: "key-2"})
    again = client.post("/v1/chat", json={"message": FIRST + "  "}, headers={header: "key-2"})  # whitespace aside
    streamed = client.post("/v1/chat?stream=true", json={"message": FIRST}, headers={header: "key-2"})
    assert again.status_code == 200 and again.json() == first.json()
    assert first.json()["session_id"] in streamed.text
    assert turns(client) == [FIRST]


def test_another_workload_is_another_request(client: TestClient) -> None:
    body = {"message": "plan", "workload": {"model": "Qwen2-7B", "samples": 1000}}
    assert client.post("/v1/chat", json=body, headers={"Idempotency-Key": "k3"}).status_code == 200
    changed = {**body, "workload": {"model": "Qwen2-7B", "samples": 2000}}
    r = client.post("/v1/chat", json=changed, headers={"Idempotency-Key": "k3"})
    assert r.status_code == 409 and "workload" in r.json()["error"]["message"]


def test_another_session_is_another_request(client: TestClient) -> None:
    assert client.post("/v1/chat", json={"message": FIRST}, headers={"Idempotency-Key": "k4"}).status_code == 200
    other = client.post("/v1/chat", json={"message": OTHER}).json()["session_id"]
    r = client.post("/v1/chat", json={"message": FIRST, "session_id": other}, headers={"Idempotency-Key": "k4"})
    assert r.status_code == 409 and "another session" in r.json()["error"]["message"]


def test_a_turn_stored_before_digests_still_answers_its_retry(client: TestClient) -> None:
    """Keys stored before this check have no digest: their retries get the stored answer, as they did."""
    first = client.post("/v1/chat", json={"message": FIRST}, headers={"Idempotency-Key": "old"})
    db = client.app.state.resources.settings.data_dir / "sessions.sqlite"  # type: ignore[attr-defined]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE advisor_turns SET request_hash = NULL")
    r = client.post("/v1/chat", json={"message": OTHER}, headers={"Idempotency-Key": "old"})
    assert r.status_code == 200 and r.json()["session_id"] == first.json()["session_id"]


def test_a_store_from_before_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL "
                     "DEFAULT '', request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, "
                     "result TEXT, stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, "
                     "PRIMARY KEY (owner, session_id, seq))")
        conn.execute("CREATE TABLE advisor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO advisor_meta VALUES ('schema_version', '2')")
        conn.execute("INSERT INTO advisor_turns VALUES ('s', 1, 'o', 'r1', 'q', 'a', NULL, NULL, 0, 't0')")
    store = SessionStore(SqliteDatabase(path))
    done = store.answered("o", "r1")
    assert done is not None and done[1].request_hash is None and done[1].user == "q"


def test_the_digest_reads_the_request_as_the_turn_does() -> None:
    assert request_digest(" a ", None) == request_digest("a", None)
    assert request_digest("a", {"x": 1, "y": 2}) == request_digest("a", {"y": 2, "x": 1})
    assert request_digest("a", None) != request_digest("b", None) != request_digest("b", {"x": 1})
