"""Reciprocal rank fusion maths, filters, and language detection."""

from __future__ import annotations

import pytest

from service.retrieval.hybrid import detect_lang, rrf
from service.retrieval.types import Chunk, Filters


def test_rrf_scores_are_sums_of_reciprocal_ranks() -> None:
    fused = dict(rrf([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)


def test_rrf_order_and_ties() -> None:
    # a: 1/61 + 1/62, c: 1/63 + 1/61 → a first; b and d tie at 1/62 → the id breaks the tie after best rank.
    assert [d for d, _ in rrf([["a", "b", "c"], ["c", "a", "d"]])] == ["a", "c", "b", "d"]


def test_rrf_weights_and_empty_lists() -> None:
    assert rrf([[], ["x"]]) == [("x", pytest.approx(1 / 61))]
    weighted = dict(rrf([["a"], ["b"]], weights=[0.5, 1.0]))
    assert weighted["a"] == pytest.approx(0.5 / 61) and weighted["b"] == pytest.approx(1 / 61)
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])


def test_a_document_in_both_lists_beats_one_ranked_first_in_a_single_list() -> None:
    assert rrf([["solo", "both"], ["other", "both"]])[0][0] == "both"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("能不能在A10上用8位浮点训练", "zh"),  # Chinese with a GPU name
        ("Can I train in FP8 on an A10?", "en"),  # English
        ("What does 按量 mean", "en"),  # English with one Chinese term
        ("H800 显存", "zh"),  # short mixed: more Chinese than Latin words
        ("PNV4.7XLARGE116", "en"),  # names only
    ],
)
def test_detect_lang(text: str, lang: str) -> None:
    assert detect_lang(text) == lang


def _chunk(lang: str, clouds: tuple[str, ...], topics: tuple[str, ...]) -> Chunk:
    return Chunk(id="x", source="s", title="t", section="s", text="t", lang=lang, clouds=clouds, topics=topics)


@pytest.mark.parametrize(
    ("filters", "chunk", "keep"),
    [
        (Filters(lang="zh"), _chunk("zh", (), ()), True),  # language matches
        (Filters(lang="zh"), _chunk("en", (), ()), False),  # other language
        (Filters(cloud="tencent"), _chunk("en", ("tencent",), ()), True),  # tagged with the cloud
        (Filters(cloud="tencent"), _chunk("en", ("jdcloud",), ()), False),  # another cloud only
        (Filters(cloud="tencent"), _chunk("en", (), ()), True),  # cloud-agnostic passages stay
        (Filters(topic="fp8"), _chunk("en", (), ("fp8", "bf16")), True),  # topic tag present
        (Filters(topic="fp8"), _chunk("en", (), ()), False),  # no topic tag
    ],
)
def test_filters_match(filters: Filters, chunk: Chunk, keep: bool) -> None:
    assert filters.matches(chunk) is keep


def test_filters_to_where() -> None:
    assert Filters().to_where() is None
    assert Filters(lang="en").to_where() == {"lang": "en"}
    where = Filters(lang="zh", cloud="tencent", topic="fp8").to_where()
    assert where == {
        "$and": [
            {"lang": "zh"},
            {"$or": [{"clouds": {"$contains": "tencent"}}, {"cloud_any": True}]},
            {"topics": {"$contains": "fp8"}},
        ]
    }
