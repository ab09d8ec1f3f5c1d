"""/readyz checks Postgres at each call: 200 while it answers, 503 naming the session database while it is down
(after the start, with the assistant loaded), 200 again when it is back; without the API key the state has no
address and no driver error, with it the detail.

Regression: /readyz stayed 200 while Postgres was down (the assistant had loaded once; nothing asked again)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import load_catalog
from service.settings import Settings
from tests.api.fakes import FakeRetriever
from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
KEY = "readyz-key"


@pytest.fixture
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"the Postgres readiness test needs Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


def wait_status(client: TestClient, status: int, timeout_s: float = 60.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while (r := client.get("/readyz")).status_code != status:
        assert time.monotonic() < deadline, r.text
        time.sleep(0.1)
    body: dict[str, object] = r.json()
    return body


def test_readyz_follows_postgres_down_and_back(postgres: PgServer, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, llm="offline", api_key=KEY, chroma_host="", DATABASE_URL=postgres.url)
    catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as client:
        body = wait_status(client, 200)
        assert body["components"]["database"] == "ready"  # type: ignore[index]
        postgres.pause()
        down = wait_status(client, 503, timeout_s=10)  # asked at this call: not remembered from the start
        state = down["components"]["database"]  # type: ignore[index]
        assert state.startswith("failed: the session database cannot be reached"), state
        assert str(postgres.port) not in str(down) and "psycopg" not in str(down).lower()
        assert "Operational" not in str(down) and "/" not in state
        detailed = client.get("/readyz", headers={"Authorization": f"Bearer {KEY}"}).json()
        assert f"127.0.0.1:{postgres.port}" in detailed["components"]["database"]
        postgres.resume()
        assert wait_status(client, 200)["components"]["database"] == "ready"  # type: ignore[index]
