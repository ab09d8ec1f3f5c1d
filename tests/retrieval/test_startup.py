"""First start: the app answers /healthz and BM25 search while the vector index builds; /readyz shows each part."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import load_catalog
from service.retrieval import embedder_choice
from service.retrieval.config import RetrievalConfig
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant
from tests.retrieval.conftest import HashEmbedder


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
        while client.get("/readyz").status_code != 200:  # catalog, BM25, assistant: no vector index needed
            assert time.monotonic() < deadline
            time.sleep(0.05)
        body = client.get("/readyz").json()
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
        while client.get("/readyz").json()["status"] != "ready":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert model.loaded and client.get("/readyz").json()["components"]["dense"] == "ready"
        hybrid = client.get("/v1/search", params={"q": "spot instances", "k": 2}).json()
        assert hybrid["passages"][0]["dense_rank"] is not None and hybrid["warnings"] == []
        bm25 = client.get("/v1/search", params={"q": "spot instances", "k": 2, "mode": "bm25"}).json()
        assert all(p["dense_rank"] is None for p in bm25["passages"])
        dense = client.get("/v1/search", params={"q": "spot instances", "k": 2, "mode": "dense"}).json()
        assert all(p["bm25_rank"] is None and p["dense_rank"] is not None for p in dense["passages"])
