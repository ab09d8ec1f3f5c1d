"""Question type `compare`: which of two or more GPUs, clouds, methods or billing modes for the same job ('A800和
H800哪个划算', 'A100 vs H800'). Engine: service/planner/questions/compare.py:compare, the planner run per option."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.planner.costing import QUOTE_LINKS
from service.planner.lenient import catalog_for
from service.planner.questions.compare import compare
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
from service.questions.parts import PlanRow
from service.questions.summary_text import figure, yuan
from service.questions.texts import config_line, n1, option_name
from service.questions.view import gpus_named, is_memory_class, subject_gpu, workload_fields
from service.workload import Workload

REFERENCE_PARAMS_B = 7.0  # a comparison that names no model compares on a 7B LoRA job, and says so
_DROP = {"gpu": ("gpu_include", "gpu_count"), "cloud": ("clouds",), "method": ("method", "quant_bits"),
         "billing": ("billing",)}
CompareKind = Literal["gpu", "cloud", "method", "billing"]


class CompareArgs(Asked):
    compare_kind: CompareKind = "gpu"
    options: list[str] = Field(min_length=1, max_length=6,
                               description="GPU names, clouds (tencent, jdcloud), methods or billing modes")
    by: Literal["cost", "hours"] = "cost"


class CompareAnswer(AnswerBase):
    kind: Literal["compare"] = "compare"
    compare_kind: CompareKind
    by: Literal["cost", "hours", "card_hours"]
    comparison: list[PlanRow]
    winner: str | None = None
    unpriced: list[str] = Field(default_factory=list)
    cost_unknown: bool = False
    workload: Workload

    def facts(self) -> dict[str, float]:
        win = next((r for r in self.comparison if r.option == self.winner), None)
        if win is None:
            return {}
        out = {k: float(v) for k, v in (("hours", win.hours), ("cny", win.cost_cny), ("count", win.gpu_count))
               if v is not None}
        return out


def _run(ctx: Context, args: CompareArgs) -> CompareAnswer:
    w = workload_of(args)
    cat, _ = catalog_for(ctx.catalog, w)
    return CompareAnswer.model_validate(compare(cat, w, args.compare_kind, args.options, args.by,
                                                ctx.max_price_age_days))


def _route(a: Ask) -> CompareArgs | Missing | None:
    f = a.frame
    kind, options = f.compared, list(f.options)
    if kind in ("framework", "engine"):
        return None  # 'DeepSpeed 还是 FSDP for a 30B': a how-to with a workload in it, answered as knowledge
    gpus = [g for g in gpus_named(f) if not is_memory_class(g)]
    if not options and len(gpus) >= 2:
        kind, options = "gpu", gpus
    prev = a.prev.frame if a.prev is not None else None
    if not options and len(gpus) == 1 and prev is not None and (was := subject_gpu(prev)) and was != gpus[0]:
        kind, options = "gpu", [was, gpus[0]]  # '跟a100 40g比呢' after a 4090 answer
    if not options and len(f.constraints.clouds) >= 2:
        kind, options = "cloud", list(f.constraints.clouds)
    if not options or kind not in _DROP:
        return Missing("options")
    fields = workload_fields(f)
    if not (fields.get("model") or fields.get("params_b")):  # 'l20快还是4090快': the GPUs on a reference job
        fields.update({"params_b": REFERENCE_PARAMS_B, "method": fields.get("method") or "lora"})
    for key in _DROP[str(kind)]:
        fields.pop(key, None)
    if kind != "gpu" and len(gpus) == 1 and not fields.get("gpu_include"):
        fields["gpu_include"] = gpus  # 'V100 on JD or on Tencent: which is cheaper?': that card on each cloud
    by = "hours" if f.constraints.objective == "fastest" or f.asked == "time" else "cost"
    return CompareArgs.model_validate({**fields, "compare_kind": kind, "options": options, "by": by,
                                       "asked": f.asked})


def render_compare(answer: CompareAnswer, ph: Phrases) -> str:
    kind, rows, winner = answer.compare_kind, answer.comparison, answer.winner
    by_opt = {r.option: r for r in rows}
    lines: list[str] = []
    if answer.cost_unknown:
        lines.append(ph.text("cmp_cost_unknown", options=", ".join(option_name(kind, o, ph) for o in answer.unpriced)))
    if winner is None:
        lines.append(ph.text("cmp_none"))
    elif answer.by == "card_hours":
        w = by_opt[winner]
        others = [r for r in rows if r.option != winner and r.card_hours]
        o = min(others, key=lambda r: r.card_hours or 0.0) if others else w
        lines.append(ph.text("cmp_card", winner=option_name(kind, winner, ph), wh=n1(w.card_hours),
                             other=option_name(kind, o.option, ph), oh=n1(o.card_hours),
                             ratio=f"{(o.card_hours or 0.0) / (w.card_hours or 0.0):.1f}"))
    else:
        w = by_opt[winner]
        line_key = "cmp_line" if w.priced else "cmp_line_unpriced"
        line = ph.text(line_key, config=config_line(w, ph), hours=n1(w.hours), cost=n1(w.cost_cny, 0))
        lines.append(ph.text("cmp_cost" if answer.by == "cost" else "cmp_hours",
                             winner=option_name(kind, winner, ph), line=line))
    lines += ["", ph.text("cmp_header"), "|---|---|---|---|---|"]
    for r in rows:
        mem = f"{r.per_gpu_gib} / {r.gpu_memory_gib:g} GiB" if r.per_gpu_gib is not None else "—"
        cost = f"¥{n1(r.cost_cny, 0)}" if r.priced else ph.text("cmp_no_price" if r.fits else "cmp_no_fit")
        hours = f"{n1(r.hours)} {ph.text('hours_unit')}" if r.hours is not None else "—"
        lines.append(ph.text("cmp_row", option=option_name(kind, r.option, ph), config=config_line(r, ph), memory=mem,
                             hours=hours, cost=cost))
    if answer.unpriced and not answer.cost_unknown:
        lines += ["", ph.text("cmp_unpriced", options=", ".join(option_name(kind, o, ph) for o in answer.unpriced))]
    quoted = [r for r in rows if r.fits and not r.priced and r.instance_type and r.cloud]
    lines += [""] * bool(quoted) + [ph.text(  # rented, priced on request: where to ask
        "cmp_quote", cloud=ph.name("cloud_names", r.cloud), instance=r.instance_type,
        link=QUOTE_LINKS.get(str(r.cloud), "")) for r in quoted]
    return "\n".join(lines)


def _summary(o: CompareAnswer) -> str:
    winner = o.winner or "none (no option has both figures)"
    return f"winner={winner} by {o.by}; " + "; ".join(
        f"{r.option}: {figure(r.hours, 'h', missing='no fitting instance')}, {yuan(r.cost_cny)}" for r in o.comparison)


MODULE = QuestionModule(
    name="compare", tool="compare_options", title="Compare GPUs, clouds, methods or billing", args=CompareArgs,
    answer=CompareAnswer, run=_run, route=_route, render=render_compare,
    summary=_summary, frames=(("train", "winner"), ("both", "winner")),
    description="Compare two or more GPUs, clouds, methods or billing modes on the same workload: time, cost and fit "
                "side by side and the winner (by cost, or by hours). A GPU no cloud here prices still compares on "
                "time and fit.")
