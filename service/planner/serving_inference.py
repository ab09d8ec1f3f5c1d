"""One model on one GPU type, no catalog search: `gpu-advisor inference` and POST /v1/inference.

The engine's figures for the asked setup: weights per GPU, KV bytes per token, the KV pool in tokens, the
concurrency it holds, whether the engine starts (and why not), and throughput / TTFT / TPOT at the load (at the
replica's capacity when no load is given). With `gpus` the replica has that many GPUs; without, the fewest that
meet the target (the sizing). Memory figures are reported even when the engine does not start.
"""

from __future__ import annotations

import math
from dataclasses import replace

from pydantic import Field

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.errors import InvalidInputError
from service.planner.generic import is_estimated
from service.planner.serving_launch import launch
from service.planner.serving_size import (
    context_note,
    engine_notes,
    fp16_note,
    released_weights,
    resolve_serving_model,
    setup_and_target,
    size_on,
)
from service.planner.serving_types import Launch, ModelRef, ServingSizing, _Out
from service.serving_workload import ServingWorkload
from service.sizing.serving import layout
from service.sizing.serving.engines import engine_defaults, engine_memory, kv_layout
from service.sizing.serving.sizing import in_chinese
from service.sizing.serving.support import served_weights, unsupported


class InferenceResult(_Out):
    """The `inference --json` object (flat: the figures people ask for first, then the sizing)."""

    model: ModelRef
    gpu: str
    gpu_name: str
    engine: str
    engine_assumed: str = Field(default="", description="the engine release whose defaults the figures assume")
    engine_assumed_zh: str = ""
    weights: str
    kv_dtype: str
    gpus: int = Field(description="GPUs of one replica (tensor parallel x pipeline parallel)")
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    replicas: int
    mem_fraction: float
    max_model_len: int
    weights_gib_per_gpu: float
    activation_peak_gib: float = Field(default=0.0, description="the start-up profile's peak (forward at "
                                       "max_num_batched_tokens, sampler, vision encoder)")
    vision_profile_gib: float = 0.0
    graph_gib: float = Field(default=0.0, description="vLLM CUDA-graph capture memory, outside the pool")
    kv_bytes_per_token: float = Field(description="per GPU, every layer")
    kv_cache_gib_per_gpu: float
    kv_capacity_tokens: int
    max_concurrency: float = Field(description="sequences of max_model_len one replica holds")
    max_concurrency_at_load: float | None = Field(description="sequences of the load's lengths one replica holds")
    max_model_len_fits: int = Field(description="the longest single sequence the pool holds")
    starts: bool
    starts_reason: str
    starts_reason_zh: str = Field(default="", description="starts_reason in Chinese")
    fix: str | None = Field(default=None, description="the flag that makes it start, when it does not")
    refused_layout: str | None = Field(default=None, description="the pinned layout the engine refuses, with its "
                                       "message; the figures are for the layout that replaces it")
    input_tokens: int
    output_tokens: int
    output_tokens_per_s: float | None = Field(description="the deployment (all replicas) at the load")
    ttft_ms: float | None
    tpot_ms: float | None
    saturated: bool | None = Field(default=None, description="the load is above what the deployment holds or "
                                   "serves: requests queue (TTFT includes the wait)")
    meets_limits: bool | None
    headroom: str | None
    sizing: ServingSizing | None
    context_lowered_from: int | None = Field(
        default=None, description="the model's context, when the pool does not hold it and max_model_len was "
        "lowered to what it holds (no context was asked for)")
    min_gpus_for_weights: int | None = Field(
        default=None, description="when no replica of up to 4 nodes serves it: the GPUs the weights alone fill at "
        "the engine's memory fraction (KV cache comes on top)")
    launch: Launch | None
    notes: list[str] = Field(default_factory=list, description="the engine's notes (FP8 weight-only, the queue)")
    assumptions: list[str]
    assumptions_zh: list[str]


MAX_GPUS_COUNTED = 100_000


def gpus_for(total_gib: float, per_gpu_gib: float) -> int | None:
    """ceil(total / per GPU): the GPUs `total_gib` fills at `per_gpu_gib` each; None when the share per GPU is too
    small for the count to mean anything (it would be infinite for a fraction near zero)."""
    if per_gpu_gib <= 0:
        return None
    count = total_gib / per_gpu_gib
    return math.ceil(count) if math.isfinite(count) and count <= MAX_GPUS_COUNTED else None
MAX_UNPINNED_GPUS = 32  # without a pinned count: up to 4 nodes of 8 (TP 8 x PP 4)


