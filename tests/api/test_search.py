"""GET /v1/search: passes the filters through; 503 with the one error shape when retrieval is unavailable."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.errors import DependencyUnavailableError
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever


def test_search_returns_passages_with_citations(client: TestClient, retriever: FakeRetriever) -> None:
    r = client.get("/v1/search", params={"q": "A10 支持 FP8 吗", "k": 3, "lang": "zh", "cloud": "tencent",
                                         "topic": "precision"})
    assert r.status_code == 200
    body = r.json()
    assert body["lang"] == "zh" and body["passages"][0]["ref"].startswith("guide/")
    assert retriever.calls == [{"query": "A10 支持 FP8 吗", "k": 3, "lang": "zh", "cloud": "tencent",
                                "topic": "precision", "mode": "hybrid"}]
    client.get("/v1/search", params={"q": "FP8", "mode": "bm25"}).raise_for_status()
    assert retriever.calls[-1]["mode"] == "bm25"


def test_search_validates_parameters(client: TestClient) -> None:
    assert client.get("/v1/search").status_code == 422  # q missing
    r = client.get("/v1/search", params={"q": "x", "k": 0})
    assert r.status_code == 422 and "k:" in r.json()["error"]["message"]
    assert client.get("/v1/search", params={"q": "x", "lang": "fr"}).status_code == 422


def test_search_is_503_when_retrieval_cannot_load(tmp_path: Path, catalog: Catalog, monkeypatch: object) -> None:
    app = create_app(make_settings(tmp_path, api_key="k"), FakeAssistant(), catalog=catalog)
    resources = app.state.resources

    def broken() -> FakeRetriever:
        raise DependencyUnavailableError("Chroma is down.", "Start it.")

    resources.retriever.build = broken
    client = TestClient(app, headers={"Authorization": "Bearer k"})  # no lifespan: nothing warms up
    r = client.get("/v1/search", params={"q": "A10"})
    assert r.status_code == 503
    assert r.json()["error"] == {"code": "dependency_unavailable", "message": "Chroma is down.", "fix": "Start it."}
    ready = client.get("/readyz")  # with the key: the detail
    assert ready.status_code == 503 and "failed: Chroma is down." in ready.json()["components"]["bm25"]
    public = client.get("/readyz", headers={"Authorization": ""}).json()["components"]["bm25"]
    assert public.startswith("failed: the server log says why")


def test_unexpected_retriever_failure_is_503_not_a_traceback(tmp_path: Path, catalog: Catalog) -> None:
    app = create_app(make_settings(tmp_path), FakeAssistant(), catalog=catalog)

    def broken() -> FakeRetriever:
        raise OSError("model files missing")

    app.state.resources.retriever.build = broken
    r = TestClient(app).get("/v1/search", params={"q": "A10"})
    assert r.status_code == 503 and "model files missing" in r.json()["error"]["message"]
