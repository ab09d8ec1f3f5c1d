"""Server mode: the same index and search against a real `chroma run` on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.retrieval.config import RetrievalConfig
from service.retrieval.embeddings import Embedder
from service.retrieval.hybrid import Retriever
from service.retrieval.ingest import build_index, open_store

pytestmark = pytest.mark.integration


def _chroma_binary() -> str | None:
    local = Path(sys.executable).parent / "chroma"
    return str(local) if local.is_file() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    binary = _chroma_binary()
    if binary is None:
        pytest.skip("the `chroma` binary is not installed (pip install chromadb provides it)")
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(
        [binary, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not answer its heartbeat on port {port} (exit code {proc.poll()})")
            time.sleep(0.2)
        yield "127.0.0.1", port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_index_and_search_through_http_client(
    config: RetrievalConfig, embedder: Embedder, chroma_server: tuple[str, int]
) -> None:
    host, port = chroma_server
    remote = dataclasses.replace(config, chroma_host=host, chroma_port=port)
    first = build_index(remote, embedder)
    assert first.added == first.total > 0
    assert build_index(remote, embedder).unchanged == first.total
    assert not any((config.data_dir / "vectors").glob("g*"))  # nothing embedded on disk
    store = open_store(remote, embedder)
    assert store.remote and store.built_with() == embedder.model_id
    passages = Retriever(remote, embedder).search("Can the A10 train in FP8?", k=3, lang="en")
    assert passages[0].id == "guide/01-precision.en.md#fp8-needs-ada-or-hopper"
    assert passages[0].dense_rank is not None
