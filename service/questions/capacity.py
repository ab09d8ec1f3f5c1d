"""Question type `capacity`: given GPUs x count (and a method), the largest model, the longest context or the
largest micro-batch that fits ('8*H800能训多大的模型', '单卡4090 lora 最长能跑多长上下文'), for training or, with
serving words, what an inference engine starts ('4090能部署多大的模型'). Engine: service/planner/questions/
capacity.py and serve_capacity.py."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from service.errors import InvalidInputError
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.capacity import capacity
from service.planner.questions.serve_capacity import serve_capacity
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
from service.questions.parts import MemoryTerms, ModelEcho, Part, StrategyEcho
from service.questions.summary_text import figure
from service.questions.texts import memory_terms_line, method_label
from service.questions.view import subject_count, subject_gpu, workload_fields
from service.workload import Workload


# deploying, not training: '能部署多大的模型', 'which model can run on a 4090', 'context size I can config' (Ollama)
class CapacityArgs(Asked):
    """The GPUs (and, for context or batch, the model) whose limit is asked; a model-size question names no model
    (the search sizes each catalog model)."""

    @model_validator(mode="before")
    @classmethod
    def _placeholder_size(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("model") and data.get("params_b") is None:
            return {**data, "params_b": 1.0}  # replaced by each catalog model the search tries (or refused)
        return data

    params_b: float | None = Field(default=1.0, gt=0, le=5000, description="unused for model_size")
    gpu: str = Field(description="the GPU: 4090, H800, A100 80G, 910B, or a memory size such as 48G")
    target: Literal["model_size", "context", "batch"] = "model_size"
    method_stated: bool = Field(default=True, description="false: show full, LoRA and QLoRA side by side")
    use: Literal["train", "serve"] = Field(default="train", description="serve: what an inference engine starts")
    weights: Literal["bf16", "fp8", "int4"] | None = Field(default=None, description="serve: one weight dtype only")


class SizedModel(Part):
    model: str
    params_b: float
    per_gpu_gib: float


class TrainRow(Part):
    """The largest catalog model that trains with one method."""

    method: str
    max_params_b: float | None = None
    largest_fitting: SizedModel | None = None
    smallest_not_fitting: SizedModel | None = None
    largest_catalog_models: list[SizedModel] = Field(default_factory=list)
    per_gpu_gib: float | None = None
    memory: MemoryTerms | None = None
    strategy: StrategyEcho | None = None
    fits: bool | None = None
    model: ModelEcho | None = None


class Started(Part):
    model: str
    params_b: float
    weights_gib_per_gpu: float | None = None
    max_model_len: int | None = None
    context_lowered_from: int | None = None
    max_concurrency_at_load: float | None = None


class ServeRow(Part):
    """The largest catalog model an engine starts in one weight dtype."""

    weights: str
    largest: Started | None = None
    max_params_b: float | None = None
    smallest_not_starting: Started | None = None


class NamedModel(Part):
    id: str
    name: str


class CapacityAnswer(AnswerBase):
    kind: Literal["capacity"] = "capacity"
    use: Literal["train", "serve"] = "train"
    target: Literal["model_size", "context", "batch"]
    gpu: str
    gpu_name: str
    gpu_count: int
    gpu_memory_gib: float
    usable_gib: float | None = None
    engine: str | None = None
    workload: Workload | None = None
    rows: list[TrainRow | ServeRow] = Field(default_factory=list)
    max_params_b: float | None = None
    seq_len: int | None = None
    max_seq_len: int | None = None
    max_micro_batch: int | None = None
    per_gpu_gib: float | None = None
    memory: MemoryTerms | None = None
    strategy: StrategyEcho | None = None
    fits: bool | None = None
    model: ModelEcho | NamedModel | None = None
    weights: str | None = None
    starts: bool | None = None
    kv_capacity_tokens: int | None = None
    weights_gib_per_gpu: float | None = None
    kv_cache_gib_per_gpu: float | None = None
    assumptions: list[str] = Field(default_factory=list)
    assumptions_zh: list[str] = Field(default_factory=list)

    def facts(self) -> dict[str, float]:
        out = {k: float(v) for k, v in (("max_params_b", self.max_params_b), ("max_seq_len", self.max_seq_len),
                                         ("max_micro_batch", self.max_micro_batch), ("per_gpu_gib", self.per_gpu_gib))
               if v is not None}
        if self.use == "serve" and self.weights_gib_per_gpu is not None:
            out["weights_gib"] = self.weights_gib_per_gpu * self.gpu_count  # the model's weights on all the cards
        return out


def _run(ctx: Context, args: CapacityArgs) -> CapacityAnswer:
    if args.target != "model_size" and not args.model and args.params_b == 1.0:
        raise InvalidInputError(f"model: target {args.target} needs the model.",
                                "Give model (e.g. Qwen2-7B) or params_b (e.g. 7).")
    # a tool caller that names no method sees full, LoRA and QLoRA side by side; the chat's route says which
    stated = args.method_stated if "method_stated" in args.model_fields_set else "method" in args.model_fields_set
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    if args.use == "serve":
        context = args.target == "context"
        out = serve_capacity(cat, args.gpu, args.gpu_count or 1, "context" if context else "model_size",
                             w.model if context else None, args.weights, None if context else w.seq_len)
        return CapacityAnswer.model_validate(with_assumptions(out, said))
    return CapacityAnswer.model_validate(with_assumptions(
        capacity(cat, w, args.gpu, args.gpu_count or 1, args.target, stated), said))


def _route(a: Ask) -> CapacityArgs | Missing:
    f = a.frame
    gpu = subject_gpu(f)
    if gpu is None:
        return Missing("gpu")
    target = f.target or "model_size"
    fields = workload_fields(f)
    fields.pop("gpu_include", None)
    if target != "model_size" and not (fields.get("model") or fields.get("params_b")):
        return Missing("model")
    serve = f.task == "serve" and target != "batch"
    if target == "model_size":
        fields = {**{k: v for k, v in fields.items() if k != "model"}, "params_b": 1.0}
    out: dict[str, object] = {**fields, "gpu": gpu, "gpu_count": subject_count(f) or 1, "target": target,
                              "method_stated": f.setup.method is not None, "use": "serve" if serve else "train",
                              "asked": f.asked}
    weights = f.setup.knobs.weights
    if serve and weights in ("bf16", "fp8", "int4"):
        out["weights"] = weights
    return CapacityArgs.model_validate(out)


def _render_serve(answer: CapacityAnswer, where: str, ph: Phrases) -> str:
    a = answer
    model = a.model.name if a.model is not None else ""
    if a.target == "context":
        if not a.starts or not a.max_seq_len:
            return ph.text("cap_serve_none", where=where, model=model)
        return ph.text("cap_serve_context", where=where, model=model, seq=f"{a.max_seq_len:,}",
                       weights=ph.name("weights_names", a.weights), w_gib=a.weights_gib_per_gpu,
                       kv_gib=a.kv_cache_gib_per_gpu)
    rows = [r for r in a.rows if isinstance(r, ServeRow)]
    parts = []
    for row in rows:
        dtype = ph.name("weights_names", row.weights)
        top, over = row.largest, row.smallest_not_starting
        if top is None:
            parts.append(ph.text("cap_serve_row_none", weights=dtype))
            continue
        ctx = f"{top.max_model_len:,}"
        parts.append(ph.text("cap_serve_row" if over else "cap_serve_row_top", weights=dtype,
                             size=f"{top.params_b:.3g}", model=top.model, gib=top.weights_gib_per_gpu, ctx=ctx,
                             over=over.model if over else "—"))
    best = max(((r, r.largest) for r in rows if r.largest), key=lambda x: x[1].params_b, default=None)
    first = ph.text("cap_serve_none_any", where=where) if best is None else ph.text(
        "cap_serve_first", where=where, size=f"{best[1].params_b:.3g}", model=best[1].model,
        weights=ph.name("weights_names", best[0].weights))
    return "\n".join([first, *parts, ph.text("cap_serve_basis")])


def _render(answer: CapacityAnswer, ph: Phrases) -> str:
    a = answer
    where = ph.text("cap_where", count=a.gpu_count, gpu=a.gpu_name, memory=f"{a.gpu_memory_gib:g}")
    if a.use == "serve":
        return _render_serve(a, where, ph)
    if a.target == "model_size":
        rows = [r for r in a.rows if isinstance(r, TrainRow)]
        parts = []
        for row in rows:
            method = ph.name("method_names", row.method)
            if row.max_params_b is None:
                parts.append(ph.text("cap_row_none", method=method))
                continue
            fits, near = row.largest_fitting, row.smallest_not_fitting
            parts.append(ph.text(
                "cap_row" if near else "cap_row_top", method=method, size=f"{row.max_params_b:g}",
                fits=fits.model if fits else None, fits_gib=fits.per_gpu_gib if fits else None,
                over=near.model if near else "—", over_gib=near.per_gpu_gib if near else "—"))
        lines = [ph.text("cap_model_first", where=where, size=f"{rows[0].max_params_b or 0:g}",
                         method=ph.name("method_names", rows[0].method, "")),
                 *parts, ph.text("cap_model_basis", seq=a.seq_len, usable=a.usable_gib)]
        return "\n".join(lines)
    if a.strategy is None or a.memory is None or a.model is None:
        raise ValueError(f"a {a.target} limit states the memory, the strategy and the model it was sized with")
    method, model = method_label(a.strategy, ph), a.model.name
    if a.target == "context":
        if a.max_seq_len is None:
            return ph.text("cap_none", where=where, model=model, method=method)
        first = ph.text("cap_context", where=where, seq=a.max_seq_len, model=model, method=method,
                        need=a.per_gpu_gib, usable=a.usable_gib)
    else:
        if a.max_micro_batch is None:
            return ph.text("cap_none", where=where, model=model, method=method)
        first = ph.text("cap_batch", where=where, batch=a.max_micro_batch, model=model, method=method,
                        seq=a.strategy.seq_len, need=a.per_gpu_gib, usable=a.usable_gib)
    kind = a.model.kind if isinstance(a.model, ModelEcho) else None
    return "\n".join([first, memory_terms_line(a.memory, a.strategy, kind, ph)])


def _summary(o: CapacityAnswer) -> str:
    limit = {"model_size": figure(o.max_params_b, "B parameters", missing="none fits"),
             "context": figure(o.max_seq_len, "tokens", ",", missing="none fits"),
             "batch": figure(o.max_micro_batch, "sequences per micro-batch", missing="none fits")}[o.target]
    return f"{o.target} limit on {o.gpu_count}x {o.gpu} ({figure(o.gpu_memory_gib, 'GiB')} each): {limit}"


MODULE = QuestionModule(
    name="capacity", tool="capacity", title="Largest model, context or batch", args=CapacityArgs,
    answer=CapacityAnswer, run=_run, route=_route, render=_render, summary=_summary,
    frames=(("train", "capacity"), ("serve", "capacity"), ("none", "capacity")),
    description="The limit on given GPUs x count for a method: the largest model (per method when none is given), "
                "the longest context, or the largest micro-batch that fits ('8*H800能训多大的模型', 'max context for "
                "7B LoRA on one 4090'), with the memory at the limit; with use=serve, the largest model or context an "
                "inference engine (vLLM) starts per weight dtype.")
