"""The corpus: guide files plus generated catalog documents, chunked; and its local copy on disk.

The local copy (data_dir/retrieval/chunks.json) holds every chunk with its BM25 tokens. It is what BM25 searches
and what passages are built from, so search keeps working without the vector store.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.errors import CatalogError
from service.retrieval.bm25 import TOKENIZER_VERSION, Tokenizer
from service.retrieval.catalog_docs import ensure_catalog_docs
from service.retrieval.chunking import chunk_files
from service.retrieval.config import RetrievalConfig
from service.retrieval.types import Chunk

CORPUS_FILE = "chunks.json"
LOCK_FILE = ".lock"
_thread_lock = threading.Lock()
FORMAT = 2


@dataclass(frozen=True)
class Corpus:
    chunks: tuple[Chunk, ...]
    tokens: tuple[tuple[str, ...], ...]  # BM25 tokens, parallel to chunks
    inputs: str = ""  # inputs_signature of the files it was built from


@contextmanager
def corpus_lock(index_dir: Path) -> Iterator[None]:
    """Serialize corpus refreshes across threads and processes sharing a data dir (an API server and a CLI, say):
    one regenerates the catalog documents and rewrites chunks.json while the others wait, then reuse its work."""
    index_dir.mkdir(parents=True, exist_ok=True)
    with _thread_lock, (index_dir / LOCK_FILE).open("a") as handle:
        try:
            import fcntl
        except ImportError:  # no flock on this platform: threads are still serialized
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def corpus_files(config: RetrievalConfig) -> tuple[list[Path], list[Path]]:
    """(guide files, catalog documents); regenerates the catalog documents first if their inputs changed."""
    ensure_catalog_docs(config.knowledge_dir, config.catalog_docs_dir, config.overlay_dir, config.prices_file)
    guide_dir = config.knowledge_dir / "guide"
    guide = sorted(p for p in guide_dir.rglob("*.md") if p.name.lower() != "readme.md") if guide_dir.is_dir() else []
    docs = sorted(config.catalog_docs_dir.glob("*.md")) if config.catalog_docs_dir.is_dir() else []
    return guide, docs


def inputs_signature(config: RetrievalConfig, files: list[Path]) -> str:
    """Paths, sizes and modification times of the corpus files, plus the chunk size: cheap change detection."""
    digest = hashlib.sha256(f"{config.max_chars}".encode())
    for f in files:
        st = f.stat()
        digest.update(f"{f}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def collect_chunks(config: RetrievalConfig, files: tuple[list[Path], list[Path]] | None = None) -> list[Chunk]:
    """Chunk the guide and the catalog documents; ids are unique across the corpus."""
    guide, docs = files or corpus_files(config)
    chunks = chunk_files(config.knowledge_dir, guide, "", config.max_chars)
    chunks += chunk_files(config.catalog_docs_dir, docs, "catalog", config.max_chars)
    dupes = sorted(i for i, n in Counter(c.id for c in chunks).items() if n > 1)
    if dupes:
        raise CatalogError(f"Duplicate chunk ids: {', '.join(dupes)}.", "Give the sections distinct headings.")
    return chunks


def tokenize_corpus(
    chunks: list[Chunk], tokenizer: Tokenizer, previous: Corpus | None, inputs: str = ""
) -> Corpus:
    """Tokens for each chunk, reused from `previous` where the chunk's hash is unchanged."""
    known: dict[str, tuple[str, ...]] = {}
    if previous is not None:
        known = {c.hash: t for c, t in zip(previous.chunks, previous.tokens, strict=True)}
    tokens = tuple(known.get(c.hash) or tuple(tokenizer(c.text)) for c in chunks)
    return Corpus(tuple(chunks), tokens, inputs)


def save_corpus(path: Path, corpus: Corpus, tokenizer: Tokenizer) -> None:
    payload: dict[str, Any] = {
        "format": FORMAT,
        "tokenizer": TOKENIZER_VERSION,
        "inputs": corpus.inputs,
        "domain_words": list(tokenizer.domain_words),
        "chunks": [{**c.to_dict(), "tokens": list(t)} for c, t in zip(corpus.chunks, corpus.tokens, strict=True)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def load_corpus(path: Path) -> tuple[Corpus, Tokenizer] | None:
    """The saved corpus and the tokenizer it was built with; None when missing or from another format."""
    if not path.is_file():
        return None
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if payload.get("format") != FORMAT or payload.get("tokenizer") != TOKENIZER_VERSION:
        return None  # rebuilt from the knowledge files (tokens of every chunk recomputed)
    rows = payload["chunks"]
    corpus = Corpus(
        tuple(Chunk.from_dict(r) for r in rows), tuple(tuple(r["tokens"]) for r in rows), payload.get("inputs", "")
    )
    return corpus, Tokenizer(payload.get("domain_words", ()))
