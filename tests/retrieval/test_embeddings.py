"""The embedder: model identity without loading it, default model path, and refusal after close (exit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import DependencyUnavailableError
from service.retrieval.embeddings import Embedder, default_model_path, fingerprint, resolve_model_path


def test_default_model_is_the_bundled_minilm() -> None:
    path = resolve_model_path("")
    assert path == default_model_path().resolve() and (path / "modules.json").is_file()


def test_model_id_comes_from_files_not_from_loading() -> None:
    e = Embedder(default_model_path())
    assert e.model_id.endswith("@" + fingerprint(default_model_path()))
    assert e._model is None  # identifying the model did not load it


def test_a_directory_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DependencyUnavailableError, match="GPU_ADVISOR_EMBEDDING_MODEL"):
        resolve_model_path(str(tmp_path))


def test_closed_embedder_refuses_work() -> None:
    e = Embedder(default_model_path())
    e.close()
    with pytest.raises(RuntimeError, match="closed"):
        e.embed(["x"])
