"""A configured DATABASE_URL that cannot be reached shows in /readyz (503, with the reason) and is retried; the
service never switches to a local SQLite file behind the caller's back. No Postgres needed: nothing listens."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.assistant import db
from service.catalog.loader import Catalog, load_catalog
from service.edge import resources
from service.settings import Settings
from tests.api.fakes import FakeRetriever
from tests.deploy.postgres import free_port


def test_unreachable_postgres_fails_readiness_with_the_reason_and_is_retried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "CONNECT_BACKOFF_S", (0.05,))
    monkeypatch.setattr(db, "CONNECT_TIMEOUT_S", 0.3)
    monkeypatch.setattr(resources, "RETRY_AFTER_S", 0.2)
    port = free_port()
    settings = Settings(data_dir=tmp_path, llm="offline", api_key="k", chroma_host="",
                        DATABASE_URL=f"postgresql://advisor:pw@127.0.0.1:{port}/postgres")
    catalog: Catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    app = create_app(settings, catalog=catalog, retriever=FakeRetriever())
    with TestClient(app, headers={"Authorization": "Bearer k"}) as client:
        deadline = time.monotonic() + 30
        while app.state.resources.assistant.error is None and time.monotonic() < deadline:
            time.sleep(0.1)
        r = client.get("/readyz")
        assert r.status_code == 503
        state = r.json()["components"]["assistant"]
        assert state.startswith("failed") and f"127.0.0.1:{port}" in state and "cannot be reached" in state
        assert "pw" not in r.text  # the password is never shown
        public = client.get("/readyz", headers={"Authorization": ""}).json()["components"]
        assert public["database"].startswith("failed: the session database cannot be reached")
        assert str(port) not in str(public)  # without the key: no address, no driver error
        failures = app.state.resources.assistant.failures
        time.sleep(0.5)
        client.get("/readyz")  # past the back-off: /readyz starts a retry
        deadline = time.monotonic() + 30
        while app.state.resources.assistant.failures == failures and time.monotonic() < deadline:
            time.sleep(0.1)
        assert app.state.resources.assistant.failures > failures
        chat = client.post("/v1/chat", json={"message": "用Qwen2-7B做LoRA"})
        assert chat.status_code == 503 and chat.json()["error"]["code"] == "dependency_unavailable"
    assert not (tmp_path / "sessions.sqlite").exists()
