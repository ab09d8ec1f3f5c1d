"""Eval metrics: first-hit ranks at section level, recall@k and MRR arithmetic, dataset validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import InvalidInputError
from service.retrieval.evaluate import DEFAULT_EVAL_FILE, first_hit, load_cases, metrics


def test_first_hit_counts_any_part_of_a_gold_section() -> None:
    section_of = {"d.md#long-2": "d.md#long", "d.md#other": "d.md#other"}
    assert first_hit(["d.md#other", "d.md#long-2"], ["d.md#long"], section_of) == 2
    assert first_hit(["d.md#other"], ["d.md#long"], section_of) is None
    assert first_hit(["x", "y"], ["y", "x"]) == 1  # any gold counts


def test_metrics_arithmetic() -> None:
    m = metrics([1, 2, 4, None])  # hits at ranks 1, 2, 4 and one miss
    assert (m.n, m.recall_at_1, m.recall_at_3, m.recall_at_5) == (4, 0.25, 0.5, 0.75)
    assert m.mrr == pytest.approx((1 + 1 / 2 + 1 / 4) / 4, abs=1e-3)
    assert metrics([]).n == 0


def test_shipped_dataset_is_valid_and_balanced() -> None:
    cases = load_cases(DEFAULT_EVAL_FILE)
    langs = [c.lang for c in cases]
    assert len(cases) >= 60 and langs.count("zh") == langs.count("en")
    assert sum(c.kind == "paraphrase" for c in cases) >= 10


def test_invalid_dataset_is_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("cases:\n  - id: a\n    question: q\n    lang: fr\n    gold: [x]\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not a valid retrieval eval file"):
        load_cases(path)
