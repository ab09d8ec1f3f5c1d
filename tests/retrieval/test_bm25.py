"""Tokenization of mixed Chinese/English text and BM25 ranking with masks."""

from __future__ import annotations

import numpy as np
import pytest

from service.retrieval.bm25 import Bm25Index, Tokenizer


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PNV4.7XLARGE116", ["pnv4.7xlarge116", "pnv4", "7xlarge116"]),  # instance name whole, plus its parts
        ("A100-80G-SXM", ["a100-80g-sxm", "a100", "80g", "sxm"]),  # GPU id whole, plus parts
        ("4090D显卡", ["4090d", "显卡"]),  # script change splits; the name stays whole
        ("p.n1p40.7xlarge", ["p.n1p40.7xlarge", "p", "n1p40", "7xlarge"]),  # JD names
    ],
)
def test_names_stay_whole(tok: Tokenizer, text: str, expected: list[str]) -> None:
    assert tok(text) == expected


def test_chinese_words_and_stopwords(tok: Tokenizer) -> None:
    tokens = tok("腾讯云的显存和按量计费价格是多少")
    assert {"腾讯云", "显存", "按量计费", "价格"} <= set(tokens)
    assert "的" not in tokens and "和" not in tokens
    assert tok("What is the price of the A10?") == ["price", "a10"]


def test_english_words_are_stemmed_names_are_not(tok: Tokenizer) -> None:
    assert tok("instances") == tok("instance") == ["instanc"]
    assert tok("GPUs") == tok("GPU") == ["gpu"]
    assert tok("training trained") == ["train", "train"]
    assert tok("A100s 4090D") == ["a100s", "4090d"]  # tokens with digits are names: left alone


def test_domain_words_are_kept_whole() -> None:
    assert "梯度累积步数" not in Tokenizer()("梯度累积步数")
    assert "梯度累积步数" in Tokenizer(["梯度累积步数"])("梯度累积步数")


def test_rank_orders_by_score_and_respects_the_mask(tok: Tokenizer) -> None:
    docs = ["fp8 training on h800", "a10 has no fp8", "spot instances are cheap"]
    index = Bm25Index([tok(d) for d in docs])
    ranked = index.rank(tok("fp8 h800"), depth=10)
    assert [i for i, _ in ranked] == [0, 1]  # doc 2 scores 0 and is dropped
    masked = index.rank(tok("fp8 h800"), depth=10, mask=np.array([False, True, True]))
    assert [i for i, _ in masked] == [1]
    assert index.rank(tok("完全无关"), depth=10) == []  # unknown tokens: no results, no error
    assert index.rank([], depth=10) == []


def test_empty_index() -> None:
    assert Bm25Index([]).rank(["x"], depth=5) == []
