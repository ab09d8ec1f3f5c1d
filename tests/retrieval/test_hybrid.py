"""Hybrid search over the fixture corpus: passages, filters on both retrievers, batching, BM25 fallback."""

from __future__ import annotations

import dataclasses
import socket

import pytest

from service.errors import DependencyUnavailableError, InvalidInputError
from service.retrieval.config import RetrievalConfig
from service.retrieval.embeddings import Embedder
from service.retrieval.hybrid import DENSE_WEIGHT, Retriever
from service.retrieval.ingest import build_index
from service.retrieval.types import Filters


@pytest.fixture
def retriever(config: RetrievalConfig, embedder: Embedder) -> Retriever:
    return Retriever(config, embedder)


def test_search_returns_cited_passages(retriever: Retriever) -> None:
    passages = retriever.search("Can the A10 train in FP8?", k=3)
    top = passages[0]
    assert top.id == "guide/01-precision.en.md#fp8-needs-ada-or-hopper"
    assert top.dense_rank is not None and top.bm25_rank is not None
    weight = DENSE_WEIGHT["en"]
    assert top.score == pytest.approx(weight / (60 + top.dense_rank) + 1 / (60 + top.bm25_rank), abs=1e-6)
    assert top.ref == top.id and top.sources[0].ref.startswith("https://nvidia.github.io/")
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


def test_dense_weight_follows_what_the_model_can_read(retriever: Retriever, config: RetrievalConfig, minilm: Embedder) -> None:
    # e5 reads both languages: dense votes with its language's weight in Chinese too.
    assert retriever.dense_weight("Can the A10 train in FP8?") == pytest.approx(DENSE_WEIGHT["en"])
    assert retriever.dense_weight("能不能在A10上用8位浮点训练") == pytest.approx(DENSE_WEIGHT["zh"])
    # all-MiniLM-L6-v2 is English-only: Chinese is mostly [UNK] to it, so BM25 decides Chinese questions.
    english_only = Retriever(config, minilm)
    assert english_only.dense_weight("Can the A10 train in FP8?") == pytest.approx(DENSE_WEIGHT["en"])
    assert english_only.dense_weight("能不能在A10上用8位浮点训练") < 0.1
    english_only.close()


def test_chinese_question_finds_the_chinese_section(retriever: Retriever) -> None:
    ids = [p.id for p in retriever.search("A10 能用 FP8 训练吗", k=3)]
    assert "guide/01-precision.zh.md#fp8-只有-ada-和-hopper-支持" in ids


def test_catalog_documents_answer_price_questions(retriever: Retriever) -> None:
    top = retriever.search("PNV4.7XLARGE116 按量计费价格", k=3)[0]
    assert top.source == "catalog/tencent-pnv4.zh.md"
    assert top.ref == "https://buy.cloud.tencent.com/price/cvm/calculator"


@pytest.mark.parametrize(
    "filters",
    [
        Filters(lang="zh"),  # language
        Filters(cloud="jdcloud"),  # JD passages plus cloud-agnostic guide sections
        Filters(topic="billing"),  # topic tag
        Filters(lang="en", cloud="tencent", topic="prices"),  # all three
    ],
)
def test_filters_apply_to_both_retrievers(retriever: Retriever, filters: Filters) -> None:
    by_id = {c.id: c for c in retriever.chunks}
    r = retriever.rankings(["GPU price billing fp8 显存 价格"], depth=50, filters=filters)[0]
    assert r.dense and r.bm25
    assert all(filters.matches(by_id[i]) for i in r.dense + r.bm25)
    everything = retriever.rankings(["GPU price billing fp8 显存 价格"], depth=50)[0]
    assert set(r.dense) == {i for i in everything.dense if filters.matches(by_id[i])}  # Chroma where == Python filter


def test_search_many_answers_each_question(retriever: Retriever) -> None:
    results = retriever.search_many(["spot instances", "包年包月"], k=2, cloud="tencent")
    assert [len(r) for r in results] == [2, 2]
    assert results[0][0].id == "guide/02-billing.en.md#spot-instances"
    assert results[1][0].id == "guide/02-billing.zh.md#包年包月"


@pytest.mark.parametrize(("questions", "k"), [(["ok", "  "], 5), (["ok"], 0)])  # blank question; k below 1
def test_bad_search_input_is_a_user_error(retriever: Retriever, questions: list[str], k: int) -> None:
    with pytest.raises(InvalidInputError):
        retriever.search_many(questions, k=k)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_degrades_to_bm25(config: RetrievalConfig, embedder: Embedder) -> None:
    remote = dataclasses.replace(config, chroma_host="127.0.0.1", chroma_port=_closed_port())
    with pytest.raises(DependencyUnavailableError, match="unreachable"):
        build_index(remote, embedder)
    retriever = Retriever(remote, embedder)
    assert retriever.store is None and "BM25 only" in retriever.warnings[0]
    assert "unreachable" in retriever.warnings[0]
    passages = retriever.search("spot instances", k=2)
    assert passages[0].id == "guide/02-billing.en.md#spot-instances"
    assert all(p.dense_rank is None and p.bm25_rank is not None for p in passages)
