"""Question type `compare`: which of two or more GPUs, clouds, methods or billing modes for the same job ('A800和
H800哪个划算', 'A100 vs H800'). Engine: service/planner/questions/compare.py:compare, the planner run per option."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from service.planner.lenient import catalog_for
from service.planner.questions.compare import compare
from service.questions import texts
from service.questions.base import AnswerBase, Ask, Asked, Context, Missing, QuestionModule, workload_of
from service.questions.parts import PlanRow
from service.questions.routing import asks_time, without
from service.questions.summary_text import figure, yuan
from service.workload import Workload

_FRAMEWORKS = re.compile(r"(?<![A-Za-z])(deepspeed|fsdp|megatron|colossal-?ai|zero[-_ ]?[123]|llama-?factory|ms-?swift|"
                         r"axolotl|unsloth|trl|torchtune|vllm|sglang|lmdeploy|tensorrt-llm|ollama)(?![A-Za-z])", re.I)
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


def _route(a: Ask) -> dict[str, Any] | Missing | None:
    subject = a.reading.parsed.subject
    kind, options = subject.compare_kind, list(subject.options)
    prev = a.prev
    if not options and prev is not None and len(subject.gpus) == 1 and prev.args.get("gpu"):
        kind, options = "gpu", [str(prev.args["gpu"]), subject.gpus[0]]  # '跟a100 40g比呢' after a 4090 answer
    if not options and a.same_type and prev is not None:
        kind, options = prev.args.get("compare_kind"), list(prev.args.get("options") or [])
    if not options and len(a.slots.get("clouds") or []) >= 2:
        kind, options = "cloud", list(a.slots["clouds"])
    if not options and len(set(m.lower() for m in _FRAMEWORKS.findall(a.text))) >= 2:
        return None  # 'DeepSpeed 还是 FSDP for a 30B': a how-to with a workload in it, answered as knowledge
    if not options:
        return Missing("options")
    slots = dict(a.slots)
    if not (slots.get("model") or slots.get("params_b")):  # 'l20快还是4090快': the GPUs on a reference job
        slots.update({"params_b": REFERENCE_PARAMS_B, "method": slots.get("method") or "lora"})
    if asks_time(a.text):
        by = "hours"
    else:
        by = prev.args.get("by", "cost") if a.same_type and prev is not None and not subject.options else "cost"
    return {**without(slots, *_DROP.get(str(kind), ())), "compare_kind": kind, "options": options, "by": by}


def _summary(o: CompareAnswer) -> str:
    winner = o.winner or "none (no option has both figures)"
    return f"winner={winner} by {o.by}; " + "; ".join(
        f"{r.option}: {figure(r.hours, 'h', missing='no fitting instance')}, {yuan(r.cost_cny)}" for r in o.comparison)


MODULE = QuestionModule(
    name="compare", tool="compare_options", title="Compare GPUs, clouds, methods or billing", args=CompareArgs,
    answer=CompareAnswer, run=_run, route=_route, render=lambda answer, ph: texts.render_compare(answer.public(), ph),
    summary=_summary, frames=(("train", "winner"), ("both", "winner")),
    description="Compare two or more GPUs, clouds, methods or billing modes on the same workload: time, cost and fit "
                "side by side and the winner (by cost, or by hours). A GPU no cloud here prices still compares on "
                "time and fit.")
