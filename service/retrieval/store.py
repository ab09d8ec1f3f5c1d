"""The dense side: a Chroma collection (embedded on disk, or a server through HttpClient when CHROMA_HOST is set).

Telemetry is off, the space is cosine, and the collection metadata records which embedding model built it. We
embed with our own `Embedder` and pass vectors in, so Chroma never loads a model of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from service.errors import DependencyUnavailableError
from service.retrieval.embeddings import Embedder, chroma_embedding_function
from service.retrieval.types import Chunk

COLLECTION = "gpu_advisor_knowledge"
MODEL_KEY = "embedding_model"
_BATCH = 256


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def chroma_client(data_dir: Path, host: str = "", port: int = 8000) -> Any:
    """Embedded PersistentClient under data_dir/chroma, or an HttpClient when `host` is set (checked by heartbeat)."""
    import chromadb

    if not host:
        (data_dir / "chroma").mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(data_dir / "chroma"), settings=_settings())
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


class VectorStore:
    """One collection; server errors become DependencyUnavailableError so callers can fall back to BM25."""

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
        except DependencyUnavailableError:
            raise
        except Exception as exc:
            if not self.remote:
                raise
            raise DependencyUnavailableError(
                f"Chroma server failed while {action} ({type(exc).__name__}: {exc}).",
                "Check the server (CHROMA_HOST/CHROMA_PORT); search falls back to BM25 meanwhile.",
            ) from exc

    @property
    def collection(self) -> Any:
        if self._collection is None:
            with self._guard("opening the collection"):
                self._collection = self.client.get_or_create_collection(
                    self.name,
                    configuration={"hnsw": {"space": "cosine"}},
                    metadata={MODEL_KEY: self.embedder.model_id},
                    embedding_function=chroma_embedding_function(self.embedder),
                )
        return self._collection

    def built_with(self) -> str | None:
        """The model id recorded when the collection was created."""
        meta = self.collection.metadata or {}
        value = meta.get(MODEL_KEY)
        return str(value) if value is not None else None

    def recreate(self) -> None:
        """Drop everything: used when the embedding model changed."""
        with self._guard("recreating the collection"):
            names = {getattr(c, "name", c) for c in self.client.list_collections()}
            if self.name in names:
                self.client.delete_collection(self.name)
        self._collection = None
        _ = self.collection

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
