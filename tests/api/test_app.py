"""The app factory: auth, health and readiness, OpenAPI docs, and one JSON error shape for every failure."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

V1_ROUTES = [
    ("POST", "/v1/chat", {"message": "hi"}),
    ("POST", "/v1/chat/completions", {"model": "gpu-advisor", "messages": [{"role": "user", "content": "hi"}]}),
    ("GET", "/v1/models", None),
    ("POST", "/v1/plan", {"model": "Qwen2-7B"}),
    ("POST", "/v1/estimate", {"model": "Qwen2-7B", "gpu": "A10"}),
    ("GET", "/v1/catalog/gpus", None),
    ("GET", "/v1/catalog/instances", None),
    ("GET", "/v1/search?q=A10", None),
    ("GET", "/v1/sessions", None),
]


def test_importing_the_api_has_no_side_effects() -> None:
    # regression guard: nothing may be built (settings, catalog, app) at import
    code = ("import sys, service.api.app, service.server, service.settings as s; "
            "from service.api.routes import chat, documents, openai_compat, search; "
            "assert s.get_settings.cache_info().currsize == 0, 'settings built'; "
            "heavy = {'torch', 'chromadb', 'langchain', 'langgraph', 'uvicorn'} & set(sys.modules); "
            "assert not heavy, heavy; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize(("method", "path", "body"), V1_ROUTES)
def test_every_v1_route_needs_the_key_when_set(
    client: TestClient, settings: Settings, method: str, path: str, body: object
) -> None:
    settings.api_key = "s3cret"
    r = client.request(method, path, json=body)
    assert r.status_code == 401, path
    assert r.json()["error"]["code"] == "unauthorized" and r.headers["www-authenticate"] == "Bearer"
    wrong = client.request(method, path, json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "Invalid API key."
    ok = client.request(method, path, json=body, headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200, (path, ok.text)


@pytest.mark.parametrize(("method", "path", "body"), V1_ROUTES)
def test_no_key_needed_when_none_is_set(client: TestClient, method: str, path: str, body: object) -> None:
    assert client.request(method, path, json=body).status_code == 200


def test_health_and_readiness_stay_open_with_a_key(client: TestClient, settings: Settings) -> None:
    settings.api_key = "s3cret"
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_readyz_is_503_until_the_warm_up_has_loaded_everything(tmp_path: Path, catalog: Catalog) -> None:
    gate = threading.Event()
    app = create_app(make_settings(tmp_path), catalog=catalog, retriever=FakeRetriever())

    def slow_assistant() -> FakeAssistant:
        gate.wait(10)
        return FakeAssistant()

    app.state.resources.assistant.build = slow_assistant
    with TestClient(app) as client:  # the lifespan starts the warm-up thread
        assert client.get("/healthz").status_code == 200  # alive while loading
        r = client.get("/readyz")
        assert r.status_code == 503
        body = r.json()
        assert body["error"]["code"] == "not_ready" and "assistant" in body["error"]["message"]
        assert body["components"]["catalog"] == "ready" and body["components"]["assistant"] in ("loading", "not loaded")
        gate.set()
        deadline = time.monotonic() + 10
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_openapi_docs(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/v1/chat", "/v1/chat/completions", "/v1/models", "/v1/plan", "/v1/estimate", "/v1/search",
                 "/v1/catalog/gpus", "/v1/catalog/instances", "/v1/documents/request", "/v1/documents/launch",
                 "/v1/sessions", "/v1/sessions/{session_id}", "/healthz", "/readyz", "/knowledge/{path}"):
        assert path in paths, path


def test_unexpected_error_is_500_generic_and_logged(
    settings: Settings, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    assistant = FakeAssistant(fail_with=RuntimeError("db password is hunter2"))
    app = create_app(settings, assistant, catalog=catalog, retriever=FakeRetriever())
    client = TestClient(app, raise_server_exceptions=False)
    r = client.post("/v1/chat", json={"message": "hi"})
    assert r.status_code == 500
    assert r.json() == {"error": {"code": "internal_error", "message": "Internal server error.",
                                  "fix": "Try again; if it persists, see the server log."}}
    assert "hunter2" not in r.text and "Traceback" not in r.text
    assert any("hunter2" in str(rec.exc_info[1]) for rec in caplog.records if rec.exc_info)


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/v2/nothing", 404, "not_found"),  # unknown route
        ("DELETE", "/v1/plan", 405, "method_not_allowed"),  # wrong method
    ],
)
def test_http_errors_share_the_shape(client: TestClient, method: str, path: str, status: int, code: str) -> None:
    r = client.request(method, path)
    assert r.status_code == status and r.json()["error"]["code"] == code and "fix" in r.json()["error"]


def test_malformed_json_is_422(client: TestClient) -> None:
    r = client.post("/v1/plan", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"


def test_the_docs_pages_load_their_assets_from_this_server(client: TestClient) -> None:
    # Regression: /docs loaded Swagger UI from a CDN (cdn.jsdelivr.net), so it was blank offline
    import re

    for page in ("/docs", "/redoc"):
        html = client.get(page).text
        urls = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", html) + re.findall(r"url: ?'([^']+)'", html)
        assert urls and not [u for u in urls if "//" in u], (page, urls)  # same origin only
        for url in urls:
            if not url.endswith(".json"):
                assert client.get(url).status_code == 200, url
    assert "swagger-ui-bundle.js" in client.get("/docs").text
