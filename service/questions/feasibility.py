"""Question type `feasibility`: yes/no for a model x method on a named GPU x count ('4090能跑14b lora吗', 'can 2x3090
handle a 14B QLoRA'). Engine: service/planner/questions/fit.py:feasibility."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.compare import plan_row, run_plan
from service.planner.questions.fit import feasibility, gpu_for
from service.planner.settings import check_precision
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
from service.questions.parts import (
    MemoryTerms,
    MemoryVerdict,
    ModelEcho,
    Part,
    PlanRow,
    Rental,
    StrategyEcho,
    total_weights_gib,
)
from service.questions.summary_text import figure
from service.questions.texts import assumption_lines, memory_terms_line, method_label, n1, rent_lines
from service.questions.view import job_fields, subject_count, subject_gpu
from service.workload import Workload


class FeasibilityArgs(Asked):
    gpu: str = Field(description="the GPU asked about, any in the catalog: 4090, 3090, L40S, A100 80G, 910B ...")
    fp8_as_bf16: bool = Field(default=False, description="the chat's: FP8 training asked on a card without FP8 is "
                              "answered in BF16, said first (a structured call keeps the error naming the precision)")


class FitChange(Part):
    """A change that makes it fit, sized (service/planner/questions/fit.py _row)."""

    change: str
    gpu_count: int
    per_gpu_gib: float
    fits: bool
    training_hours: float
    method: str
    zero_stage: int
    seq_len: int


class FeasibilityAnswer(AnswerBase):
    kind: Literal["feasibility"] = "feasibility"
    gpu: str
    gpu_name: str
    gpu_count: int
    fits: bool
    verdict: Literal["fits", "tight", "does_not_fit"]
    memory_verdict: MemoryVerdict | None = None
    per_gpu_gib: float
    gpu_memory_gib: float
    usable_gib: float
    memory: MemoryTerms
    gpus_needed: int | None = None
    needed_per_gpu_gib: float | None = None
    training_hours: float
    strategy: StrategyEcho
    model: ModelEcho
    fits_with: list[FitChange] = Field(default_factory=list)
    rent: list[Rental] = Field(default_factory=list)
    form_factor: str = ""
    vendor: str = "nvidia"
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)
    workload: Workload
    plan_pick: PlanRow | None = None
    fp8_unsupported: bool = Field(default=False, description="FP8 training was asked on a card without FP8 tensor "
                                  "cores: sized in BF16 mixed precision instead, and said")

    def facts(self) -> dict[str, float]:
        out = {"per_gpu_gib": self.per_gpu_gib, "hours": self.training_hours, "count": float(self.gpu_count),
               "weights_gib": total_weights_gib(self.memory, self.strategy, self.gpu_count) or 0.0,
               "total_gib": self.per_gpu_gib * self.gpu_count}
        return {**out, **({"gpus_needed": float(self.gpus_needed)} if self.gpus_needed else {})}


def _run(ctx: Context, args: FeasibilityArgs) -> FeasibilityAnswer:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    no_fp8 = args.fp8_as_bf16 and check_precision(w, gpu_for(cat, args.gpu)[0]) is not None
    if no_fp8:  # 'A100 上用 fp8 训 … 放得下吗': it cannot; the fit is the one it can run, and the first lines say so
        w = w.model_copy(update={"precision": None})
    out = with_assumptions(feasibility(cat, w, args.gpu, args.gpu_count or 1), said)
    out["plan_pick"] = plan_row("plan", run_plan(cat, w, ctx.max_price_age_days))
    out["fp8_unsupported"] = no_fp8
    return FeasibilityAnswer.model_validate(out)


def _route(a: Ask) -> FeasibilityArgs | Missing:
    f = a.frame
    fields = job_fields(f)
    if isinstance(fields, Missing):
        return fields
    gpu = subject_gpu(f)
    if gpu is None:
        return Missing("gpu")
    fields.pop("gpu_include", None)
    return FeasibilityArgs.model_validate({**fields, "gpu": gpu, "gpu_count": subject_count(f) or 1,
                                           "asked": f.asked})


def render_feasibility(answer: FeasibilityAnswer, ph: Phrases, pick: PlanRow | None = None) -> str:
    """The verdict first ('不能。' / 'Yes.'), the memory arithmetic, the time or what makes it fit, where it is rented."""
    a = answer
    key = "feas_tight" if a.verdict == "tight" else "feas_yes" if a.fits else "feas_no"
    lines = [ph.text(key, count=a.gpu_count, gpu=a.gpu_name, memory=f"{a.gpu_memory_gib:g}", model=a.model.name,
                     method=method_label(a.strategy, ph), need=a.per_gpu_gib, usable=a.usable_gib),
             memory_terms_line(a.memory, a.strategy, a.model.kind, ph)]
    if a.fp8_unsupported:  # what it cannot do first, then the fit it can
        lines.insert(0, ph.text("feas_no_fp8", gpu=a.gpu_name))
    if a.fits:
        lines.append(ph.text("feas_time", count=a.gpu_count, gpu=a.gpu_name, hours=n1(a.training_hours)))
    else:
        if a.gpus_needed is not None:
            lines.append(ph.text("feas_needed", n=a.gpus_needed, need=a.needed_per_gpu_gib))
        else:
            lines.append(ph.text("feas_needed_none"))
        lines += ["", ph.text("feas_fix_title")]
        changes = ph.group("feas_changes")
        for fix in a.fits_with:
            change = changes.text(fix.change, seq=fix.seq_len, count=fix.gpu_count)
            lines.append(ph.text("feas_fix_line", change=change, need=fix.per_gpu_gib, count=fix.gpu_count,
                                 hours=n1(fix.training_hours)))
        if not a.fits_with:
            lines.append(ph.text("feas_fix_none"))
    lines += ["", *rent_lines(a.rent, a.gpu_name, a.vendor, a.form_factor, ph, pick)]
    return "\n".join(lines + assumption_lines(a.assumptions, a.assumptions_zh, ph))


def _render(answer: FeasibilityAnswer, ph: Phrases) -> str:
    return render_feasibility(answer, ph, answer.plan_pick)


def _summary(o: FeasibilityAnswer) -> str:
    fewest = (f"fewest cards that fit: {o.gpus_needed}" if o.gpus_needed is not None else
              "no count of this GPU fits")
    return (f"{o.gpu_count}x {o.gpu}: {figure(o.per_gpu_gib, 'GiB')} per GPU of {figure(o.gpu_memory_gib, 'GiB')}, "
            f"fits={o.fits}, {fewest}")


MODULE = QuestionModule(
    name="feasibility", tool="check_feasibility", title="Does it fit on this GPU?", args=FeasibilityArgs,
    answer=FeasibilityAnswer, run=_run, route=_route, render=_render, summary=_summary,
    frames=(("train", "fits"),),
    description="Can this model x method run on a named GPU x count (rented or the user's own: 4090, 3090, L40S, "
                "910B ...)? Returns fits yes/no, the per-GPU memory arithmetic, the fewest cards that fit, the changes "
                "that make it fit (QLoRA, LoRA, shorter context, offload, more cards), where the GPU is rented and "
                "the plan's pick. Call it when the user names a GPU and asks whether it is enough for training; use "
                "plan to choose instances.")
