"""Question type `capacity`: given GPUs x count (and a method), the largest model, the longest context or the
largest micro-batch that fits ('8*H800能训多大的模型', '单卡4090 lora 最长能跑多长上下文'). Engine:
service/planner/questions/capacity.py."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from service.assistant.intents.base import Artifact, Ask, Asked, Missing, Phrases, QuestionType, workload_of
from service.assistant.intents.render import memory_line, method_name
from service.assistant.intents.routing import subject_count, subject_gpu, without
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.questions.capacity import capacity
from service.planner.questions.serve_capacity import serve_capacity

# deploying, not training: '能部署多大的模型', 'which model can run on a 4090', 'context size I can config' (Ollama)
_SERVE = re.compile(r"部署|推理|上线|跑起来|服务|(?<![A-Za-z])(?:serv(?:e|ing)|inference|deploy\w*|host|ollama|vllm|sglang|"
                    r"llama\.?cpp|run (?:it|the model|locally|on)|can run|to run)(?![A-Za-z])", re.IGNORECASE)
_TRAIN = re.compile(r"训|微调|(?<![A-Za-z])(?:train\w*|fine-?tun\w*|finetun\w*|sft|lora|qlora)(?![A-Za-z])", re.IGNORECASE)


class CapacityArgs(Asked):
    params_b: float | None = Field(default=1.0, gt=0, le=5000, description="unused for model_size")
    gpu: str = Field(description="the GPU: 4090, H800, A100 80G, 910B, or a memory size such as 48G")
    target: Literal["model_size", "context", "batch"] = "model_size"
    method_stated: bool = Field(default=True, description="false: show full, LoRA and QLoRA side by side")
    use: Literal["train", "serve"] = Field(default="train", description="serve: what an inference engine starts")
    weights: Literal["bf16", "fp8", "int4"] | None = Field(default=None, description="serve: one weight dtype only")


def _run(ctx: Any, args: CapacityArgs) -> Artifact:
    w = workload_of(args).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog, w)
    if args.use == "serve":
        context = args.target == "context"
        out = serve_capacity(cat, args.gpu, args.gpu_count or 1, "context" if context else "model_size",
                             w.model if context else None, args.weights)
        return with_assumptions(out, said)
    return with_assumptions(capacity(cat, w, args.gpu, args.gpu_count or 1, args.target, args.method_stated), said)


def _route(a: Ask) -> dict[str, Any] | Missing:
    gpu = subject_gpu(a)
    if gpu is None:
        return Missing("gpu")
    target = str(a.reading.slots.get("target") or "model_size")
    slots = without(a.slots, "gpu_include", "gpu_count")
    if target != "model_size" and not (slots.get("model") or slots.get("params_b")):
        return Missing("model")
    serve = bool(_SERVE.search(a.text)) and not _TRAIN.search(a.text) and target != "batch"
    if target == "model_size":
        slots = {**without(slots, "model"), "params_b": 1.0}
    out = {**slots, "gpu": gpu, "gpu_count": subject_count(a) or 1, "target": target,
           "method_stated": "method" in a.slots, "use": "serve" if serve else "train"}
    weights = a.reading.slots.get("weights")
    if serve and weights in ("bf16", "fp8", "int4"):
        out["weights"] = weights
    return out


def _render_serve(art: Artifact, where: str, ph: Phrases) -> str:
    if art["target"] == "context":
        if not art["starts"] or not art.get("max_seq_len"):
            return str(ph["cap_serve_none"]).format(where=where, model=art["model"]["name"])
        return str(ph["cap_serve_context"]).format(where=where, model=art["model"]["name"], seq=f"{art['max_seq_len']:,}",
                                                   weights=ph["weights_names"].get(art["weights"], art["weights"]),
                                                   w_gib=art["weights_gib_per_gpu"], kv_gib=art["kv_cache_gib_per_gpu"])
    parts = []
    for row in art["rows"]:
        dtype = ph["weights_names"].get(row["weights"], row["weights"])
        top, over = row["largest"], row["smallest_not_starting"]
        if top is None:
            parts.append(str(ph["cap_serve_row_none"]).format(weights=dtype))
            continue
        ctx = f"{top['max_model_len']:,}"
        parts.append(str(ph["cap_serve_row" if over else "cap_serve_row_top"]).format(
            weights=dtype, size=f"{top['params_b']:.3g}", model=top["model"], gib=top["weights_gib_per_gpu"], ctx=ctx,
            over=over["model"] if over else "—"))
    best = max((r for r in art["rows"] if r["largest"]), key=lambda r: r["largest"]["params_b"], default=None)
    first = str(ph["cap_serve_none_any"]).format(where=where) if best is None else str(ph["cap_serve_first"]).format(
        where=where, size=f"{best['largest']['params_b']:.3g}", model=best["largest"]["model"],
        weights=ph["weights_names"].get(best["weights"], best["weights"]))
    return "\n".join([first, *parts, str(ph["cap_serve_basis"])])


def _render(art: Artifact, ph: Phrases) -> str:
    where = str(ph["cap_where"]).format(count=art["gpu_count"], gpu=art["gpu_name"], memory=f"{art['gpu_memory_gib']:g}")
    if art.get("use") == "serve":
        return _render_serve(art, where, ph)
    if art["target"] == "model_size":
        parts = []
        for row in art["rows"]:
            method = ph["method_names"].get(row["method"], row["method"])
            if row["max_params_b"] is None:
                parts.append(str(ph["cap_row_none"]).format(method=method))
                continue
            near = row["smallest_not_fitting"]
            key = "cap_row" if near else "cap_row_top"
            parts.append(str(ph[key]).format(
                method=method, size=f"{row['max_params_b']:g}", fits=row["largest_fitting"]["model"],
                fits_gib=row["largest_fitting"]["per_gpu_gib"],
                over=near["model"] if near else "—", over_gib=near["per_gpu_gib"] if near else "—"))
        lines = [str(ph["cap_model_first"]).format(where=where, size=f"{art['rows'][0]['max_params_b'] or 0:g}",
                                                   method=ph["method_names"].get(art["rows"][0]["method"], "")),
                 *parts, str(ph["cap_model_basis"]).format(seq=art["seq_len"], usable=art["usable_gib"])]
        return "\n".join(lines)
    method = method_name(art, ph)
    if art["target"] == "context":
        if art.get("max_seq_len") is None:
            return str(ph["cap_none"]).format(where=where, model=art["model"]["name"], method=method)
        first = str(ph["cap_context"]).format(where=where, seq=art["max_seq_len"], model=art["model"]["name"],
                                              method=method, need=art["per_gpu_gib"], usable=art["usable_gib"])
    else:
        if art.get("max_micro_batch") is None:
            return str(ph["cap_none"]).format(where=where, model=art["model"]["name"], method=method)
        first = str(ph["cap_batch"]).format(where=where, batch=art["max_micro_batch"], model=art["model"]["name"],
                                            method=method, seq=art["strategy"]["seq_len"], need=art["per_gpu_gib"],
                                            usable=art["usable_gib"])
    return "\n".join([first, memory_line(art, ph)])


CAPACITY = QuestionType(
    name="capacity", tool="find_capacity", args=CapacityArgs, run=_run,
    summary=lambda o: f"{o['target']} limit on {o['gpu_count']}x {o['gpu']}: "
                      + str(o.get("max_params_b") or o.get("max_seq_len") or o.get("max_micro_batch")),
    route=_route, render=_render,
    result=lambda o: {"capacity": {k: o.get(k) for k in ("use", "target", "gpu", "gpu_count", "gpu_memory_gib", "usable_gib",
                                                         "max_params_b", "max_seq_len", "max_micro_batch",
                                                         "per_gpu_gib", "rows", "seq_len")}},
    doc="The largest model, longest context or largest micro-batch that fits on given GPUs x count for a method "
        "('8*H800能训多大的模型', 'max context for 7B LoRA on one 4090'), with the memory at the limit.")
