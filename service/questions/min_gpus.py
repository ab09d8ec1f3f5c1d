"""Question type `min_gpus`: the fewest cards of a GPU for a training job ('需要几张A100'), or with no GPU named the
least GPU memory ('least VRAM for mixtral qlora'). Engine: service/planner/questions/fit.py:min_gpus."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.fit import min_gpus
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
from service.questions.parts import MemoryTerms, ModelEcho, Part, Rental, StrategyEcho, total_weights_gib
from service.questions.summary_text import figure
from service.questions.texts import assumption_lines, memory_terms_line, method_label, rent_lines
from service.questions.view import is_memory_class, job_fields, subject_gpu
from service.workload import Workload

REFERENCE_80G = "A100-80G-SXM"  # the card a count is given on when no GPU is named
ALL_CARDS_GIB = 141  # more than the largest card holds: the least memory is said as cards of the reference GPU


class MinGpusArgs(Asked):
    gpu: str | None = Field(default=None, description="the GPU to count; none: the least GPU memory")
    method_assumed: bool = Field(default=False, description="no method was named: count the other methods too")


class GpuOption(Part):
    """A reference card's count: each when no GPU was named; the first larger one that holds the job when no count
    of the named GPU does."""

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
    deadline_hours: float | None = Field(default=None, description="the deadline the count must meet, when the "
                                         "memory's count alone would not")
    deadline_met: bool | None = None
    memory_gpus: int | None = Field(default=None, description="the count the memory alone needs")
    memory_hours: float | None = None
    most_gpus: int | None = Field(default=None, description="the most cards sized, when none meets the deadline")
    most_hours: float | None = None
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
        elif self.gpu is None:  # no GPU named: the count on the 80 GB reference card
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
    fields = job_fields(f)
    if isinstance(fields, Missing):
        return fields
    gpu = subject_gpu(f)
    if is_memory_class(gpu) and f.asked != "count":
        gpu = None  # 'how much memory do I need': the least memory, not a count of cards of that size
    fields.pop("gpu_include", None)
    return MinGpusArgs.model_validate({**fields, "gpu": gpu, "method_assumed": f.setup.method is None,
                                       "asked": f.asked})


def _other_methods(answer: MinGpusAnswer, ph: Phrases) -> list[str]:
    """'没说训练方法，上面按 LoRA 算；全参微调要 …': the count for each other method, when none was named."""
    rows = answer.other_methods
    if not rows:
        return []
    items = [ph.text("min_other_item", method=ph.name("method_names", r.method),
                     n=ph.text("min_ref_count", n=r.gpus_needed, need=r.per_gpu_gib)
                     if r.gpus_needed is not None else ph.text("min_ref_none")) for r in rows]
    return ["", ph.text("min_other_methods", method=method_label(answer.strategy, ph), gpu=rows[0].gpu_name,
                        items=ph.text("list_sep").join(items))]


def _deadline_line(a: MinGpusAnswer, ph: Phrases) -> str:
    """'要在 168 小时内训完，至少需要 24 张': the count that meets the deadline first, then what memory alone needs."""
    fields = {"deadline": f"{a.deadline_hours:g}", "gpu": a.gpu_name, "mem": a.memory_gpus,
              "mem_hours": f"{a.memory_hours or 0:,.1f}"}
    if a.deadline_met:
        return ph.text("min_deadline", n=a.gpus_needed, nodes=nodes_text(a.gpus_needed, ph), hours=f"{a.training_hours or 0:,.1f}", **fields)
    return ph.text("min_deadline_none", most=a.most_gpus, most_hours=f"{a.most_hours or 0:,.1f}", **fields)


def render_min_gpus(answer: MinGpusAnswer, ph: Phrases) -> str:
    a = answer
    model, method = a.model.name, method_label(a.strategy, ph)
    kind = a.model.kind
    if a.gpu is None:
        ref = next((o for o in a.options if o.gpu == REFERENCE_80G and o.gpus_needed), None)
        least = a.min_memory_gib or 0.0
        first = (ph.text("min_memory_multi", n=ref.gpus_needed, gpu=ref.gpu_name, per=ref.per_gpu_gib, model=model,
                         method=method, need=a.single_gpu_gib)
                 if ref is not None and (ref.gpus_needed or 0) > 1 and least > ALL_CARDS_GIB else
                 ph.text("min_memory", min_memory=a.min_memory_gib, model=model, method=method,
                         need=a.single_gpu_gib))
        lines = [first, memory_terms_line(a.memory, a.strategy, kind, ph), "", ph.text("min_ref_title")]
        for o in a.options:
            n = (ph.text("min_ref_count", n=o.gpus_needed, need=o.per_gpu_gib) if o.gpus_needed is not None
                 else ph.text("min_ref_none"))
            lines.append(ph.text("min_ref_line", gpu=o.gpu_name, memory=f"{o.gpu_memory_gib:g}", n=n))
        return "\n".join(lines + _other_methods(a, ph) + assumption_lines(a.assumptions, a.assumptions_zh, ph))
    if a.gpus_needed is None:
        lines = _none_lines(a, model, method, ph)
    else:
        key = "min_one" if a.gpus_needed == 1 else "min_yes"
        lines = [] if a.deadline_hours is None else [_deadline_line(a, ph)]
        key = key if a.deadline_hours is None else "min_per_gpu"  # the count is said: the memory on those cards
        lines += [ph.text(key, n=a.gpus_needed, gpu=a.gpu_name, model=model, method=method, nodes=nodes_text(a.gpus_needed, ph),
                         zero=a.strategy.zero_stage, need=a.per_gpu_gib, usable=a.usable_gib, one=a.single_gpu_gib),
                 memory_terms_line(a.memory, a.strategy, kind, ph)]
    lines += ["", *rent_lines(a.rent, a.gpu_name, a.vendor, a.form_factor, ph, None)]
    return "\n".join(lines + _other_methods(a, ph) + assumption_lines(a.assumptions, a.assumptions_zh, ph))


def nodes_text(n: int | None, ph: Phrases) -> str:
    """'（2 台 8 卡机器）' for a count beyond one server (counts above 8 are whole 8-card servers); '' within one."""
    return ph.text("min_nodes", k=n // 8) if n is not None and n > 8 else ""


def _none_lines(a: MinGpusAnswer, model: str, method: str, ph: Phrases) -> list[str]:
    """No count of the card holds it: what stays on every card however many there are (activations do not shard),
    the larger card that holds it and its count, and what shrinks the floor on this card."""
    m = a.memory
    lines = [ph.text("min_none", gpu=a.gpu_name, model=model, method=method, one=a.single_gpu_gib,
                     per=m.per_gpu_gib, act=m.activations_gib, usable=a.usable_gib),
             memory_terms_line(m, a.strategy, a.model.kind, ph)]
    alt = a.options[0] if a.options else None
    lines.append(ph.text("min_none_fix", gpu=a.gpu_name) if alt is None else
                 ph.text("min_none_alt", gpu=a.gpu_name, alt=alt.gpu_name, n=alt.gpus_needed, need=alt.per_gpu_gib,
                         nodes=nodes_text(alt.gpus_needed, ph)))
    return lines


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
    route=_route, render=render_min_gpus, summary=_summary,
    frames=(("train", "count"), ("train", "memory")),
    description="The fewest cards of a GPU for a model x method ('需要几张A100', 'how many A100s'), or with no GPU "
                "named the least GPU memory ('最少要多大显存'), with the memory arithmetic.")
