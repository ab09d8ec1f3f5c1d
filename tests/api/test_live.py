"""A live uvicorn on 127.0.0.1 hit with the official openai client (plain and streamed) and with raw SSE."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from service.app import create_app
from service.catalog.loader import Catalog
from tests.api.conftest import LiveServer, make_settings
from tests.api.fakes import ANSWER_TOKENS, FakeAssistant, FakeRetriever
from tests.api.sse import parse_sse

pytestmark = pytest.mark.integration
ANSWER = "".join(ANSWER_TOKENS)
StartServer = Callable[[FastAPI], LiveServer]


@pytest.fixture
def live(tmp_path: Path, catalog: Catalog, live_server_factory: StartServer) -> LiveServer:
    app = create_app(make_settings(tmp_path, api_key="live-key"), FakeAssistant(), catalog=catalog,
                     retriever=FakeRetriever())
    return live_server_factory(app)


def test_openai_client_plain_and_streamed(live: LiveServer) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{live.base_url}/v1", api_key="live-key", max_retries=0)
    assert [m.id for m in client.models.list()] == ["gpu-advisor"]
    done = client.chat.completions.create(model="gpu-advisor", messages=[{"role": "user", "content": "用Qwen2-7B做LoRA"}])
    assert done.choices[0].message.content == ANSWER and done.choices[0].finish_reason == "stop"
    assert done.usage is not None and done.usage.total_tokens > 0
    stream = client.chat.completions.create(model="gpu-advisor", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "user", "content": "用Qwen2-7B做LoRA"}])
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER
    assert chunks[-1].usage is not None


def test_openai_client_sees_auth_and_errors(live: LiveServer) -> None:
    import openai

    bad = openai.OpenAI(base_url=f"{live.base_url}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as auth:
        bad.models.list()
    assert "Invalid API key" in str(auth.value)
    good = openai.OpenAI(base_url=f"{live.base_url}/v1", api_key="live-key", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        good.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


def test_chat_sse_over_the_wire(live: LiveServer) -> None:
    headers = {"Authorization": "Bearer live-key"}
    with httpx.stream("POST", f"{live.base_url}/v1/chat", params={"stream": "true"}, headers=headers,
                      json={"message": "用Qwen2-7B做LoRA"}, timeout=10) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(r.read().decode())
    assert [n for n, _ in events][-1] == "final"
    assert "".join(d["text"] for n, d in events if n == "token") == ANSWER
    assert httpx.get(f"{live.base_url}/healthz").status_code == 200  # open without the key
    assert httpx.get(f"{live.base_url}/v1/sessions").status_code == 401
