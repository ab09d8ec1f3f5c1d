"""Issue 41 F3: provider errors stay inside. A provider stub on 127.0.0.1 answers every call with an error whose body
echoes the API key it was sent (several providers do on 401). With the LLM reader and with the agent, the user sees
the fixed phrase; the key is in none of: the /v1/chat JSON, its stream, the OpenAI-compatible reply, the stored turns
(sessions.sqlite) nor the session's messages; the log keeps the error's class and HTTP status, the key masked.

Regression: the provider's message went into `backend` and the answer's first line, so the key came back in the
response, the stored turn and the log (6 of 6 places, both modes; 0 now)."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.redact import failure, mask
from tests.api.conftest import make_settings
from tests.api.fakes import FakeRetriever

KEY = "sk-gpuadvisor0123456789abcdefSECRET"


class EchoingProvider:
    """Answers every POST with `status` and a body that quotes the Authorization header it got."""

    def __init__(self, status: int) -> None:
        self.status = status

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sent = self.headers.get("Authorization", "")
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {sent.split(' ', 1)[-1]}. "
                                             f"Header was '{sent}'.", "type": "invalid_request_error",
                                             "code": "invalid_api_key"}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module", params=[401, 500])
def provider(request: pytest.FixtureRequest) -> Iterator[EchoingProvider]:
    p = EchoingProvider(request.param)
    yield p
    p.stop()


@pytest.mark.parametrize("mode, phrase", [("reader", "大模型解析暂不可用，已用离线解析"),
                                          ("agent", "大模型服务暂不可用，已用离线模型回答")])
def test_the_key_never_comes_back(provider: EchoingProvider, catalog: Catalog, tmp_path: Path,
                                  caplog: pytest.LogCaptureFixture, mode: str, phrase: str) -> None:
    settings = make_settings(tmp_path, llm="openai", llm_model="stub-model", llm_base_url=provider.url,
                             llm_api_key=KEY, llm_mode=mode, llm_timeout_s=5.0)
    client = TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever()))
    with caplog.at_level(logging.DEBUG):
        r = client.post("/v1/chat", json={"message": "4090能跑qwen2.5-14b lora吗"})
        stream = client.post("/v1/chat?stream=true", json={"message": "A100和H800哪个划算，训练Qwen2-7B lora"})
        compat = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "H20一小时多少钱"}]})
        messages = client.get(f"/v1/sessions/{r.json()['session_id']}/messages")
    assert r.status_code == stream.status_code == compat.status_code == messages.status_code == 200
    assert r.json()["answer_markdown"].splitlines()[0] == f"> 注：{phrase}。"
    assert r.json()["backend"].startswith("offline (fallback: ") and "Error" in r.json()["backend"]
    for where, text in (("chat", r.text), ("stream", stream.text), ("compat", compat.text),
                        ("messages", messages.text)):
        assert KEY not in text and "Incorrect API key" not in text, where
    rows = sqlite3.connect(settings.data_dir / "sessions.sqlite").execute("SELECT * FROM advisor_turns").fetchall()
    assert rows and KEY not in json.dumps(rows, default=str)
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert KEY not in logged and KEY[10:30] not in logged
    assert f"HTTP {provider.status}" in r.json()["backend"] and f"HTTP {provider.status}" in logged


def test_a_broken_setting_names_itself_not_the_provider(catalog: Catalog, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, llm="openai", llm_model="", llm_api_key=KEY)
    r = TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())).post(
        "/v1/chat", json={"message": "4090能跑qwen2.5-14b lora吗"})
    assert "GPU_ADVISOR_LLM_MODEL" in r.json()["backend"] and KEY not in r.text


@pytest.mark.parametrize("text, kept", [
    (f"Incorrect API key provided: {KEY}.", "Incorrect API key provided: ***."),  # an OpenAI-style key
    ("Authorization: Bearer abc.def-123_456", "Authorization: *** ***"),  # a header echoed
    ('{"api_key": "zz-secret-99"}', '{"api_key": "***"}'),  # a JSON field named like a credential
    ("token=abcd1234&x=1", "token=***&x=1"),  # a query string
    ("digest 0123456789abcdef0123456789abcdefAB", "digest ***"),  # a long opaque token
    ("model Qwen2.5-7B-Instruct not found (404)", "model Qwen2.5-7B-Instruct not found (404)"),  # no credential
])
def test_mask(text: str, kept: str) -> None:
    assert mask(text) == kept


def test_the_configured_key_is_masked_whatever_its_shape() -> None:
    assert mask("the key plainkey-1 was refused", ["plainkey-1"]) == "the key *** was refused"


def test_failure_is_the_class_and_the_status() -> None:
    class FakeStatusError(Exception):
        status_code = 401

    assert failure(FakeStatusError(f"echo {KEY}")) == "FakeStatusError, HTTP 401"
    assert failure(TimeoutError("slow")) == "TimeoutError"
