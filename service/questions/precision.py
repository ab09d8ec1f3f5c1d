"""FP8 training asked on cards without FP8 tensor cores ('A100 用 fp8 训 qwen2 72b 最少几张', 'A10 和 L20 用 fp8
训哪个划算'): the engine refuses the precision on those cards, so the question is answered in BF16 mixed precision
with a note that says why, instead of an error. The feasibility question says it on its own first line
(service/questions/feasibility.py); the others carry the note after theirs."""

from __future__ import annotations

from pydantic import BaseModel

from service.errors import AdvisorError
from service.planner.questions.fit import gpu_for
from service.planner.settings import check_precision
from service.questions.base import Context, Phrases
from service.workload import Workload


def _cards(args: BaseModel) -> list[str]:
    """The cards the arguments pin: one GPU, the GPUs to include, a comparison's GPU options."""
    names = [str(n) for n in (getattr(args, "gpu", None), *(getattr(args, "gpu_include", None) or [])) if n]
    if getattr(args, "compare_kind", None) == "gpu":
        names += [str(o) for o in getattr(args, "options", None) or []]
    return names


def without_fp8(ctx: Context, args: BaseModel, ph: Phrases) -> tuple[BaseModel, str | None]:
    """`args` sized in BF16, and the note, when FP8 training is asked on named cards some of which lack FP8. A
    feasibility question is marked instead: it says so on its own first line."""
    if not isinstance(args, Workload) or args.precision != "fp8":
        return args, None
    if "fp8_as_bf16" in type(args).model_fields:
        return args.model_copy(update={"fp8_as_bf16": True}), None
    try:
        lacking = [g.name for g in (gpu_for(ctx.catalog, n)[0] for n in _cards(args)) if check_precision(args, g)]
    except AdvisorError:
        return args, None  # a card the catalog does not know: the engine says so
    if not lacking:
        return args, None
    names = ("、" if ph.zh else ", ").join(dict.fromkeys(lacking))
    return args.model_copy(update={"precision": None}), ph.text("no_fp8_note", gpus=names)
