"""Build or refresh the index: the local corpus (BM25 side) first, then the vector index (service.retrieval.dense:
a new generation, unchanged chunks copied by content hash, changed ones embedded; a different embedding model
embeds everything). A Chroma store that fails costs only the dense side.
"""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import UTC, datetime
from typing import Any

from service.retrieval.bm25 import Tokenizer
from service.retrieval.config import RetrievalConfig
from service.retrieval.corpus import (
    CORPUS_FILE,
    Corpus,
    collect_chunks,
    corpus_files,
    corpus_lock,
    inputs_signature,
    load_corpus,
    save_corpus,
    tokenize_corpus,
)
from service.retrieval.dense import DenseIndex, IndexReport, Progress
from service.retrieval.embedder_choice import shared_embedder
from service.retrieval.embeddings import Embedder
from service.retrieval.generations import generations_for
from service.retrieval.store import VectorStore

__all__ = ["IndexReport", "build_index", "open_store", "read_manifest", "refresh_corpus"]

MANIFEST_FILE = "manifest.json"


def open_store(config: RetrievalConfig, embedder: Embedder) -> VectorStore:
    """The generation the pointer names (for inspection and tests); FileNotFoundError when none was built."""
    gens = generations_for(config)
    pointer = gens.read_pointer()
    if pointer is None:
        raise FileNotFoundError(f"no vector index under {gens.label('')}")
    return gens.open(str(pointer["generation"]), embedder)


def refresh_corpus(config: RetrievalConfig, force: bool = False) -> tuple[Corpus, Tokenizer]:
    """Chunk the knowledge files and save them with BM25 tokens. Unchanged files (same size and mtime) are not
    re-chunked unless `force`; unchanged chunks keep their tokens. Safe to call from several threads or processes."""
    with corpus_lock(config.index_dir):
        return _refresh_corpus(config, force)


def _refresh_corpus(config: RetrievalConfig, force: bool) -> tuple[Corpus, Tokenizer]:
    guide, docs = corpus_files(config)
    inputs = inputs_signature(config, guide + docs)
    path = config.index_dir / CORPUS_FILE
    loaded = load_corpus(path)
    if loaded is not None and loaded[0].inputs == inputs and not force:
        return loaded
    tokenizer = Tokenizer() if loaded is None else loaded[1]
    previous = None if loaded is None else loaded[0]
    corpus = tokenize_corpus(collect_chunks(config, (guide, docs)), tokenizer, previous, inputs)
    save_corpus(path, corpus, tokenizer)
    return corpus, tokenizer


def build_index(
    config: RetrievalConfig,
    embedder: Embedder | None = None,
    *,
    rebuild: bool = False,
    progress: Progress | None = None,
    dense: DenseIndex | None = None,
) -> IndexReport:
    """Bring the corpus and the vector index up to date with the knowledge files (blocking; see DenseIndex).

    Raises DependencyUnavailableError when the vector store fails (the corpus is saved first, so BM25 works).
    """
    started = time.perf_counter()
    chunks = list(refresh_corpus(config, force=rebuild)[0].chunks)
    own = dense is None
    dense = dense or DenseIndex(config, embedder or shared_embedder(config.embedding_model))
    dense.progress = progress or dense.progress
    try:
        report = dense.ensure(chunks, rebuild=rebuild)
    finally:
        if own:
            dense.close()  # release the store's files and threads: a caller that wants it passes `dense`
    report = dataclasses.replace(report, seconds=round(time.perf_counter() - started, 3))
    if report.changed or report.rebuilt or not (config.index_dir / MANIFEST_FILE).is_file():
        write_manifest(config, dense, report)
    return report


def write_manifest(config: RetrievalConfig, dense: DenseIndex, report: IndexReport) -> None:
    manifest = {
        "embedding_model": dense.embedder.model_id,
        "model_location": dense.embedder.location,
        "store": dense.describe()["store"],
        "chunks": report.total,
        "updated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "last_run": report.to_dict(),
    }
    config.index_dir.mkdir(parents=True, exist_ok=True)
    (config.index_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def read_manifest(config: RetrievalConfig) -> dict[str, Any] | None:
    path = config.index_dir / MANIFEST_FILE
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
