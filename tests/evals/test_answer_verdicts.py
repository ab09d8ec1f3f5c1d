"""A label's yes/no verdict is checked against the typed answer: the catalog fact's, else the knowledge answer's
lead (issue 36); an explained verdict ('yes: ...') settles its polarity, a phrase or free text settles none."""

from __future__ import annotations

import pytest

from service.evals.questions.dataset import Question
from service.evals.questions.score import verdict_ok, yes_no
from service.questions.knowledge import KnowledgeAnswer


@pytest.mark.parametrize(("label", "polarity"), [
    ("yes", "yes"), ("No", "no"), ("yes: vLLM supports FP8 now", "yes"), ("no - the reference model", "no"),
    ("no fixed conclusion; ZeRO-3 is better in most cases", None), ("not supported without modifying the code", None),
    ("yes with more than one GPU; otherwise quantize", "yes"), ("no single switch; configure FSDP", None),
    ("按量", None), ("80G", None), ("nothing to do", None), ("yesterday's build", None),
])
def test_the_polarity_a_label_settles(label: str, polarity: str | None) -> None:
    assert yes_no(label) == polarity


def _q(answer: str) -> Question:
    return Question(id="x", source="written", kind="chat", lang="en", text="Is it safe?", type="knowledge",
                    verdict={"answer": answer})


@pytest.mark.parametrize(("said", "label", "ok"), [
    ("yes", "yes", True), ("no", "yes", False), (None, "yes", False),
    ("yes", "yes, with tensor_parallel_size (not automatic)", True), ("yes", "no: the router picks", False),
    ("no", "no fixed conclusion; ZeRO-3 is better", None),
])
def test_a_knowledge_answers_lead_settles_a_yes_no_verdict(said: str | None, label: str, ok: bool | None) -> None:
    answer = KnowledgeAnswer(query="Is it safe?", answer=said)  # type: ignore[arg-type]
    assert verdict_ok(_q(label), {"answer": answer.model_dump()}, None) is ok  # type: ignore[arg-type]


def test_a_free_text_verdict_is_not_settled_by_a_yes() -> None:
    answer = KnowledgeAnswer(query="why?", answer="yes")
    assert verdict_ok(_q("the default is computed at start-up"), {"answer": answer.model_dump()}, None) is None  # type: ignore[arg-type]
