"""First start: the app answers /healthz and BM25 search while the vector index builds; /readyz shows each part."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from service.app import create_app
from service.catalog.loader import load_catalog
from service.retrieval import embedder_choice
from service.retrieval.config import RetrievalConfig
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant
from tests.retrieval.conftest import HashEmbedder


def _readyz_until(client: TestClient, deadline: float, done: Callable[[Response], bool]) -> dict[str, Any]:
    """GET /readyz until one answer meets `done`; that answer (a later read may already say something else)."""
    while not done(answer := client.get("/readyz")):
        assert time.monotonic() < deadline, answer.json()
        time.sleep(0.05)
    body: dict[str, Any] = answer.json()
    return body


def test_bm25_answers_and_readyz_says_dense_is_building_until_it_is_ready(
    config: RetrievalConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    model = HashEmbedder(gate=gate)  # each embedding batch waits for the gate: the build is held mid-way
    monkeypatch.setitem(embedder_choice._shared, "e5", model)
    catalog = load_catalog(make_settings(config.data_dir).knowledge_dir, None, None)  # the real one: the planner's
    settings = make_settings(config.data_dir, knowledge_dir=config.knowledge_dir)
    app = create_app(settings, FakeAssistant(), catalog=catalog)
    with TestClient(app) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        deadline = time.monotonic() + 30
        # each check reads the one /readyz answer that met the wait's condition: a second read raced the build
        # (issue 40: between the guide's phase and the catalog's the index was briefly said `ready`)
        body = _readyz_until(client, deadline, lambda r: r.status_code == 200  # catalog, BM25, assistant
                             and r.json()["components"]["dense"].startswith("building "))
        assert body["status"] == "degraded" and body["components"]["bm25"] == "ready"
        assert body["components"]["dense"].startswith("building 0/")
        assert body["degraded"] == [f"dense: {body['components']['dense']}"]
        assert not model.loaded  # dense is not reported ready before its model is loaded
        found = client.get("/v1/search", params={"q": "spot instances", "k": 2}).json()
        assert found["passages"][0]["id"] == "guide/02-billing.en.md#spot-instances"
        assert found["passages"][0]["dense_rank"] is None and "BM25 only" in found["warnings"][0]
        dense_only = client.get("/v1/search", params={"q": "spot instances", "mode": "dense"})
        assert dense_only.status_code == 503 and "building" in dense_only.json()["error"]["message"]
        gate.set()
        body = _readyz_until(client, deadline, lambda r: r.json()["status"] == "ready")
        assert body["components"]["dense"] == "ready" and body["degraded"] == [] and model.loaded
        hybrid = client.get("/v1/search", params={"q": "spot instances", "k": 2}).json()
        assert hybrid["passages"][0]["dense_rank"] is not None and hybrid["warnings"] == []
        bm25 = client.get("/v1/search", params={"q": "spot instances", "k": 2, "mode": "bm25"}).json()
        assert all(p["dense_rank"] is None for p in bm25["passages"])
        dense = client.get("/v1/search", params={"q": "spot instances", "k": 2, "mode": "dense"}).json()
        assert all(p["bm25_rank"] is None and p["dense_rank"] is not None for p in dense["passages"])
