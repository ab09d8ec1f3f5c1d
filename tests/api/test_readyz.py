"""/readyz without the API key names what failed and the fix, with no absolute path and no library error text; with
the key it has the detail. The vector index's real state shows (`rebuilding 166/545`, not `ready`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.retrieval.dense_parts import DenseStatus
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

KEY = "ready-key"
LEAK = "/srv/gpu-advisor/.data/bm25/corpus.json: sqlite3.OperationalError: unable to open database file"


def test_a_failure_shows_no_path_or_library_text_without_the_key(tmp_path: Path, catalog: Catalog) -> None:
    app = create_app(make_settings(tmp_path, api_key=KEY), FakeAssistant(), catalog=catalog)

    def broken() -> FakeRetriever:
        raise RuntimeError(LEAK)

    app.state.resources.retriever.build = broken
    with TestClient(app) as client:
        public = client.get("/readyz")
        assert public.status_code == 503
        assert public.json()["components"]["bm25"].startswith("failed: the server log says why")
        for leak in ("/srv", "sqlite3", "OperationalError", str(tmp_path)):
            assert leak not in public.text, leak
        wrong = client.get("/readyz", headers={"Authorization": "Bearer not-the-key"})
        assert "/srv" not in wrong.text
        detailed = client.get("/readyz", headers={"Authorization": f"Bearer {KEY}"})
        assert detailed.status_code == 503 and LEAK in detailed.json()["components"]["bm25"]


def test_the_index_rebuilding_is_reported_as_such(tmp_path: Path, catalog: Catalog) -> None:
    retriever = FakeRetriever()
    retriever.dense = SimpleNamespace(status=DenseStatus("ready", 166, 545, rebuilding=True))  # type: ignore[attr-defined]
    app = create_app(make_settings(tmp_path), FakeAssistant(), catalog=catalog, retriever=retriever)
    with TestClient(app) as client:
        body = client.get("/readyz").json()
    assert body["status"] == "degraded" and body["components"]["dense"] == "rebuilding 166/545"
    assert body["degraded"] == ["dense: rebuilding 166/545"]
