"""Incremental indexing: a second run skips everything; edits upsert, deletions delete, a new model rebuilds."""

from __future__ import annotations

import pytest

from service.retrieval import ingest
from service.retrieval.config import RetrievalConfig
from service.retrieval.embeddings import Embedder
from service.retrieval.ingest import build_index, open_store, read_manifest
from tests.retrieval.conftest import CachingEmbedder


def _indexed(config: RetrievalConfig, embedder: Embedder) -> dict[str, str]:
    store = open_store(config, embedder)
    try:
        return store.indexed()
    finally:
        store.close()


def test_first_run_adds_everything_and_second_run_skips_all(config: RetrievalConfig, embedder: Embedder) -> None:
    first = build_index(config, embedder)
    assert first.added == first.total > 0 and (first.updated, first.deleted, first.unchanged) == (0, 0, 0)
    second = build_index(config, embedder)
    assert (second.added, second.updated, second.deleted, second.unchanged) == (0, 0, 0, first.total)
    ids = set(_indexed(config, embedder))
    assert "guide/01-precision.en.md#fp8-needs-ada-or-hopper" in ids
    assert "catalog/tencent-pnv4.zh.md#概览地域与售卖状态" in ids
    manifest = read_manifest(config)
    assert manifest is not None and manifest["embedding_model"] == embedder.model_id
    assert manifest["chunks"] == first.total


def test_editing_one_section_updates_one_chunk(config: RetrievalConfig, embedder: Embedder) -> None:
    build_index(config, embedder)
    path = config.knowledge_dir / "guide" / "02-billing.en.md"
    path.write_text(path.read_text().replace("checkpoint often", "checkpoint every 30 minutes"))
    report = build_index(config, embedder)
    assert (report.added, report.updated, report.deleted) == (0, 1, 0)
    store = open_store(config, embedder)
    got = store.collection.get(ids=["guide/02-billing.en.md#spot-instances"])
    store.close()
    assert "every 30 minutes" in got["documents"][0]


def test_deleting_a_file_deletes_its_chunks(config: RetrievalConfig, embedder: Embedder) -> None:
    build_index(config, embedder)
    (config.knowledge_dir / "guide" / "02-billing.zh.md").unlink()
    report = build_index(config, embedder)
    assert (report.added, report.updated, report.deleted) == (0, 0, 2)  # its two sections (no preamble)
    assert not any(i.startswith("guide/02-billing.zh.md") for i in _indexed(config, embedder))


def test_catalog_change_updates_catalog_chunks(config: RetrievalConfig, embedder: Embedder) -> None:
    build_index(config, embedder)
    prices = config.knowledge_dir / "catalog" / "prices.csv"
    prices.write_text(prices.read_text().replace("4750", "4800"))
    report = build_index(config, embedder)
    assert report.updated == 2 and report.added == report.deleted == 0  # the zh and en price tables


class _OtherModel(CachingEmbedder):
    """Same weights, another identity: stands in for a changed embedding model."""

    @property
    def model_id(self) -> str:
        return "other-model@0"


def test_model_change_rebuilds(config: RetrievalConfig, embedder: CachingEmbedder) -> None:
    first = build_index(config, embedder)
    other = _OtherModel(embedder.inner, embedder.cache)  # same weights and cache, another identity
    report = build_index(config, other)
    assert report.rebuilt and report.added == first.total and report.unchanged == 0
    store = open_store(config, other)
    assert store.built_with() == "other-model@0"
    store.close()
    manifest = read_manifest(config)
    assert manifest is not None and manifest["embedding_model"] == "other-model@0"


def test_unchanged_files_are_not_chunked_again(
    config: RetrievalConfig, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_index(config, embedder)

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("re-chunked unchanged files")

    monkeypatch.setattr(ingest, "collect_chunks", fail)
    assert build_index(config, embedder).unchanged > 0  # reused the saved corpus
    path = config.knowledge_dir / "guide" / "02-billing.en.md"
    path.write_text(path.read_text() + "\nOne more line.\n")
    with pytest.raises(AssertionError, match="re-chunked"):
        build_index(config, embedder)  # a changed file is chunked again


def test_concurrent_refreshes_do_not_trip_over_each_other(config: RetrievalConfig) -> None:
    # Regression: an API server and the assistant refreshing one data dir at once made rmtree of the catalog
    # documents fail with "Directory not empty".
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: ingest.refresh_corpus(config, force=True), range(8)))
    ids = {tuple(c.id for c in corpus.chunks) for corpus, _ in results}
    assert len(ids) == 1 and len(next(iter(ids))) > 0
