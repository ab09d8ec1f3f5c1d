"""Through the API with the real assistant: a chat answer is compact unless asked in full (query or body, JSON or
the stream's final event), history pages with `limit` and `before` and names its next page, bad paging values get a
422 naming the field, a page in full has each plan recomputed, and a full session answers 409 session_full."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever
from tests.api.sse import parse_sse

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[TestClient]:
    settings = make_settings(Path(tmp_path_factory.mktemp("paging")), session_max_turns=9)
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as c:
        yield c


@pytest.fixture(scope="module")
def session(client: TestClient) -> str:
    sid = client.post("/v1/chat", json={"message": FIRST}).json()["session_id"]
    for n in range(2, 8):  # each a whole plan question: every turn a plan
        r = client.post("/v1/chat", json={"message": FIRST.replace("3000", str(3000 + 500 * n)), "session_id": sid})
        assert r.status_code == 200, r.text
    return str(sid)


def test_a_chat_answer_is_compact_unless_asked_in_full(client: TestClient) -> None:
    compact = client.post("/v1/chat", json={"message": FIRST})
    full = client.post("/v1/chat?detail=full", json={"message": FIRST})
    body = client.post("/v1/chat", json={"message": FIRST, "detail": "full"})
    plan = client.post("/v1/plan", json=full.json()["answer"]["plan"]["workload"]).json()
    small, whole = compact.json()["answer"]["plan"], full.json()["answer"]["plan"]
    assert len(compact.content) <= 60_000 < len(full.content)
    assert len(small["candidates"]) < len(whole["candidates"]) == len(body.json()["answer"]["plan"]["candidates"])
    assert small["picks"] == whole["picks"] == plan["picks"] and small["n_candidates"] == whole["n_candidates"]
    assert "recommendation" not in compact.json() and "recommendation" not in full.json()  # the plan once: answer
    assert compact.json()["answer_markdown"] == full.json()["answer_markdown"]


def test_the_streams_final_answer_is_compact_unless_asked_in_full(client: TestClient) -> None:
    for query, smaller in (("", True), ("&detail=full", False)):
        r = client.post(f"/v1/chat?stream=true{query}", json={"message": FIRST})
        final = [data for name, data in parse_sse(r.text) if name == "final"][0]["data"]
        plan = final["answer"]["plan"]
        assert (len(plan["candidates"]) < 10) is smaller and bool(plan["frontier"]) is not smaller


def test_history_pages_and_names_the_next_page(client: TestClient, session: str) -> None:
    r = client.get(f"/v1/sessions/{session}/messages?limit=3")
    assert r.status_code == 200
    assert [m["turn"] for m in r.json()] == [5, 5, 6, 6, 7, 7]
    assert r.headers["X-Next-Before"] == "5"
    assert r.links["next"]["url"] == f"/v1/sessions/{session}/messages?before=5&limit=3"
    turns: list[int] = []
    url: str | None = f"/v1/sessions/{session}/messages?limit=3"
    while url:
        page = client.get(url)
        turns = [m["turn"] for m in page.json() if m["role"] == "user"] + turns
        url = page.links.get("next", {}).get("url")
    assert turns == list(range(1, 8))
    whole = client.get(f"/v1/sessions/{session}/messages")  # default: the latest 50, all of these
    assert len(whole.json()) == 14 and "Link" not in whole.headers


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=abc", "before=0", "before=-3", "before=x",
                                   "detail=everything", "detail=full&limit=21", "limit=1e3"])
def test_bad_paging_values_get_a_422_naming_the_field(client: TestClient, session: str, query: str) -> None:
    r = client.get(f"/v1/sessions/{session}/messages?{query}")
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    name = query.split("=")[0] if "&" not in query else "limit"
    assert error["code"] == "invalid_input" and name in error["message"] and error["fix"]


def test_a_page_in_full_recomputes_each_plan(client: TestClient, session: str) -> None:
    compact = client.get(f"/v1/sessions/{session}/messages?limit=2").json()
    full = client.get(f"/v1/sessions/{session}/messages?limit=2&detail=full")
    assert full.status_code == 200 and full.links["next"]["url"].endswith("detail=full")
    answers = [(small, whole) for small, whole in zip(compact, full.json(), strict=True) if small["role"] == "assistant"]
    assert len(answers) == 2
    for small, whole in answers:
        big, kept = whole["answer"]["plan"], small["answer"]["plan"]
        assert big["picks"] == kept["picks"] and len(big["candidates"]) > len(kept["candidates"])
        assert big["frontier"] and not kept["frontier"]
        assert whole["content"] == small["content"]


def test_a_full_session_answers_409_and_a_new_chat_is_answered(client: TestClient, session: str) -> None:
    for n in (8, 9):
        assert client.post("/v1/chat", json={"message": f"预算改成{n}000呢", "session_id": session}).status_code == 200
    r = client.post("/v1/chat", json={"message": "预算改成10000呢", "session_id": session})
    assert r.status_code == 409
    error = r.json()["error"]
    assert error["code"] == "session_full" and "9 turns" in error["message"] and "without session_id" in error["fix"]
    stream = client.post("/v1/chat?stream=true", json={"message": "预算改成10000呢", "session_id": session})
    events = parse_sse(stream.text)
    assert [name for name, _ in events] == ["error"] and events[0][1]["data"]["error"]["code"] == "session_full"
    assert client.get(f"/v1/sessions/{session}").json()["turns"] == 9  # nothing stored for the refused message
    assert client.post("/v1/chat", json={"message": "预算改成10000呢"}).status_code == 200
