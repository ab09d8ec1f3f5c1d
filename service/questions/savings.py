"""Question type `savings`: how much a change saves or costs ('改成lora能省多少', 'monthly instead of pay as you go').
Engine: service/planner/questions/compare.py:savings, the plan before and after the change."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from service.errors import InvalidInputError, validation_line
from service.planner.lenient import catalog_for
from service.planner.questions.compare import savings
from service.questions import texts
from service.questions.base import AnswerBase, Ask, Asked, Context, Missing, QuestionModule, workload_of
from service.questions.parts import PlanRow
from service.questions.routing import asks_time
from service.questions.summary_text import figure, yuan
from service.workload import Workload


class SavingsArgs(Asked):
    before: dict[str, Any] = Field(default_factory=dict,
                                   description="the workload fields of the plan compared against, e.g. {method: full}")
    by: Literal["cost", "hours"] = Field(default="cost", description="hours: the question asks about time")


class SavingsAnswer(AnswerBase):
    kind: Literal["savings"] = "savings"
    before: PlanRow
    after: PlanRow
    changed: dict[str, Any] = Field(default_factory=dict, description="the workload fields that differ, after")
    delta_cny: float | None = None
    delta_hours: float | None = None
    saving_cny: float | None = None
    by: Literal["cost", "hours"] = "cost"
    workload: Workload
    before_workload: Workload

    def facts(self) -> dict[str, float]:
        return {k: float(v) for k, v in (("cny", self.saving_cny), ("hours", self.delta_hours)) if v is not None}


def _run(ctx: Context, args: SavingsArgs) -> SavingsAnswer:
    after = workload_of(args)
    changes = dict(args.before)
    if changes.get("method", "qlora") != "qlora":
        changes.setdefault("quant_bits", None)
    try:
        before = Workload.model_validate({**after.model_dump(), **changes})
    except ValidationError as exc:
        raise InvalidInputError(f"before: {validation_line(exc)}",
                                "`before` holds workload fields only, e.g. {\"method\": \"full\"}.") from exc
    cat, _ = catalog_for(ctx.catalog, after)
    return SavingsAnswer.model_validate({**savings(cat, before, after, ctx.max_price_age_days), "by": args.by})


def _route(a: Ask) -> dict[str, Any] | Missing:
    subject, prev, slots = a.reading.parsed.subject, a.prev, dict(a.slots)
    before = dict(subject.before)
    for key, value in subject.after.items():
        slots[key] = value
        if key == "method" and value != "qlora":
            slots.pop("quant_bits", None)
    if not before and a.same_type and prev is not None and prev.args.get("before"):
        # '换成全参要贵多少' -> '那京东云呢': the same change, on the follow-up's workload
        before = {**{k: v for k, v in slots.items() if k in ("clouds", "gpu_include", "billing")},
                  **dict(prev.args["before"])}
    if not before and prev is not None and prev.workload is not None:
        old = prev.workload.model_dump()
        before = {k: old.get(k) for k, v in slots.items() if old.get(k) != v and k in Workload.model_fields}
    if not before:  # one message: 'how much cheaper is spot', '包月能便宜多少' against the default choice
        defaults: dict[str, Any] = {"billing": None, "epochs": None, "clouds": [], "gpu_include": []}
        before = {k: v for k, v in defaults.items() if k in a.reading.parsed.slots or k in a.reading.parsed.question_slots}
    if not before:
        return Missing("change")
    if asks_time(a.text):  # 'V100换成A100能快多少': the fastest pick on both sides, the time first
        fastest = {} if "objective" in a.reading.parsed.slots else {"objective": "fastest"}
        return {**slots, **fastest, "before": before, "by": "hours"}
    return {**slots, "before": before, "by": "cost"}


MODULE = QuestionModule(
    name="savings", tool="estimate_savings", title="What a change saves", args=SavingsArgs, answer=SavingsAnswer,
    run=_run, route=_route, render=lambda answer, ph: texts.render_savings(answer.public(), ph),
    summary=lambda o: f"delta {yuan(o.delta_cny, ',.0f', 'not costed')}, {figure(o.delta_hours, 'h', ',.1f')}", frames=(("train", "savings"),),
    description="How much a change saves or costs (method, billing, GPU, cloud, epochs): the plan before (the "
                "workload with `before` applied) and after, and the difference in yuan and hours.")
