"""The question spine over a small synthetic catalog (tests/fixtures/mini_knowledge, written by
scripts/make_mini_catalog.py): 7 GPUs, 7 instances, round prices. A price fix in knowledge/ moves none of these
tests; the shipped data keeps its own validation tests (tests/catalog)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog, load_catalog
from service.questions.base import Context, Phrases
from service.questions.turn import Conversation, Names, Turn, answer_message

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "mini_knowledge"


@pytest.fixture(scope="session")
def mini() -> Catalog:
    return load_catalog(MINI)


@pytest.fixture(scope="session")
def names(mini: Catalog) -> Names:
    return Names(mini)


@pytest.fixture(scope="session")
def ask(mini: Catalog, names: Names) -> Callable[..., Turn]:
    """ask("A10多少钱") -> the offline turn over the mini catalog (no retriever: no citations)."""
    ctx = Context.of(mini, max_price_age_days=100_000)

    def phrases_of(lang: str) -> Phrases:
        return phrases(ROOT / "prompts", lang)

    def run(message: str, conv: Conversation | None = None) -> Turn:
        return answer_message(ctx, names, phrases_of, message, conv or Conversation())

    return run
