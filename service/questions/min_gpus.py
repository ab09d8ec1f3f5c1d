"""Question type `min_gpus`: the fewest cards of a GPU for a training job ('需要几张A100'), or with no GPU named the
least GPU memory ('least VRAM for mixtral qlora'). Engine: service/planner/questions/fit.py:min_gpus."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.fit import min_gpus
from service.questions import texts
from service.questions.base import AnswerBase, Ask, Asked, Context, Missing, QuestionModule, workload_of
from service.questions.parts import MemoryTerms, ModelEcho, Part, Rental, StrategyEcho, total_weights_gib
from service.questions.summary_text import figure
from service.questions.view import is_memory_class, subject_gpu, unsized_model, workload_fields
from service.workload import Workload

REFERENCE_80G = "A100-80G-SXM"  # the card a count is given on when no GPU is named


class MinGpusArgs(Asked):
    gpu: str | None = Field(default=None, description="the GPU to count; none: the least GPU memory")
    method_assumed: bool = Field(default=False, description="no method was named: count the other methods too")


class GpuOption(Part):
    """A reference card's count when no GPU was named."""

    gpu: str
    gpu_name: str
    gpu_memory_gib: float
    gpus_needed: int | None = None
    per_gpu_gib: float | None = None


class OtherMethod(Part):
    method: str
    gpu: str
    gpu_name: str
    gpus_needed: int | None = None
    per_gpu_gib: float | None = None


class MinGpusAnswer(AnswerBase):
    kind: Literal["min_gpus"] = "min_gpus"
    gpu: str | None = None
    gpu_name: str | None = None
    gpu_memory_gib: float | None = None
    usable_gib: float | None = None
    gpus_needed: int | None = None
    gpu_count: int | None = None
    fits: bool | None = None
    per_gpu_gib: float
    memory: MemoryTerms
    single_gpu_gib: float
    min_memory_gib: float | None = None
    strategy: StrategyEcho
    training_hours: float | None = None
    model: ModelEcho
    rent: list[Rental] = Field(default_factory=list)
    options: list[GpuOption] = Field(default_factory=list)
    other_methods: list[OtherMethod] = Field(default_factory=list)
    form_factor: str = ""
    vendor: str = "nvidia"
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)
    workload: Workload

    def facts(self) -> dict[str, float]:
        out = {"per_gpu_gib": self.per_gpu_gib,
               "weights_gib": total_weights_gib(self.memory, self.strategy, self.gpus_needed) or 0.0}
        if self.gpus_needed:
            out["count"] = float(self.gpus_needed)
        else:  # no GPU named: the count on the 80 GB reference card
            ref = next((o for o in self.options if o.gpu == REFERENCE_80G and o.gpus_needed), None)
            if ref is not None:
                out["count"] = float(ref.gpus_needed or 0)
        if self.min_memory_gib:
            out["total_gib"] = self.min_memory_gib
        return out


def _run(ctx: Context, args: MinGpusArgs) -> MinGpusAnswer:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    return MinGpusAnswer.model_validate(with_assumptions(min_gpus(cat, w, args.gpu, args.method_assumed), said))


def _route(a: Ask) -> MinGpusArgs | Missing:
    f = a.frame
    if (name := unsized_model(f)) is not None:
        return Missing("model_size", name)
    fields = workload_fields(f)
    if not fields.get("model") and not fields.get("params_b"):
        return Missing("model")
    gpu = subject_gpu(f)
    if is_memory_class(gpu) and f.asked != "count":
        gpu = None  # 'how much memory do I need': the least memory, not a count of cards of that size
    fields.pop("gpu_include", None)
    return MinGpusArgs.model_validate({**fields, "gpu": gpu, "method_assumed": f.setup.method is None,
                                       "asked": f.asked})


def _summary(o: MinGpusAnswer) -> str:
    one = f"one card needs {figure(o.single_gpu_gib, 'GiB')}"
    if o.gpu is None:
        return f"no GPU named: {one}; least GPU memory {figure(o.min_memory_gib or o.single_gpu_gib, 'GiB')}"
    if o.gpus_needed is None:
        return f"no count of {o.gpu} fits; {one}"
    return (f"gpus_needed={o.gpus_needed} x {o.gpu} at {figure(o.per_gpu_gib, 'GiB')} per GPU of "
            f"{figure(o.gpu_memory_gib, 'GiB')}; {one}")


MODULE = QuestionModule(
    name="min_gpus", tool="find_min_gpus", title="Fewest GPUs", args=MinGpusArgs, answer=MinGpusAnswer, run=_run,
    route=_route, render=lambda answer, ph: texts.render_min_gpus(answer.public(), ph), summary=_summary,
    frames=(("train", "count"), ("train", "memory")),
    description="The fewest cards of a GPU for a model x method ('需要几张A100', 'how many A100s'), or with no GPU "
                "named the least GPU memory ('最少要多大显存'), with the memory arithmetic.")
