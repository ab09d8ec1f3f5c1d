"""Session ids are scoped to their owner (client id and API key): the same OpenAI `user` from two owners is two
sessions, and an id you do not own is a 404 whether it exists or not. Stores from before keep their sessions.

Regression: session ids were one global namespace, so the first caller to use `user: carol@corp.example` owned that
session and Carol, calling with her own client id, got 404."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.fakes import FakeRetriever

QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
CAROL = "carol@corp.example"
FIRST, CAROLS = {"X-Client-Id": "first-caller"}, {"X-Client-Id": "carol-laptop"}


@pytest.fixture
def real(settings: Settings, catalog: Catalog) -> Iterator[TestClient]:
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as c:
        yield c


def completion(client: TestClient, text: str, headers: dict[str, str], user: str = CAROL) -> tuple[int, str]:
    r = client.post("/v1/chat/completions", headers=headers, json={
        "model": "gpu-advisor", "user": user, "messages": [{"role": "user", "content": text}]})
    return r.status_code, r.headers.get("x-session-id", "")


def test_the_same_user_from_two_owners_is_two_sessions(real: TestClient) -> None:
    assert completion(real, QUESTION, FIRST) == (200, CAROL)
    assert completion(real, "用Qwen2-7B做LoRA，预算5000", CAROLS) == (200, CAROL)  # was 404
    assert completion(real, "预算改成8000呢", CAROLS) == (200, CAROL)
    mine = real.get(f"/v1/sessions/{CAROL}", headers=CAROLS).json()
    theirs = real.get(f"/v1/sessions/{CAROL}", headers=FIRST).json()
    assert (mine["turns"], theirs["turns"]) == (2, 1)
    texts = [m["content"] for m in real.get(f"/v1/sessions/{CAROL}/messages", headers=CAROLS).json()
             if m["role"] == "user"]
    assert texts == ["用Qwen2-7B做LoRA，预算5000", "预算改成8000呢"]  # none of the first caller's turns


def test_an_id_you_do_not_own_is_404_exactly_like_one_that_does_not_exist(real: TestClient) -> None:
    sid = real.post("/v1/chat", json={"message": QUESTION}, headers=FIRST).json()["session_id"]
    for path, method, body in (("/v1/sessions/{}", "GET", None), ("/v1/sessions/{}/messages", "GET", None),
                               ("/v1/sessions/{}", "PATCH", {"title": "x"}), ("/v1/sessions/{}", "DELETE", None),
                               ("/v1/chat", "POST", {"message": "预算改成8000呢", "session_id": "{}"})):
        answers = []
        for target in (sid, "no-such-session"):
            kwargs = {"json": {k: v.format(target) if isinstance(v, str) else v for k, v in body.items()}} if body else {}
            r = real.request(method, path.format(target), headers=CAROLS, **kwargs)  # type: ignore[arg-type]
            answers.append((r.status_code, r.json()["error"]["code"],
                            r.json()["error"]["message"].replace(target, "<id>")))
        assert answers[0] == answers[1] and answers[0][0] == 404, (path, method, answers)
    assert real.get(f"/v1/sessions/{sid}", headers=FIRST).json()["turns"] == 1  # untouched


def test_the_same_id_under_two_api_keys_is_two_sessions(settings: Settings, catalog: Catalog) -> None:
    sids = []
    for key in ("key-one", "key-two"):
        app = create_app(settings.model_copy(update={"api_key": key}), catalog=catalog, retriever=FakeRetriever())
        with TestClient(app) as c:
            status, sid = completion(c, QUESTION, {"Authorization": f"Bearer {key}"}, user="shared-id")
            assert status == 200
            sids.append(sid)
            assert c.get("/v1/sessions/shared-id", headers={"Authorization": f"Bearer {key}"}).json()["turns"] == 1
    assert sids == ["shared-id", "shared-id"]


def test_a_store_from_before_keeps_its_sessions_readable(settings: Settings, catalog: Catalog) -> None:
    # the schema before owner-scoped ids (primary key: the id alone), one session of the first caller's
    from service.api.owner import owner_token

    path = settings.data_dir / "sessions.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    owner = owner_token(FIRST["X-Client-Id"], None, "")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE advisor_sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, "
                     "updated_at TEXT, turns INTEGER, owner TEXT NOT NULL DEFAULT '')")
        conn.execute("CREATE TABLE advisor_turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, owner TEXT NOT NULL "
                     "DEFAULT '', request_id TEXT, user_text TEXT NOT NULL, answer TEXT NOT NULL, workload TEXT, "
                     "result TEXT, stopped INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, "
                     "PRIMARY KEY (session_id, seq))")
        conn.execute("CREATE TABLE advisor_feedback (session_id TEXT NOT NULL, seq INTEGER NOT NULL, rater TEXT NOT "
                     "NULL DEFAULT '', rating INTEGER NOT NULL, source TEXT NOT NULL DEFAULT '', created_at TEXT NOT "
                     "NULL, PRIMARY KEY (session_id, seq, rater))")
        conn.execute("INSERT INTO advisor_sessions VALUES (?, '旧会话', 't0', 't0', 2, ?)", (CAROL, owner))
        for seq, by in ((1, owner), (2, "")):  # the second turn was added by a trusted caller (no owner)
            conn.execute("INSERT INTO advisor_turns VALUES (?, ?, ?, NULL, ?, '回答', NULL, NULL, 0, 't0')",
                         (CAROL, seq, by, f"问题{seq}"))
        conn.execute("INSERT INTO advisor_feedback VALUES (?, 1, 'U1', 1, 'slack', 't0')", (CAROL,))
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as real:
        info = real.get(f"/v1/sessions/{CAROL}", headers=FIRST).json()
        assert (info["title"], info["turns"]) == ("旧会话", 2)
        texts = [m["content"] for m in real.get(f"/v1/sessions/{CAROL}/messages", headers=FIRST).json()
                 if m["role"] == "user"]
        assert texts == ["问题1", "问题2"]
        assert real.get(f"/v1/sessions/{CAROL}", headers=CAROLS).status_code == 404
        assert completion(real, QUESTION, CAROLS) == (200, CAROL)  # now Carol has her own
        assert real.get(f"/v1/sessions/{CAROL}", headers=FIRST).json()["turns"] == 2
        store = real.app.state.resources.assistant.get().sessions  # type: ignore[attr-defined]
        assert store.feedback_counts() == {"unknown": {"up": 1, "down": 0}}
    version = sqlite3.connect(path).execute("SELECT value FROM advisor_meta WHERE key='schema_version'").fetchone()
    assert version == ("3",)

