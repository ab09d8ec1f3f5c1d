"""Build or refresh the index incrementally: unchanged chunks are skipped, changed ones upserted, removed ones
deleted. The vector store is compared by content hash; a different embedding model rebuilds it from scratch.

The local corpus (BM25 side) is written first, so a Chroma server that is down costs only the dense side.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
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
from service.retrieval.embeddings import Embedder, shared_embedder
from service.retrieval.store import VectorStore, chroma_client
from service.retrieval.types import Chunk

MANIFEST_FILE = "manifest.json"
_EMBED_BATCH = 32  # one model call per batch: short, so exit and progress are never held up for long


@dataclass(frozen=True)
class IndexReport:
    added: int
    updated: int
    deleted: int
    unchanged: int
    seconds: float
    rebuilt: bool = False  # the embedding model changed (or --rebuild): everything re-embedded
    total: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Plan:
    add: list[Chunk]
    update: list[Chunk]
    delete: list[str]
    unchanged: int


def plan_changes(chunks: Sequence[Chunk], indexed: dict[str, str]) -> Plan:
    """Compare the corpus with what the store holds (id → hash)."""
    wanted = {c.id for c in chunks}
    add = [c for c in chunks if c.id not in indexed]
    update = [c for c in chunks if c.id in indexed and indexed[c.id] != c.hash]
    delete = sorted(i for i in indexed if i not in wanted)
    return Plan(add, update, delete, len(chunks) - len(add) - len(update))


def open_store(config: RetrievalConfig, embedder: Embedder) -> VectorStore:
    client = chroma_client(config.data_dir, config.chroma_host, config.chroma_port)
    return VectorStore(client, embedder, remote=bool(config.chroma_host))


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


def _embed_and_upsert(store: VectorStore, todo: list[Chunk], progress: bool) -> None:
    if not todo:
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), disable=not progress, transient=True) as bar:
        task = bar.add_task("Embedding chunks", total=len(todo))
        for start in range(0, len(todo), _EMBED_BATCH):
            part = todo[start : start + _EMBED_BATCH]
            store.upsert(part, store.embedder.embed([c.text for c in part]))
            bar.advance(task, len(part))


def build_index(
    config: RetrievalConfig,
    embedder: Embedder | None = None,
    *,
    rebuild: bool = False,
    progress: bool = False,
    store: VectorStore | None = None,
) -> IndexReport:
    """Bring the corpus and the vector store up to date with the knowledge files.

    Raises DependencyUnavailableError when a configured Chroma server is unreachable (the corpus is saved first).
    """
    started = time.perf_counter()
    chunks = list(refresh_corpus(config, force=rebuild)[0].chunks)
    if store is None:
        store = open_store(config, embedder or shared_embedder(config.embedding_model))
    embedder = store.embedder
    rebuilt = rebuild or store.built_with() != embedder.model_id
    if rebuilt:
        store.recreate()
    plan = plan_changes(chunks, store.indexed())
    _embed_and_upsert(store, plan.add + plan.update, progress)
    store.delete(plan.delete)
    report = IndexReport(
        added=len(plan.add),
        updated=len(plan.update),
        deleted=len(plan.delete),
        unchanged=plan.unchanged,
        seconds=round(time.perf_counter() - started, 3),
        rebuilt=rebuilt,
        total=len(chunks),
    )
    if report.changed or rebuilt or not (config.index_dir / MANIFEST_FILE).is_file():
        write_manifest(config, store, report)
    return report


def write_manifest(config: RetrievalConfig, store: VectorStore, report: IndexReport) -> None:
    manifest = {
        "embedding_model": store.embedder.model_id,
        "model_path": str(store.embedder.model_path),
        "store": config.store_label,
        "collection": store.name,
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
