"""What the Slack cards draw, read from the AskResult's typed answer by its `kind`: a plan answer's training plan
(the picks, the candidate table, the thread's title) and a serving answer's plan and pinned-GPU inference."""

from __future__ import annotations

from typing import Any

from service.assistant.types import AskResult
from service.questions.plan import PlanAnswer
from service.questions.serving import ServingAnswer


def training_plan(result: AskResult | None) -> dict[str, Any]:
    """A plan answer's training plan (the plan contract's JSON); empty for any other answer."""
    answer = result.answer if result is not None else None
    return answer.plan.model_dump(mode="json") if isinstance(answer, PlanAnswer) else {}


def serving_card(result: AskResult) -> dict[str, Any] | None:
    """A serving answer's card: {plan, inference} (either may be null); None for any other answer."""
    answer = result.answer
    if not isinstance(answer, ServingAnswer) or (answer.plan is None and answer.inference is None):
        return None
    return {"plan": answer.plan.model_dump(mode="json") if answer.plan is not None else None,
            "inference": answer.inference.model_dump(mode="json") if answer.inference is not None else None}
