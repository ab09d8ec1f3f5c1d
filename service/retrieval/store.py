"""The dense side: a Chroma collection (embedded on disk, or a server through HttpClient when CHROMA_HOST is set).

Telemetry is off, the space is cosine, and the collection metadata records which embedding model built it. We
embed with our own `Embedder` and pass vectors in, so Chroma never loads a model of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from service.errors import DependencyUnavailableError
from service.retrieval.chroma_ef import chroma_embedding_function
from service.retrieval.embeddings import Embedder
from service.retrieval.types import Chunk

COLLECTION = "gpu_advisor_knowledge"
MODEL_KEY = "embedding_model"
_BATCH = 256


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def chroma_client(path: Path, host: str = "", port: int = 8000) -> Any:
    """Embedded PersistentClient on the directory `path`, or an HttpClient when `host` is set (checked by
    heartbeat). Any failure is a DependencyUnavailableError (callers answer from BM25 meanwhile)."""
    import chromadb

    if not host:
        try:
            path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(path), settings=_settings())
        except BaseException as exc:  # noqa: BLE001 - Chroma's Rust core raises pyo3 PanicException (BaseException)
            raise as_unavailable(exc, f"opening the vector index at {path}") from exc
    try:
        client = chromadb.HttpClient(host=host, port=port, settings=_settings())
        client.heartbeat()
    except Exception as exc:  # connection refused, DNS, timeouts: all mean "not reachable"
        raise DependencyUnavailableError(
            f"Chroma server at {host}:{port} is unreachable ({type(exc).__name__}: {exc}).",
            "Start it (`chroma run --path .data/chroma --port 8000`) or unset CHROMA_HOST to use the embedded "
            "store; search falls back to BM25 meanwhile.",
        ) from exc
    return client


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """Chroma metadata: scalars, plus lists only when non-empty (Chroma rejects empty lists)."""
    meta: dict[str, Any] = {
        "source": chunk.source,
        "title": chunk.title,
        "section": chunk.section,
        "lang": chunk.lang,
        "ref": chunk.ref,
        "hash": chunk.hash,
        "cloud_any": not chunk.clouds,
    }
    if chunk.clouds:
        meta["clouds"] = list(chunk.clouds)
    if chunk.topics:
        meta["topics"] = list(chunk.topics)
    return meta


def as_unavailable(exc: BaseException, action: str) -> DependencyUnavailableError:
    """Any Chroma failure (a Python error, or a panic in its Rust core) as the error callers degrade on."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise exc
    if isinstance(exc, DependencyUnavailableError):
        return exc
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return DependencyUnavailableError(
        f"Chroma failed while {action} ({detail}).",
        "Search answers from BM25 meanwhile and the vector index is rebuilt in the background; for a Chroma "
        "server check CHROMA_HOST/CHROMA_PORT.",
    )


class VectorStore:
    """One collection; every Chroma error becomes DependencyUnavailableError so callers can fall back to BM25."""

    def __init__(self, client: Any, embedder: Embedder, name: str = COLLECTION, remote: bool = False) -> None:
        self.client = client
        self.embedder = embedder
        self.name = name
        self.remote = remote
        self._collection: Any = None

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:  # noqa: BLE001 - see as_unavailable
            raise as_unavailable(exc, action) from exc

    @property
    def collection(self) -> Any:
        """The collection, created when missing (a new generation is opened with `create()` first)."""
        if self._collection is None:
            with self._guard("opening the collection"):
                self._collection = self.client.get_collection(
                    self.name, embedding_function=chroma_embedding_function(self.embedder)
                )
        return self._collection

    def create(self) -> None:
        with self._guard("creating the collection"):
            self._collection = self.client.get_or_create_collection(
                self.name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={MODEL_KEY: self.embedder.model_id},
                embedding_function=chroma_embedding_function(self.embedder),
            )

    def built_with(self) -> str | None:
        """The model id recorded when the collection was created."""
        with self._guard("reading the collection metadata"):
            meta = self.collection.metadata or {}
        value = meta.get(MODEL_KEY)
        return str(value) if value is not None else None

    def count(self) -> int:
        with self._guard("counting chunks"):
            return int(self.collection.count())

    def vectors(self) -> dict[str, tuple[str, list[float]]]:
        """Chunk id → (content hash, vector) of everything stored: a new generation copies unchanged chunks."""
        with self._guard("reading vectors"):
            got = self.collection.get(include=["metadatas", "embeddings"])
        metas = got["metadatas"] or []
        vectors = got["embeddings"] if got["embeddings"] is not None else []
        return {
            i: (str((m or {}).get("hash", "")), [float(x) for x in v])
            for i, m, v in zip(got["ids"], metas, vectors, strict=False)
        }

    def verify(self, expected: int) -> None:
        """The count matches and a stored vector finds its own chunk first; else DependencyUnavailableError."""
        count = self.count()
        if count != expected:
            raise DependencyUnavailableError(
                f"The vector index holds {count} chunks, expected {expected}.", "It is rebuilt in the background."
            )
        if not expected:
            return
        with self._guard("checking the index with a query"):
            probe = self.collection.get(limit=1, include=["embeddings"])
            hits = self.collection.query(query_embeddings=[list(probe["embeddings"][0])], n_results=1)
        if not hits["ids"] or not hits["ids"][0] or hits["ids"][0][0] != probe["ids"][0]:
            raise DependencyUnavailableError(
                "The vector index failed its check query (a stored vector did not find its own chunk).",
                "It is rebuilt in the background.",
            )

    def close(self) -> None:
        """Release an embedded store's files (sqlite, HNSW segments); a server client stays shared."""
        if self.remote:
            return
        with suppress(Exception):  # closing a broken store must not fail its replacement
            self.client.close()

    def indexed(self) -> dict[str, str]:
        """Chunk id → content hash of everything in the collection."""
        with self._guard("listing chunks"):
            got = self.collection.get(include=["metadatas"])
        return {i: str((m or {}).get("hash", "")) for i, m in zip(got["ids"], got["metadatas"] or [], strict=False)}

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        with self._guard("writing chunks"):
            for start in range(0, len(chunks), _BATCH):
                part = chunks[start : start + _BATCH]
                self.collection.upsert(
                    ids=[c.id for c in part],
                    documents=[c.text for c in part],
                    metadatas=[chunk_metadata(c) for c in part],
                    embeddings=[list(v) for v in vectors[start : start + _BATCH]],
                )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._guard("deleting chunks"):
                self.collection.delete(ids=list(ids))

    def query(self, vector: Sequence[float], n: int, where: dict[str, Any] | None) -> list[tuple[str, float]]:
        """(chunk id, cosine distance), nearest first."""
        with self._guard("querying"):
            got = self.collection.query(
                query_embeddings=[list(vector)], n_results=n, where=where, include=["distances"]
            )
        return list(zip(got["ids"][0], [float(d) for d in (got["distances"] or [[]])[0]], strict=False))
