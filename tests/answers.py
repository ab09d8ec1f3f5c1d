"""Typed answers for the adapters' fakes (the API's, Slack's, the page's): an AskResult carries its plan as the
service does, in `answer` (kind plan). The training plan is a real one of the synthetic catalog
(tests/fixtures/mini_knowledge) with a fake's own fields laid over it, so a fake states only what its test reads."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from service.planner.training_types import TrainingPlan
from service.questions.plan import PlanAnswer

MINI = Path(__file__).resolve().parent / "fixtures" / "mini_knowledge"


@cache
def _template() -> dict[str, Any]:
    from service.catalog.loader import load_catalog
    from service.questions.base import Context
    from service.questions.plan import plan_dict
    from service.workload import Workload

    ctx = Context.of(load_catalog(MINI), max_price_age_days=100_000)
    plan = plan_dict(ctx, Workload(model="Qwen2-7B", method="lora", samples=100_000))
    assert plan["candidates"], "the synthetic catalog plans Qwen2-7B LoRA"
    return plan


def _over(base: Any, top: Any) -> Any:
    """`top` laid over `base`: mappings key by key, anything else replaced."""
    if isinstance(base, Mapping) and isinstance(top, Mapping):
        return {**base, **{k: _over(base.get(k), v) for k, v in top.items()}}
    return top


def training_plan(fields: Mapping[str, Any]) -> TrainingPlan:
    """A valid training plan stating `fields` (the plan contract's names); each candidate given is the template's
    first with its own fields laid over it. Picks, alternatives and the pick reasons are the fake's only."""
    tpl = _template()
    first = tpl["candidates"][0]
    data = _over({**tpl, "picks": {}, "alternatives": {}, "pick_reasons": {}, "fastest_within_budget": None,
                  "cheapest_within_deadline": None, "frontier": {}},
                 {k: v for k, v in fields.items() if k != "candidates"})
    if "candidates" in fields:
        data["candidates"] = [_over(first, c) for c in fields["candidates"]]
    return TrainingPlan.model_validate(data)


def plan_answer(fields: Mapping[str, Any]) -> PlanAnswer:
    return PlanAnswer(plan=training_plan(fields))


def plan_of(result: Any) -> dict[str, Any] | None:
    """An AskResult's training plan as JSON (its plan answer's), or None for any other answer."""
    answer = result.answer
    return answer.plan.model_dump(mode="json") if isinstance(answer, PlanAnswer) else None
