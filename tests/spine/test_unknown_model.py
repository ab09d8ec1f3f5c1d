"""A model named that neither the catalog nor its name sizes is asked about by name (issue 36: "the answer asks for
it by name, never with a generic 'which model?'"), whatever question type ran into it: the LLM reader's frame
names it, the engine cannot size it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from service.assistant.prompts import phrases
from service.catalog.loader import Catalog
from service.frame import ModelRef
from service.questions.base import Context
from service.questions.phrases import Phrases
from service.questions.turn import Conversation, Names, answer_message
from service.reader.read import Reading

ROOT = Path(__file__).resolve().parents[2]


class Renamed:
    """A reader that reads as the offline one, then names the model as an LLM provider wrote it."""

    name = "llm"
    context_turns = 0

    def __init__(self, names: Names, model: str) -> None:
        self.inner, self.model = names.reader, model

    def read(self, text: str, turns: Sequence[str] = (), prev_type: str | None = None) -> Reading:
        r = self.inner.read(text, turns, prev_type)
        setup = r.frame.setup.model_copy(update={"models": (ModelRef(name=self.model),)})
        return replace(r, frame=r.frame.model_copy(update={"setups": (setup,)}))


@pytest.mark.parametrize(("message", "lang", "asked"), [
    ("4090能跑这个模型 lora吗", "zh", "openchat_3.5 多大"),
    ("can one A100 fine-tune it with lora?", "en", "How large is openchat_3.5"),
])
def test_an_unknown_model_is_asked_about_by_name(mini: Catalog, names: Names, message: str, lang: str,
                                                 asked: str) -> None:
    ctx = Context.of(mini, max_price_age_days=100_000)

    def phrases_of(code: str) -> Phrases:
        return phrases(ROOT / "prompts", code)

    turn = answer_message(ctx, names, phrases_of, message, Conversation(), reader=Renamed(names, "openchat_3.5"))
    assert turn.error is None
    assert turn.text.startswith(asked)
    assert turn.answer is not None and turn.answer.kind == "clarify"
    assert "GPT-1" not in turn.text and "Did you mean" not in turn.text
