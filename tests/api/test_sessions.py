"""/v1/sessions: list, show, rename, delete, read the turns; unknown ids and other callers' sessions are 404."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.conftest import LiveServer
from tests.api.fakes import FakeRetriever


def _new(client: TestClient, text: str = "用Qwen2-7B做LoRA") -> str:
    sid: str = client.post("/v1/chat", json={"message": text}).json()["session_id"]
    return sid


def test_list_show_rename_delete(client: TestClient) -> None:
    sid = _new(client)
    assert [s["session_id"] for s in client.get("/v1/sessions").json()] == [sid]
    assert client.get(f"/v1/sessions/{sid}").json()["turns"] == 1
    r = client.patch(f"/v1/sessions/{sid}", json={"title": "  Qwen 微调  "})
    assert r.status_code == 200 and r.json()["title"] == "Qwen 微调"
    assert client.delete(f"/v1/sessions/{sid}").status_code == 204
    assert client.get("/v1/sessions").json() == []


def test_unknown_session_routes_are_404(client: TestClient) -> None:
    for method, kwargs in (("GET", {}), ("PATCH", {"json": {"title": "x"}}), ("DELETE", {})):
        r = client.request(method, "/v1/sessions/missing", **kwargs)  # type: ignore[arg-type]
        assert r.status_code == 404, method
        assert r.json()["error"]["code"] == "not_found"


def test_empty_title_is_422(client: TestClient) -> None:
    sid = _new(client)
    r = client.patch(f"/v1/sessions/{sid}", json={"title": ""})
    assert r.status_code == 422 and "title" in r.json()["error"]["message"]


# -- private sessions and stored turns, with the real assistant ------------------------------------------------


@pytest.fixture
def real(settings: Settings, catalog: Catalog) -> Iterator[TestClient]:
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as c:
        yield c


QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
ALICE, BOB = {"X-Client-Id": "alice-laptop"}, {"X-Client-Id": "bob-phone"}


def test_another_caller_cannot_list_read_rename_continue_or_delete(real: TestClient) -> None:
    sid = real.post("/v1/chat", json={"message": QUESTION}, headers=ALICE).json()["session_id"]
    assert real.get("/v1/sessions", headers=BOB).json() == []
    assert real.get("/v1/sessions").json() == []  # the anonymous caller is another caller too
    for method, path, kwargs in (("GET", "", {}), ("GET", "/messages", {}), ("PATCH", "", {"json": {"title": "x"}}),
                                 ("DELETE", "", {})):
        r = real.request(method, f"/v1/sessions/{sid}{path}", headers=BOB, **kwargs)  # type: ignore[arg-type]
        assert r.status_code == 404, (method, path, r.text)
    r = real.post("/v1/chat", json={"message": "预算改成8000呢", "session_id": sid}, headers=BOB)
    assert r.status_code == 404
    assert [s["session_id"] for s in real.get("/v1/sessions", headers=ALICE).json()] == [sid]


def test_the_owner_reads_the_turns_back_with_their_plans(real: TestClient) -> None:
    sid = real.post("/v1/chat", json={"message": QUESTION}, headers=ALICE).json()["session_id"]
    real.post("/v1/chat?stream=true", json={"message": "预算改成8000呢", "session_id": sid}, headers=ALICE)
    msgs = real.get(f"/v1/sessions/{sid}/messages", headers=ALICE).json()
    assert [(m["role"], m["turn"]) for m in msgs] == [("user", 1), ("assistant", 1), ("user", 2), ("assistant", 2)]
    assert msgs[0]["content"] == QUESTION and msgs[2]["content"] == "预算改成8000呢"
    assert msgs[3]["answer"]["plan"]["picks"] and msgs[3]["workload"]["budget_cny"] == 8000
    assert all(not m["stopped"] for m in msgs)
    assert real.get(f"/v1/sessions/{sid}", headers=ALICE).json()["turns"] == 2


def test_the_page_visit_sets_an_httponly_owner_cookie_that_keeps_sessions_private(
        settings: Settings, catalog: Catalog) -> None:
    app = create_app(settings, catalog=catalog, retriever=FakeRetriever())
    with TestClient(app) as page, TestClient(app) as other:
        cookie = page.get("/").headers["set-cookie"]
        assert "gpu_advisor_client=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert "set-cookie" not in page.get("/").headers  # set once
        sid = page.post("/v1/chat", json={"message": QUESTION}).json()["session_id"]
        assert [s["session_id"] for s in page.get("/v1/sessions").json()] == [sid]
        other.get("/")
        assert other.get("/v1/sessions").json() == []
        assert other.get(f"/v1/sessions/{sid}/messages").status_code == 404


def test_a_retried_request_id_is_answered_once(real: TestClient) -> None:
    key = {"Idempotency-Key": "7f1c-retry", **ALICE}
    first = real.post("/v1/chat", json={"message": QUESTION}, headers=key).json()
    again = real.post("/v1/chat", json={"message": QUESTION}, headers=key).json()
    assert again["session_id"] == first["session_id"] and again["answer_markdown"] == first["answer_markdown"]
    assert real.get(f"/v1/sessions/{first['session_id']}", headers=ALICE).json()["turns"] == 1
    r = real.post("/v1/chat", json={"message": QUESTION}, headers={"X-Request-Id": "r" * 129})
    assert r.status_code == 422


def test_a_stream_dropped_by_the_client_keeps_history_and_turns_in_step(
        settings: Settings, catalog: Catalog, live_server_factory: Callable[[FastAPI], LiveServer]) -> None:
    """The page's Stop button closes the connection after the first event, on a first turn and on a later one:
    the session is listed, and its turn count equals the stored turns every time."""
    live = live_server_factory(create_app(settings, catalog=catalog, retriever=FakeRetriever()))
    sid: str | None = None
    for n, text in enumerate((QUESTION, "预算改成8000呢"), start=1):
        body = {"message": text, **({"session_id": sid} if sid else {})}
        with httpx.stream("POST", f"{live.base_url}/v1/chat?stream=true", json=body, headers=ALICE,
                          timeout=60) as r:
            assert r.status_code == 200
            next(r.iter_lines())  # the first line of the first event, then hang up
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = httpx.get(f"{live.base_url}/v1/sessions", headers=ALICE).json()
            if listed and listed[0]["turns"] == n:
                break
            time.sleep(0.1)
        assert len(listed) == 1 and listed[0]["turns"] == n, listed
        sid = listed[0]["session_id"]
        msgs = httpx.get(f"{live.base_url}/v1/sessions/{sid}/messages", headers=ALICE).json()
        assert [m["content"] for m in msgs if m["role"] == "user"] == [QUESTION, "预算改成8000呢"][:n]
    r = httpx.post(f"{live.base_url}/v1/chat", json={"message": "只看京东云", "session_id": sid}, headers=ALICE,
                   timeout=60)
    assert r.status_code == 200 and r.json()["workload"]["model"] == "Qwen2-7B"
    assert httpx.get(f"{live.base_url}/v1/sessions/{sid}", headers=ALICE).json()["turns"] == 3
