"""One LangChain tool per question type beyond `plan_training` (service/assistant/tools.py) and `search_knowledge`:
feasibility, min_gpus, compare, savings. Each returns (short text, artifact); the artifact carries every figure."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool, tool
from pydantic import Field, ValidationError

from service.errors import AdvisorError
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.compare import compare, plan_row, run_plan, savings
from service.planner.questions.fit import feasibility, min_gpus
from service.workload import Workload

Artifact = dict[str, Any]
INTENT_TOOLS = {"check_feasibility": "feasibility", "find_min_gpus": "min_gpus", "compare_options": "compare",
                "estimate_savings": "savings", "plan_training": "plan", "compare_clouds": "compare"}
# Arguments of the intent tools that are not workload fields.
EXTRA_ARGS = frozenset({"gpu", "options", "compare_kind", "by", "before", "lang", "question"})
Question = Literal["feasibility", "min_gpus", "compare", "savings"]


class _Asked(Workload):
    question: Question | None = Field(default=None, description="the question type (kept for follow-ups)")


class FeasibilityArgs(_Asked):
    gpu: str = Field(description="the GPU asked about, any in the catalog: 4090, 3090, L40S, A100 80G, H20 ...")


class MinGpusArgs(_Asked):
    gpu: str | None = Field(default=None, description="the GPU to count; none: the least GPU memory")


class CompareArgs(_Asked):
    compare_kind: Literal["gpu", "cloud", "method", "billing"] = "gpu"
    options: list[str] = Field(min_length=1, max_length=6,
                               description="GPU names, clouds (tencent, jdcloud), methods or billing modes")
    by: Literal["cost", "hours"] = "cost"


class SavingsArgs(_Asked):
    before: dict[str, Any] = Field(default_factory=dict,
                                   description="the workload fields of the plan compared against, e.g. {method: full}")
    by: Literal["cost", "hours"] = Field(default="cost", description="hours: the question asks about time")


def _workload(args: Workload) -> Workload:
    return Workload.model_validate({k: v for k, v in args.model_dump(exclude_unset=True).items()
                                    if k not in EXTRA_ARGS})


def _error(exc: Exception) -> tuple[str, Artifact]:
    from service.assistant.tools import _error as tool_error

    return tool_error(exc)


def make_intent_tools(ctx: Any) -> list[BaseTool]:
    """`ctx` is service.assistant.tools.ToolContext (catalog, price age)."""

    @tool(args_schema=FeasibilityArgs, response_format="content_and_artifact")
    def check_feasibility(**kwargs: Any) -> tuple[str, Artifact]:
        """Can this model x method run on a named GPU x count (rented or the user's own: 4090, 3090, L40S ...)?
        Returns fits yes/no, the per-GPU memory arithmetic, the fewest cards that fit, the changes that make it
        fit (QLoRA, LoRA, shorter context, offload, more cards) and where the GPU can be rented. Call it when the
        user names a GPU and asks whether it is enough; use plan_training to choose instances."""
        try:
            args = FeasibilityArgs.model_validate(kwargs)
            w = _workload(args).model_copy(update={"gpu_count": None})
            cat, said = catalog_for(ctx.catalog, w)
            out = with_assumptions(feasibility(cat, w, args.gpu, args.gpu_count or 1), said)
            out["plan_pick"] = plan_row("plan", run_plan(cat, w, ctx.max_price_age_days))
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return (f"{out['gpu_count']}x {out['gpu']}: {out['per_gpu_gib']} GiB per GPU of {out['gpu_memory_gib']:g}, "
                f"fits={out['fits']}, fewest cards that fit: {out['gpus_needed']}"), out

    @tool(args_schema=MinGpusArgs, response_format="content_and_artifact")
    def find_min_gpus(**kwargs: Any) -> tuple[str, Artifact]:
        """The fewest cards of a GPU for a model x method ('需要几张A100'), or with no GPU named the least GPU
        memory ('最少要多大显存'), with the memory arithmetic."""
        try:
            args = MinGpusArgs.model_validate(kwargs)
            w = _workload(args).model_copy(update={"gpu_count": None})
            cat, said = catalog_for(ctx.catalog, w)
            out = with_assumptions(min_gpus(cat, w, args.gpu), said)
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return f"gpus_needed={out['gpus_needed']}, one-card need {out['single_gpu_gib']} GiB", out

    @tool(args_schema=CompareArgs, response_format="content_and_artifact")
    def compare_options(**kwargs: Any) -> tuple[str, Artifact]:
        """Compare two or more GPUs, clouds, methods or billing modes on the same workload: time, cost and fit
        side by side and the winner. A GPU no cloud here prices still compares on time and fit."""
        try:
            args = CompareArgs.model_validate(kwargs)
            w = _workload(args)
            cat, _ = catalog_for(ctx.catalog, w)
            out = compare(cat, w, args.compare_kind, args.options, args.by, ctx.max_price_age_days)
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return f"winner={out['winner']} by {out['by']}; " + "; ".join(
            f"{r['option']}: {r['hours']} h, ¥{r['cost_cny']}" for r in out["comparison"]), out

    @tool(args_schema=SavingsArgs, response_format="content_and_artifact")
    def estimate_savings(**kwargs: Any) -> tuple[str, Artifact]:
        """How much a change saves or costs (method, billing, GPU, cloud, epochs): the plan before (the
        workload with `before` applied) and after, and the difference in yuan and hours."""
        try:
            args = SavingsArgs.model_validate(kwargs)
            after = _workload(args)
            changes = dict(args.before)
            if changes.get("method", "qlora") != "qlora":
                changes.setdefault("quant_bits", None)
            before = Workload.model_validate({**after.model_dump(), **changes})
            cat, _ = catalog_for(ctx.catalog, after)
            out = {**savings(cat, before, after, ctx.max_price_age_days), "by": args.by}
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return f"delta ¥{out['delta_cny']}, {out['delta_hours']} h", out

    return [check_feasibility, find_min_gpus, compare_options, estimate_savings]