def inference(w: ServingWorkload, cat: Catalog) -> InferenceResult:
    if not w.gpu:
        raise InvalidInputError("gpu: give the GPU to size on (e.g. L20, A10, H800).",
                                "Pass --gpu, or use `plan-serving` to search every GPU the clouds rent.")
    m, notes = resolve_serving_model(w, cat.models)
    gpu, gpu_note = resolve_gpu(w.gpu, cat.gpus)
    w, released = released_weights(w, m)
    notes += released
    setup, target, defaults = setup_and_target(w, m)
    setup = replace(setup, weights=served_weights(gpu, setup.weights))
    if setup.weights != w.weights:
        defaults = [*defaults, fp16_note(gpu)]
    label = engine_notes(w, gpu)
    notes += defaults + ([(gpu_note, gpu_note)] if gpu_note else [])
    if w.gpus:
        notes.append((f"{w.gpus} GPUs pinned: one deployment on them carries the whole load (requests beyond what it "
                      "holds wait in its queue); a plan adds replicas only when asked for a target.",
                      f"指定了 {w.gpus} 张卡：按这 {w.gpus} 张卡上的一个部署承载全部负载（超出部分排队等待）；只有在给出目标并"
                      "要求规划时才会增加副本。"))
    sized = size_on(m, gpu, w, w.gpus or MAX_UNPINNED_GPUS)
    fix = None
    if isinstance(sized, str):
        mem = engine_memory(m, gpu, setup)
        where = f"{w.gpus} GPUs" if w.gpus else f"replicas of 1-{MAX_UNPINNED_GPUS} GPUs"
        where_zh = f"{w.gpus} 张卡" if w.gpus else f"每副本 1-{MAX_UNPINNED_GPUS} 张卡"
        notes.append((f"Not served by {where}: {sized}", f"无法承载（{where_zh}）：{in_chinese(sized)}"))
        starts, reason, fix = mem.starts, mem.starts_reason if not mem.starts else sized, mem.fix or None
        reason_zh = (mem.starts_reason_zh or mem.starts_reason) if not mem.starts else in_chinese(sized)
        weights_total = engine_memory(m, gpu, replace(setup, tp=1, pp=1)).weights_gib
        lowered = None
        min_weights = gpus_for(weights_total, mem.device_total_gib * mem.mem_fraction) if w.gpus is None else None
        perf_fields: dict[str, object] = {"output_tokens_per_s": None, "ttft_ms": None, "tpot_ms": None,
                                          "meets_limits": False, "headroom": None, "max_concurrency_at_load": None}
        out_launch = None
        replicas, tp, pp, refused, extra = 0, setup.tp, setup.pp, None, list(mem.notes)
    else:
        tp, pp = sized.tensor_parallel, sized.pipeline_parallel
        mem = engine_memory(m, gpu, replace(setup, tp=tp, pp=pp, max_model_len=sized.max_model_len,
                                            mem_fraction=sized.mem_fraction if w.mem_fraction is None else
                                            setup.mem_fraction))
        lowered = setup.max_model_len if sized.max_model_len < (setup.max_model_len or 0) else None
        if lowered:
            notes.append(context_note(lowered, sized.max_model_len))
        refused = sized.refused_layout
        starts, reason, reason_zh = refused is None, mem.starts_reason, mem.starts_reason_zh or mem.starts_reason
        if refused:
            fix = layout.flags(tp, pp)
            reason = f"{refused}; {layout.flags(tp, pp)} runs on the same {tp * pp} GPUs: {mem.starts_reason}"
            reason_zh = f"`{refused}`；同样 {tp * pp} 张卡改用 {layout.flags(tp, pp)}：{reason_zh}"
        perf_fields = {"output_tokens_per_s": sized.output_tokens_per_s, "ttft_ms": sized.ttft_ms,
                       "tpot_ms": sized.tpot_ms, "meets_limits": sized.meets_limits, "headroom": sized.headroom,
                       "max_concurrency_at_load": sized.max_concurrency_at_load, "saturated": sized.saturated}
        sglang = engine_defaults("sglang", gpu, tp).mem_fraction
        nodes = pp * sized.replicas
        out_launch = launch(m, sized, nodes, sized.replicas, tp * pp * sized.replicas // max(1, nodes), sglang,
                            unsupported("sglang", gpu, sized.weights, sized.kv_dtype))
        replicas = sized.replicas
        min_weights = None
        extra = list(sized.notes)
    kv = kv_layout(m, replace(setup, tp=tp, pp=pp))
    return InferenceResult(
        model=ModelRef(id=m.id, name=m.name, params_b=m.params_published_b, active_params_b=m.active_params_b,
                       source=m.source, estimated=is_estimated(m)),
        gpu=gpu.id, gpu_name=gpu.name, engine=w.engine, engine_assumed=label[0], engine_assumed_zh=label[1],
        weights=setup.weights, kv_dtype=w.kv_dtype, gpus=tp * pp, tensor_parallel=tp, pipeline_parallel=pp,
        replicas=replicas, mem_fraction=mem.mem_fraction, max_model_len=mem.max_model_len,
        weights_gib_per_gpu=round(mem.weights_gib, 3), activation_peak_gib=round(mem.activation_peak_gib, 3),
        vision_profile_gib=round(mem.vision_gib, 3), graph_gib=round(mem.graph_gib, 3),
        kv_bytes_per_token=kv.bytes_per_token_per_gpu,
        kv_cache_gib_per_gpu=round(mem.kv_cache_gib, 3), kv_capacity_tokens=mem.kv_capacity_tokens,
        max_concurrency=round(mem.max_concurrency, 2), max_model_len_fits=mem.max_model_len_fits,
        starts=starts, starts_reason=reason, starts_reason_zh=reason_zh, fix=fix, refused_layout=refused, input_tokens=target.input_tokens,
        output_tokens=target.output_tokens, sizing=None if isinstance(sized, str) else sized, launch=out_launch,
        min_gpus_for_weights=min_weights, context_lowered_from=lowered, notes=_unique(extra),
        assumptions=[*[en for en, _ in notes], label[0] + " assumed."],
        assumptions_zh=[*[zh for _, zh in notes], f"按 {label[1]}估算。"],
        **perf_fields,
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
