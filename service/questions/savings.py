"""Question type `savings`: how much a change saves or costs ('改成lora能省多少', 'monthly instead of pay as you go').
Engine: service/planner/questions/compare.py:savings, the plan before and after the change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from pydantic import Field, ValidationError, model_validator

from service.errors import InvalidInputError, validation_line
from service.frame import Frame, has_model, measured_baseline
from service.planner.costing import QUOTE_LINKS
from service.planner.lenient import catalog_for
from service.planner.questions.compare import savings
from service.questions.base import (
    AnswerBase,
    Ask,
    Asked,
    Context,
    Missing,
    Phrases,
    QuestionModule,
    workload_of,
)
from service.questions.catalog import MODULE as CATALOG
from service.questions.catalog import CatalogAnswer, CatalogArgs
from service.questions.parts import PlanRow
from service.questions.summary_text import figure, yuan
from service.questions.texts import config_line, n1
from service.questions.view import workload_fields
from service.workload import Workload

REFERENCE_PARAMS_B = 7.0  # a ratio of two setups that names no model: the ratio on a 7B LoRA, said


class SavingsArgs(Asked):
    before: dict[str, object] = Field(default_factory=dict,
                                   description="the workload fields of the plan compared against, e.g. {method: full}")
    by: Literal["cost", "hours"] = Field(default="cost", description="hours: the question asks about time")
    observed_hours: float | None = Field(default=None, gt=0, description="the hours the baseline took as measured: "
                                         "the answer scales them by the two setups' ratio")
    billing_of: CatalogArgs | None = Field(default=None, description="a saving with no job of its own ('两台 GN7 "
                                           "按量改包月能省多少'): the instances run, on demand against monthly (or "
                                           "spot), from the catalog's prices; no model is needed")

    @model_validator(mode="after")
    def _consistent(self) -> SavingsArgs:
        """A billing saving of instances needs no job; any other saving is a workload's (Workload's checks)."""
        if self.billing_of is not None and self.model is None and self.params_b is None:
            return self
        check = cast(Callable[[Workload], Workload], Workload._consistent)  # the function under the decorator
        check(self)
        return self


class SavingsAnswer(AnswerBase):
    kind: Literal["savings"] = "savings"
    before: PlanRow | None = None
    after: PlanRow | None = None
    changed: dict[str, object] = Field(default_factory=dict, description="the workload fields that differ, after")
    delta_cny: float | None = None
    delta_hours: float | None = None
    saving_cny: float | None = None
    by: Literal["cost", "hours"] = "cost"
    workload: Workload | None = None
    before_workload: Workload | None = None
    billing: CatalogAnswer | None = Field(default=None, description="a billing saving with no job: the catalog's "
                                          "on-demand against monthly (break-even) or spot look-up")
    observed_hours: float | None = Field(default=None, description="the baseline's hours as measured")
    scaled_hours: float | None = Field(default=None, description="the measured hours times the two setups' ratio")
    measured_before: PlanRow | None = Field(default=None, description="the baseline at the measured hours (its "
                                            "cost at its price for those hours)")
    measured_after: PlanRow | None = Field(default=None, description="the other setup at the scaled hours")
    measured_delta_cny: float | None = Field(default=None, description="the difference at the measured scale")

    def facts(self) -> dict[str, float]:
        if self.billing is not None:
            out = self.billing.facts()
            pair = self.billing.breakeven.pairs[0] if self.billing.breakeven and self.billing.breakeven.pairs else None
            if pair is not None and pair.saving_month_cny is not None:
                out["cny_per_month"] = pair.saving_month_cny  # the saving a month, the figure asked
            if self.billing.spot:
                out["cny_per_hour"] = self.billing.spot[0].spot_cny  # the spot price the saving is from
            return out
        if self.scaled_hours is not None:
            return {"hours": self.scaled_hours}
        return {k: float(v) for k, v in (("cny", self.saving_cny), ("hours", self.delta_hours)) if v is not None}


def _run(ctx: Context, args: SavingsArgs) -> SavingsAnswer:
    if args.billing_of is not None and args.model is None and args.params_b is None:
        return SavingsAnswer(billing=CATALOG.call(ctx, args.billing_of), asked=args.asked)
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
    out = SavingsAnswer.model_validate({**savings(cat, before, after, ctx.max_price_age_days), "by": args.by})
    if args.observed_hours and out.before is not None and out.after is not None and out.before.hours \
            and out.after.hours:
        out.observed_hours = args.observed_hours
        out.scaled_hours = round(args.observed_hours * out.after.hours / out.before.hours, 1)
        _at_measured_scale(out, args.observed_hours / out.before.hours)
    return out


def _at_measured_scale(out: SavingsAnswer, k: float) -> None:
    """Both setups and their difference at the run's measured scale: the estimate's hours and costs times the
    measured over estimated hours (the same prices), so the cost lines agree with the time line."""
    assert out.before is not None and out.after is not None

    def scaled(r: PlanRow) -> PlanRow:
        return r.model_copy(update={"hours": None if r.hours is None else round(r.hours * k, 1),
                                    "cost_cny": None if r.cost_cny is None else round(r.cost_cny * k, 2)})

    out.measured_before, out.measured_after = scaled(out.before), scaled(out.after)
    if out.delta_cny is not None:
        out.measured_delta_cny = round(float(out.delta_cny) * k, 2)


_CHANGEABLE = ("method", "quant_bits", "gpu_include", "gpu_count", "billing", "clouds", "epochs", "seq_len",
               "precision", "zero_stage", "lora_rank", "micro_batch")


_LISTS = ("gpu_include", "clouds")  # a list field unset on one side is empty, never None


def _setup_fields(a: Ask, i: int) -> dict[str, object]:
    s = a.frame.setups[i]
    out = workload_fields(a.frame, s)
    if s.hardware.gpu:
        out["gpu_include"] = [s.hardware.gpu]
    if s.hardware.gpu_count:
        out["gpu_count"] = s.hardware.gpu_count
    return out


def _before(a: Ask, after: dict[str, object]) -> dict[str, object]:
    """The fields of the plan compared against: the post's baseline setup, else what the previous question had
    where this one changes it, else (one message: '包月能便宜多少') the default for each change it names."""
    f = a.frame
    base = next((i for i, s in enumerate(f.setups) if s.role == "baseline" and i != f.asked_setup), None)
    if base is not None:
        old = _setup_fields(a, base)
        changed = {k: old.get(k) for k in _CHANGEABLE if old.get(k) != after.get(k) and (k in old or k in after)}
        if changed:  # else the two setups differ in a constraint ('monthly instead of pay as you go'): below
            return {k: ([] if v is None and k in _LISTS else v) for k, v in changed.items()}
    prev = a.prev.workload if a.prev is not None else None
    if prev is not None:
        was = prev.model_dump()
        return {k: was.get(k) for k, v in after.items() if k in _CHANGEABLE and was.get(k) != v}
    defaults: dict[str, object] = {"billing": None, "epochs": None, "clouds": [], "gpu_include": []}
    return {k: v for k, v in defaults.items() if k in after}


def billing_change(f: Frame) -> bool:
    """The saving asked is a change of billing ('改包月', 'spot would save what', '每月 300 小时')."""
    return (f.compared == "billing" or f.fact in ("break_even", "spot", "billing")
            or bool(f.constraints.usage_hours_per_month))


def _route(a: Ask) -> SavingsArgs | Missing:
    f = a.frame
    if billing_change(f) and not measured_baseline(f) and (
            not has_model(f) or any(s.hardware.instance for s in f.setups)):
        # 'two GN7 around the clock: monthly saves how much', 'our sweep runs on GN10Xp on demand: spot would save
        # what': the instances' own prices, no job to size
        cat = CATALOG.route(a)
        if isinstance(cat, CatalogArgs) and f.constraints.billing == "spot":
            cat = cat.model_copy(update={"ask": "spot"})
        if isinstance(cat, CatalogArgs) and cat.ask in ("breakeven", "spot"):
            return SavingsArgs(billing_of=cat, asked=f.asked, question="savings")
    after = _setup_fields(a, f.asked_setup) if f.setups else workload_fields(f)
    if not (after.get("model") or after.get("params_b")):
        if not measured_baseline(f):
            return Missing("model")
        after.update({"params_b": REFERENCE_PARAMS_B})  # a ratio of two setups: any model gives the ratio
    if after.get("method") not in (None, "qlora", "lora"):
        after.pop("quant_bits", None)
    before = _before(a, after)
    if not before:
        return Missing("change")
    observed = next((s.outcome.hours for i, s in enumerate(f.setups)
                     if i != f.asked_setup and s.outcome is not None and s.outcome.hours), None)
    by = "hours" if f.constraints.objective == "fastest" or f.asked == "time" or observed else "cost"
    if by == "hours" and f.constraints.objective is None:
        after["objective"] = "fastest"  # 'V100换成A100能快多少': the fastest pick on both sides, the time first
    return SavingsArgs.model_validate({**after, "before": before, "by": by, "observed_hours": observed,
                                       "asked": f.asked})


def render_savings(answer: SavingsAnswer, ph: Phrases) -> str:
    """The saving first (or the time, when the question asks about time), then both picks; a billing saving with
    no job: the catalog's break-even (its first line says the saving: service/questions/first_line.py)."""
    if answer.billing is not None:
        return CATALOG.render(answer.billing, ph)
    a, b = answer.before, answer.after
    if a is None or b is None:
        raise ValueError("a savings answer holds both plans or a billing look-up")
    lines: list[str] = []
    if answer.scaled_hours is not None:  # a measured run scaled to the other setup: the time first
        lines.append(ph.text("time_scaled", hours=n1(answer.scaled_hours), observed=n1(answer.observed_hours),
                             before=config_line(a, ph), after=config_line(b, ph), hours_before=n1(a.hours),
                             hours_after=n1(b.hours)))
    elif answer.by == "hours" and answer.delta_hours is not None:
        dh = float(answer.delta_hours)
        key = "time_same" if abs(dh) < 0.05 else "time_less" if dh < 0 else "time_more"
        lines.append(ph.text(key, hours=n1(abs(dh)), hours_before=n1(a.hours), hours_after=n1(b.hours)))
    sides = ph.group("save_side")
    if answer.measured_before is not None and answer.measured_after is not None:  # the cost at the measured scale
        a, b = answer.measured_before, answer.measured_after
    delta_cny = answer.measured_delta_cny if answer.measured_before is not None else answer.delta_cny
    if delta_cny is None:
        side = "before" if not a.priced else "after"
        lines.append(ph.text("save_missing", side=sides.text(side)))
    else:
        delta = float(delta_cny)
        key = "save_same" if abs(delta) < 0.5 else "save_less" if delta < 0 else "save_more"
        lines.append(ph.text(key, amount=n1(abs(delta), 0), before=n1(a.cost_cny, 0), after=n1(b.cost_cny, 0),
                             hours_before=n1(a.hours), hours_after=n1(b.hours)))
    for side, r in (("before", a), ("after", b)):
        key = "save_row" if r.cost_cny is not None else "save_row_unpriced" if r.gpu else "save_row_no_fit"
        lines.append(ph.text(key, side=sides.text(side), config=config_line(r, ph), hours=n1(r.hours),
                             cost=n1(r.cost_cny, 0), link=QUOTE_LINKS.get(str(r.cloud), "")))
    return "\n".join(lines)


MODULE = QuestionModule(
    name="savings", tool="estimate_savings", title="What a change saves", args=SavingsArgs, answer=SavingsAnswer,
    run=_run, route=_route, render=render_savings,
    summary=lambda o: CATALOG.summary(o.billing) if o.billing is not None else
    f"delta {yuan(o.delta_cny, ',.0f', 'not costed')}, {figure(o.delta_hours, 'h', ',.1f')}",
    frames=(("train", "savings"),),
    description="How much a change saves or costs (method, billing, GPU, cloud, epochs): the plan before (the "
                "workload with `before` applied) and after, and the difference in yuan and hours.")
