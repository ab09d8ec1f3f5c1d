"""Offline guarantee: indexing and searching open no network connection (Unix sockets are allowed)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from service.retrieval.config import RetrievalConfig
from service.retrieval.hybrid import Retriever
from service.retrieval.ingest import build_index
from tests.retrieval.conftest import CachingEmbedder


def test_index_and_search_make_no_network_connection(
    config: RetrievalConfig, embedder: CachingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
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

    fresh = CachingEmbedder(embedder.model_path, embedder.cache)  # loads the model again, inside the guard
    report = build_index(config, fresh)
    assert report.added == report.total > 0
    passages = Retriever(config, fresh).search("FP8 on A10", k=3)
    assert passages
    assert fresh._model is not None  # the model really was loaded under the guard
    assert attempts == []
