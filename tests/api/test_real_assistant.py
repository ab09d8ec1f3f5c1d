"""End to end with the real offline assistant (service.assistant.service), built lazily by the app.

Most tests share a fake retriever so they stay fast; the last one runs everything real (retrieval index included)
behind a live uvicorn and waits for /readyz.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.conftest import LiveServer, make_settings, wait_for
from tests.api.fakes import FakeRetriever
from tests.api.sse import parse_sse

pytest.importorskip("service.assistant.service")
pytest.importorskip("langgraph.checkpoint.sqlite")

QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"
StartServer = Callable[[FastAPI], LiveServer]


def real_app(settings: Settings, catalog: Catalog) -> FastAPI:
    return create_app(settings, catalog=catalog, retriever=FakeRetriever())


@pytest.fixture
def real(settings: Settings, catalog: Catalog) -> TestClient:
    return TestClient(real_app(settings, catalog))


def test_a_structured_workload_is_planned_as_it_is(real: TestClient) -> None:
    # the page's form sends its workload itself: the message (any text) is only what the chat shows
    workload = {"model": "Qwen2-7B", "method": "qlora", "samples": 20000, "epochs": 2, "clouds": ["jdcloud"]}
    r = real.post("/v1/chat", json={"message": "表单：Qwen2-7B", "workload": workload})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["intent"] == "plan" and body["language"] == "zh"
    assert {k: body["workload"][k] for k in workload} == workload
    assert {c["cloud"] for c in body["answer"]["plan"]["candidates"]} == {"jdcloud"}
    follow = real.post("/v1/chat", json={"message": "改成LoRA呢", "session_id": body["session_id"]}).json()
    assert follow["workload"]["method"] == "lora" and follow["workload"]["samples"] == 20000
    bad = real.post("/v1/chat", json={"message": "x", "workload": {"model": "Qwen2-7B", "samples": -5}})
    assert bad.status_code == 422 and "workload.samples" in bad.json()["error"]["message"]
    streamed = parse_sse(real.post("/v1/chat?stream=true", json={"message": "plan", "workload": workload}).text)
    assert streamed[-1][1]["data"]["workload"]["method"] == "qlora"


def test_chat_returns_the_engine_recommendation(real: TestClient) -> None:
    r = real.post("/v1/chat", json={"message": QUESTION})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["backend"] == "offline" and body["language"] == "zh"
    assert body["answer"]["kind"] == "plan"
    picks = body["answer"]["plan"]["picks"]
    assert picks and all(t in body["answer_markdown"] for t in picks.values())
    assert body["workload"]["model"] == "Qwen2-7B" and body["workload"]["budget_cny"] == 3000
    assert body["prose_check"] == []


def test_chat_stream_ends_with_the_result(real: TestClient) -> None:
    r = real.post("/v1/chat?stream=true", json={"message": QUESTION})
    events = parse_sse(r.text)
    names = [n for n, _ in events]
    assert "tool" in names and "token" in names and names[-1] == "final"
    final = events[-1][1]["data"]
    assert "".join(d["text"] for n, d in events if n == "token").strip() == final["answer_markdown"].strip()


def test_unknown_session_is_404(real: TestClient) -> None:
    r = real.post("/v1/chat", json={"message": "hi", "session_id": "does-not-exist"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_sessions_survive_a_restart(settings: Settings, catalog: Catalog) -> None:
    first = TestClient(real_app(settings, catalog))
    sid = first.post("/v1/chat", json={"message": QUESTION}).json()["session_id"]
    assert first.patch(f"/v1/sessions/{sid}", json={"title": "Qwen2 LoRA"}).status_code == 200
    again = TestClient(real_app(settings, catalog))  # a new app (as after a restart) on the same data dir
    assert [(s["session_id"], s["title"]) for s in again.get("/v1/sessions").json()] == [(sid, "Qwen2 LoRA")]
    r = again.post("/v1/chat", json={"message": "如果换成京东云呢？", "session_id": sid})
    assert r.status_code == 200 and r.json()["session_id"] == sid
    assert again.get(f"/v1/sessions/{sid}").json()["turns"] == 2
    assert again.delete(f"/v1/sessions/{sid}").status_code == 204
    assert TestClient(real_app(settings, catalog)).get("/v1/sessions").json() == []


@pytest.mark.integration
def test_openai_client_against_the_real_assistant(
    settings: Settings, catalog: Catalog, live_server_factory: StartServer
) -> None:
    from openai import OpenAI

    live = live_server_factory(real_app(settings, catalog))
    client = OpenAI(base_url=f"{live.base_url}/v1", api_key="x", max_retries=0, timeout=60)
    messages = [{"role": "user", "content": QUESTION}]
    raw = client.chat.completions.with_raw_response.create(model="gpu-advisor", messages=messages)  # type: ignore[arg-type]
    done = raw.parse()
    sid = raw.headers["x-session-id"]
    content = done.choices[0].message.content or ""
    assert "GT4" in content or "推荐" in content
    follow = client.chat.completions.create(model="gpu-advisor", user=sid, stream=True,
                                            messages=[{"role": "user", "content": "A10 支持 FP8 吗？"}])
    text = "".join(c.choices[0].delta.content or "" for c in follow if c.choices)
    assert "FP8" in text
    sessions = httpx.get(f"{live.base_url}/v1/sessions").json()
    assert [s["turns"] for s in sessions if s["session_id"] == sid] == [2]


def copy_rows(src: Path, dst: Path, keep: Callable[[dict[str, str]], bool]) -> list[dict[str, str]]:
    import csv

    with src.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if keep(r)]
        fields = list(reader.fieldnames or [])
    with dst.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fields)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def small_knowledge(root: Path) -> Path:
    """A copy of knowledge/ cut to one instance family and one guide page (both languages): a real index of it
    builds in seconds instead of embedding the whole corpus."""
    import shutil

    src = Settings().knowledge_dir
    (root / "catalog").mkdir(parents=True)
    (root / "guide").mkdir()
    shutil.copy(src / "models.yaml", root / "models.yaml")
    shutil.copy(src / "catalog" / "gpus.yaml", root / "catalog" / "gpus.yaml")
    for page in ("03-gpu-specs-precision.zh.md", "03-gpu-specs-precision.en.md"):
        shutil.copy(src / "guide" / page, root / "guide" / page)
    rows = copy_rows(src / "catalog" / "instances.csv", root / "catalog" / "instances.csv",
                     lambda r: r["family"] == "GNV4")
    kept = {r["instance_type"] for r in rows}
    copy_rows(src / "catalog" / "prices.csv", root / "catalog" / "prices.csv", lambda r: r["instance_type"] in kept)
    return root


@pytest.mark.integration
def test_everything_real_behind_uvicorn(tmp_path: Path, live_server_factory: StartServer) -> None:
    # nothing injected: the lifespan's warm-up loads the catalog, the assistant and a real retrieval index
    settings = make_settings(tmp_path / "data", knowledge_dir=small_knowledge(tmp_path / "knowledge"))
    live = live_server_factory(create_app(settings))
    wait_for(f"{live.base_url}/readyz", timeout_s=300)  # 200: BM25 answers; the vector index may still build
    deadline = time.monotonic() + 300
    while (ready := httpx.get(f"{live.base_url}/readyz").json())["status"] != "ready":
        assert time.monotonic() < deadline, ready
        time.sleep(0.5)
    assert set(ready["components"].values()) == {"ready"} and ready["components"]["dense"] == "ready"
    found = httpx.get(f"{live.base_url}/v1/search", params={"q": "A10 支持 FP8 吗", "k": 3}, timeout=30).json()
    assert found["passages"] and found["lang"] == "zh"
    answer = httpx.post(f"{live.base_url}/v1/chat", json={"message": "A10 支持 FP8 吗？"}, timeout=60).json()
    assert "FP8" in answer["answer_markdown"] and answer["citations"]
    for cite in answer["citations"]:  # every citation resolves to a page the API serves
        assert httpx.get(f"{live.base_url}/knowledge/{cite['source']}").status_code == 200, cite
