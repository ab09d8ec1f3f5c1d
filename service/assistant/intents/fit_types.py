"""Two question types over the fit engine (service/planner/questions/fit.py): feasibility ('4090能跑14b lora吗':
yes/no on a named GPU x count) and min_gpus ('需要几张A100', 'least VRAM for mixtral qlora')."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from service.assistant.intents import render
from service.assistant.intents.base import Artifact, Ask, Asked, Missing, QuestionType, workload_of
from service.assistant.intents.routing import subject_count, subject_gpu, without
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.compare import plan_row, run_plan
from service.planner.questions.fit import feasibility, min_gpus

FEASIBILITY_KEYS = ("gpu", "gpu_name", "gpu_count", "fits", "per_gpu_gib", "gpu_memory_gib", "usable_gib",
                    "gpus_needed", "needed_per_gpu_gib", "single_gpu_gib", "min_memory_gib", "memory", "strategy",
                    "training_hours", "fits_with", "rent", "options", "other_methods", "plan_pick")


class FeasibilityArgs(Asked):
    gpu: str = Field(description="the GPU asked about, any in the catalog: 4090, 3090, L40S, A100 80G, 910B ...")


class MinGpusArgs(Asked):
    gpu: str | None = Field(default=None, description="the GPU to count; none: the least GPU memory")
    method_assumed: bool = Field(default=False, description="no method was named: count the other methods too")


def _run_feasibility(ctx: Any, args: FeasibilityArgs) -> Artifact:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    out = with_assumptions(feasibility(cat, w, args.gpu, args.gpu_count or 1), said)
    out["plan_pick"] = plan_row("plan", run_plan(cat, w, ctx.max_price_age_days))
    return out


def _run_min_gpus(ctx: Any, args: MinGpusArgs) -> Artifact:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    return with_assumptions(min_gpus(cat, w, args.gpu, args.method_assumed), said)


def _route_feasibility(a: Ask) -> dict[str, Any] | Missing:
    gpu = subject_gpu(a)
    if gpu is None:
        return Missing("gpu")
    return {**without(a.slots, "gpu_include", "gpu_count"), "gpu": gpu, "gpu_count": subject_count(a) or 1}


def _route_min_gpus(a: Ask) -> dict[str, Any]:
    gpu = subject_gpu(a)
    if gpu is not None and gpu.endswith("G") and gpu[:-1].replace(".", "").isdigit():
        gpu = None  # 'how much memory do I need': the least memory, not a count of that size
    return {**without(a.slots, "gpu_include", "gpu_count"), "gpu": gpu, "method_assumed": "method" not in a.slots}


def _fit_result(art: Artifact) -> dict[str, Any]:
    return {"feasibility": {k: art.get(k) for k in FEASIBILITY_KEYS if k in art}}


FEASIBILITY = QuestionType(
    name="feasibility", tool="check_feasibility", args=FeasibilityArgs, run=_run_feasibility,
    summary=lambda o: (f"{o['gpu_count']}x {o['gpu']}: {o['per_gpu_gib']} GiB per GPU of {o['gpu_memory_gib']:g}, "
                       f"fits={o['fits']}, fewest cards that fit: {o['gpus_needed']}"),
    route=_route_feasibility, render=lambda art, ph: render.render_feasibility(art, ph, art.get("plan_pick")),
    result=_fit_result,
    doc="Can this model x method run on a named GPU x count (rented or the user's own: 4090, 3090, L40S, 910B ...)? "
        "Returns fits yes/no, the per-GPU memory arithmetic, the fewest cards that fit, the changes that make it fit "
        "(QLoRA, LoRA, shorter context, offload, more cards) and where the GPU is rented. Call it when the user "
        "names a GPU and asks whether it is enough for training; use plan_training to choose instances.")

MIN_GPUS = QuestionType(
    name="min_gpus", tool="find_min_gpus", args=MinGpusArgs, run=_run_min_gpus,
    summary=lambda o: f"gpus_needed={o['gpus_needed']}, one-card need {o['single_gpu_gib']} GiB",
    route=_route_min_gpus, render=render.render_min_gpus, result=_fit_result,
    doc="The fewest cards of a GPU for a model x method ('需要几张A100'), or with no GPU named the least GPU "
        "memory ('最少要多大显存'), with the memory arithmetic.")
