"""Question type `plan`: which configuration to rent for a training job, per cloud, with its time, cost, verdicts,
alternatives and warnings ('用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000'); on request the resource-request
document (《AI训练资源申请说明》) and the launch bundle. Engine: service/planner/plan.py (the plan contract)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.labels import price_when
from service.planner.contract import training_json
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.training_types import TrainingPlan
from service.questions import plan_text
from service.questions.base import AnswerBase, Ask, Context, Missing, Phrases, QuestionModule
from service.questions.parts import Part, PassageRef
from service.questions.view import is_memory_class, job_fields
from service.workload import Workload

PLAN_CANDIDATES = 10
Document = Literal["request_document", "launch_bundle"]


class PlanArgs(Workload):
    asked: str | None = Field(default=None, description="what the question asks (the frame's `asked`: plan, time, "
                              "cost, host ...): the answer's first line answers it")
    documents: list[Document] = Field(default_factory=list, description="request_document (《AI训练资源申请说明》) "
                                      "and/or launch_bundle (LLaMA-Factory YAML, DeepSpeed JSON, scripts), when asked")
    lang: Literal["zh", "en"] = Field(default="zh", description="the documents' language")


class Refusal(Part):
    """Why a document asked for was not written (the plan is answered all the same)."""

    field: str = Field(default="", description="the field refused, e.g. model; empty when the plan itself cannot "
                       "be written as that document")
    message: str
    message_zh: str
    fix: str = ""


class Documents(Part):
    request_document: str | None = Field(default=None, description="the request document, Markdown")
    launch_bundle: dict[str, str] | None = Field(default=None, description="file name -> content")
    refused: Refusal | None = Field(default=None, description="why the documents asked for were not written")


class HostAnswer(Part):
    """What the job needs beside the GPUs, for the pick (service/sizing/host.py host_needs)."""

    vcpus: int
    ram_gib: float
    disk_gb: float
    checkpoint_gb: float
    checkpoints_kept: int


class PlanAnswer(AnswerBase):
    kind: Literal["plan"] = "plan"
    plan: TrainingPlan
    host: HostAnswer | None = Field(default=None, description="asked = host: CPU cores, RAM and disk for the pick")
    documents: Documents | None = None
    citations: list[PassageRef] = Field(default_factory=list, description="the guide sections the plan rests on")

    def facts(self) -> dict[str, float]:
        p = self.plan
        if not p.candidates:
            return {}
        c = p.candidates[0]
        out = {"hours": c.training_hours, "count": float(c.total_gpus), "per_gpu_gib": c.memory_per_gpu_gib}
        if c.total_cost_cny is not None:
            out["cny"] = c.total_cost_cny
        if c.monthly_cost_cny is not None:
            out["cny_per_month"] = c.monthly_cost_cny
        return out


def plan_dict(ctx: Context, w: Workload) -> dict[str, object]:
    """The training plan as its contract's JSON (a model outside models.yaml sized from its name, and said so)."""
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict

    cat, said = catalog_for(ctx.catalog, w)
    return training_json(with_assumptions(plan_to_dict(plan(w, cat, max_price_age_days=ctx.max_price_age_days),
                                                       max_candidates=PLAN_CANDIDATES), said))


def _run(ctx: Context, args: PlanArgs) -> PlanAnswer:
    w = Workload.model_validate(args.model_dump(exclude={"documents", "lang", "asked"}, exclude_unset=True))
    p = plan_dict(ctx, w)
    docs = _documents(ctx, p, args) if args.documents else None
    plan = TrainingPlan.model_validate(p)
    out = PlanAnswer(plan=plan, documents=docs)
    if args.asked == "host" and plan.candidates:
        out.host = _host(plan)
    return out


def _documents(ctx: Context, p: dict[str, object], args: PlanArgs) -> Documents:
    """The documents asked for; one that cannot be written (a model name that is not a plausible model id, a plan
    LLaMA-Factory cannot run) is refused with the reason, and the plan is still the answer."""
    from service.documents.errors import DocumentInputError

    docs = Documents()
    lang: Literal["zh", "en"] = "en" if args.lang == "en" else "zh"
    try:
        if "request_document" in args.documents:
            from service.documents import render_request_markdown

            docs.request_document = render_request_markdown(p, lang)
        if "launch_bundle" in args.documents:
            from service.documents import build_launch_bundle

            docs.launch_bundle = dict(build_launch_bundle(p, ctx.catalog, lang).files)
    except DocumentInputError as exc:
        return Documents(refused=Refusal(
            field=str(getattr(exc, "field", "")), message=exc.message, fix=exc.fix,
            message_zh=getattr(exc, "message_zh", "") or "该方案无法写成申请文档或 LLaMA-Factory 启动包。"))
    return docs


