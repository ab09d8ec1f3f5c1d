"""Two question types over the planner run more than once (service/planner/questions/compare.py): compare ('A800和
H800哪个划算', 'A100 vs H800') and savings ('改成lora能省多少', 'monthly instead of pay as you go')."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from service.assistant.intents import render
from service.assistant.intents.base import Artifact, Ask, Asked, Missing, QuestionType, workload_of
from service.assistant.intents.routing import asks_time, without
from service.planner.lenient import catalog_for
from service.planner.questions.compare import compare, savings
from service.workload import Workload

_FRAMEWORKS = re.compile(r"(?<![A-Za-z])(deepspeed|fsdp|megatron|colossal-?ai|zero[-_ ]?[123]|llama-?factory|ms-?swift|"
                         r"axolotl|unsloth|trl|torchtune|vllm|sglang|lmdeploy|tensorrt-llm|ollama)(?![A-Za-z])", re.I)
REFERENCE_PARAMS_B = 7.0  # a comparison that names no model compares on a 7B LoRA job, and says so
_DROP = {"gpu": ("gpu_include", "gpu_count"), "cloud": ("clouds",), "method": ("method", "quant_bits"),
         "billing": ("billing",)}


class CompareArgs(Asked):
    compare_kind: Literal["gpu", "cloud", "method", "billing"] = "gpu"
    options: list[str] = Field(min_length=1, max_length=6,
                               description="GPU names, clouds (tencent, jdcloud), methods or billing modes")
    by: Literal["cost", "hours"] = "cost"


class SavingsArgs(Asked):
    before: dict[str, Any] = Field(default_factory=dict,
                                   description="the workload fields of the plan compared against, e.g. {method: full}")
    by: Literal["cost", "hours"] = Field(default="cost", description="hours: the question asks about time")


def _run_compare(ctx: Any, args: CompareArgs) -> Artifact:
    w = workload_of(args)
    cat, _ = catalog_for(ctx.catalog, w)
    return compare(cat, w, args.compare_kind, args.options, args.by, ctx.max_price_age_days)


def _run_savings(ctx: Any, args: SavingsArgs) -> Artifact:
    after = workload_of(args)
    changes = dict(args.before)
    if changes.get("method", "qlora") != "qlora":
        changes.setdefault("quant_bits", None)
    before = Workload.model_validate({**after.model_dump(), **changes})
    cat, _ = catalog_for(ctx.catalog, after)
    return {**savings(cat, before, after, ctx.max_price_age_days), "by": args.by}


def _route_compare(a: Ask) -> dict[str, Any] | Missing | None:
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


def _route_savings(a: Ask) -> dict[str, Any] | Missing:
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


COMPARE = QuestionType(
    name="compare", tool="compare_options", args=CompareArgs, run=_run_compare,
    summary=lambda o: f"winner={o['winner']} by {o['by']}; " + "; ".join(
        f"{r['option']}: {r['hours']} h, ¥{r['cost_cny']}" for r in o["comparison"]),
    route=_route_compare, render=render.render_compare,
    result=lambda o: {"comparison": o["comparison"], "winner": o["winner"]},
    doc="Compare two or more GPUs, clouds, methods or billing modes on the same workload: time, cost and fit side "
        "by side and the winner. A GPU no cloud here prices still compares on time and fit.")

SAVINGS = QuestionType(
    name="savings", tool="estimate_savings", args=SavingsArgs, run=_run_savings,
    summary=lambda o: f"delta ¥{o['delta_cny']}, {o['delta_hours']} h",
    route=_route_savings, render=render.render_savings,
    result=lambda o: {"savings": {k: o[k] for k in ("before", "after", "changed", "delta_cny", "delta_hours",
                                                    "saving_cny")}},
    doc="How much a change saves or costs (method, billing, GPU, cloud, epochs): the plan before (the workload "
        "with `before` applied) and after, and the difference in yuan and hours.")
