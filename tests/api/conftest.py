"""API fixtures: settings on a tmp data dir, the real catalog (loaded once), fakes for the assistant and retriever,
a TestClient, and a live uvicorn on 127.0.0.1 for the integration tier."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog, load_catalog
from service.settings import Settings
from tests.api.fakes import FakeAssistant, FakeRetriever


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    """Settings on `data_dir`, offline and without an API key whatever the environment says."""
    values: dict[str, object] = {"data_dir": data_dir, "llm": "offline", "api_key": "", "prices_file": None,
                                 "chroma_host": "", **overrides}
    return Settings(**values)


@pytest.fixture(scope="session")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    s = make_settings(tmp_path_factory.mktemp("catalog-data"))
    return load_catalog(s.knowledge_dir, s.catalog_overlay_dir, s.prices_file)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
def assistant() -> FakeAssistant:
    return FakeAssistant()


@pytest.fixture
def retriever() -> FakeRetriever:
    return FakeRetriever()


@pytest.fixture
def app(settings: Settings, assistant: FakeAssistant, catalog: Catalog, retriever: FakeRetriever) -> FastAPI:
    return create_app(settings, assistant, catalog=catalog, retriever=retriever)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


@dataclass
class LiveServer:
    base_url: str
    port: int


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def wait_for(url: str, timeout_s: float = 20.0, status: int = 200) -> float:
    """Poll `url` until it answers `status`; returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        try:
            if httpx.get(url, timeout=1.0).status_code == status:
                return time.monotonic() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer {status} within {timeout_s} s")


@pytest.fixture
def live_server_factory() -> Iterator[object]:
    """Start `app` under uvicorn on a free 127.0.0.1 port in a thread; every server is stopped after the test."""
    import uvicorn

    started: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(app: FastAPI) -> LiveServer:
        sock = free_socket()
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((server, thread))
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/healthz")
        return LiveServer(base, port)

    yield start
    for server, thread in started:
        server.should_exit = True
        thread.join(timeout=10)