def _host(plan: TrainingPlan) -> HostAnswer:
    from service.sizing.host import host_needs

    c = plan.candidates[0]
    trainable = plan.model.params_b if c.strategy.method in ("full", "pretrain") else plan.model.params_b * 0.01
    n = host_needs(plan.model.params_b, trainable, c.total_gpus, c.gpu_memory_gib, plan.workload.dataset_gb)
    return HostAnswer(vcpus=n.vcpus, ram_gib=n.ram_gib, disk_gb=n.disk_gb, checkpoint_gb=n.checkpoint_gb,
                      checkpoints_kept=n.checkpoints_kept)


def _route(a: Ask) -> PlanArgs | Missing:
    f = a.frame
    fields = job_fields(f)
    if isinstance(fields, Missing):
        return fields
    if f.setup.hardware.gpu_count:
        fields["gpu_count"] = f.setup.hardware.gpu_count  # '8卡A800，要多久': the count they name
    if f.setup.hardware.gpu and not fields.get("gpu_include") and not is_memory_class(f.setup.hardware.gpu):
        fields["gpu_include"] = [f.setup.hardware.gpu]  # '2机16卡A800 大概几天': planned on the card they name
    docs = list(f.documents)
    return PlanArgs.model_validate({**fields, **({"documents": docs, "lang": a.lang} if docs else {}),
                                    "asked": f.asked})


def _render(answer: PlanAnswer, ph: Phrases) -> str:
    text = plan_text.render_plan(answer.plan, ph.lang, ph, answer.citations)
    docs = answer.documents
    if docs is not None and docs.refused is not None:
        text += "\n\n" + ph.text("doc_refused", reason=docs.refused.message_zh if ph.zh else docs.refused.message)
    if docs is not None and docs.request_document:
        text += "\n\n" + ph.text("doc_ready", document=docs.request_document)
    if docs is not None and docs.launch_bundle:
        files = docs.launch_bundle
        first = next(iter(files), "")
        preview = f"```yaml\n{files.get('train.yaml', files.get(first, ''))}\n```"
        text += "\n\n" + ph.text("bundle_ready", files=", ".join(files), preview=preview)
    return text


def summary(o: PlanAnswer) -> str:
    """Each cloud's pick in a line: instance, cards, strategy, memory, hours, cost with the price's date."""
    p = o.plan
    if p.infeasible:
        return f"Infeasible: {p.infeasible}"
    by_type = {c.instance_type: c for c in p.candidates}
    lines = []
    for cloud, itype in p.picks.items():
        c = by_type[itype]
        cost = "price on request"
        if c.total_cost_cny is not None:
            line = next(iter(c.cost_cny.values()), None)
            dated = (f" (price {price_when(line.price, 'en')}, {line.price.confidence})"
                     if line is not None else "")
            cost = f"¥{c.total_cost_cny:,.0f} {c.billing}{dated}"
        budget = "" if c.within_budget is None else f", within_budget={c.within_budget}"
        lines.append(f"{cloud}: {itype} ({c.gpu_count:g}x {c.gpu}, {c.strategy.label}), {c.memory_per_gpu_gib}/"
                     f"{c.gpu_memory_gib} GiB per GPU, {c.training_hours} h, {cost}{budget}")
    return "\n".join(lines) or "No candidate."


MODULE = QuestionModule(
    name="plan", tool="plan", title="Plan a training job", args=PlanArgs, answer=PlanAnswer, run=_run,
    route=_route, render=_render, summary=summary, follows=False,
    frames=(("train", "plan"), ("train", "time"), ("train", "cost"), ("both", "plan")),
    description="Plan a training job on Tencent Cloud and JD Cloud: the instance per cloud (picks), GPU count, "
                "strategy (full/LoRA/QLoRA, ZeRO, checkpointing), memory per GPU, hours, cost by billing mode with "
                "each price's source and date, budget and deadline verdicts, alternatives, rejected options and "
                "warnings; with `documents`, the resource-request document and the launch bundle. Call it for any "
                "question that describes a training workload and whenever an instance, memory figure, hour or yuan "
                "is needed; quote its figures, never your own. Not for 'can GPU X run it' (check_feasibility) or "
                "'what is' questions (ask_knowledge).")
