"""Capacity for serving: on given GPUs x count, the largest model an engine (vLLM) starts, per weight dtype, or the
longest context (--max-model-len) the KV pool holds for a named model ('4090能部署多大的模型', 'My VRAM is 128GB, so
the context size I can configure is?'). Every figure is the serving engine's (service.planner.serving_inference);
this module only chooses which models and dtypes to try.

- model size: the catalog's decoders (dense and MoE, by total parameters), smallest first; for each dtype the
  largest that starts (binary search, then a look above it for a model the shape alone refused at the boundary),
  and the next one up that does not.
  A model starts when its pool holds at least one request of the default lengths at MIN_USEFUL_CONTEXT tokens.
- context: the longest single sequence the pool holds (the engine's max_model_len_fits) for the named model.
"""

from __future__ import annotations

from typing import Any, Literal

from service.catalog.loader import Catalog
from service.catalog.schema import ModelSpec
from service.planner.questions.fit import gpu_for, short_name
from service.planner.serving_inference import inference
from service.serving_workload import ServingWorkload

Artifact = dict[str, Any]
Dtype = Literal["bf16", "fp8", "int4"]


def _decoders(cat: Catalog) -> list[ModelSpec]:
    """One text decoder per size, smallest first."""
    seen: dict[float, ModelSpec] = {}
    for m in sorted(cat.models, key=lambda m: (m.params_published_b, m.moe is not None, m.id)):
        if m.kind == "decoder" and "_vl" not in m.family and m.family != "internvl2" and not m.vision_params_b:
            seen.setdefault(round(m.params_published_b, 1), m)
    return list(seen.values())


def _try(cat: Catalog, m: ModelSpec, gpu: str, count: int, weights: Dtype,
         seq_len: int | None = None) -> Artifact | None:
    """The engine's figures when `m` starts on count x gpu in `weights` (with --max-model-len `seq_len` when a
    context is asked: the pool must hold it), else None."""
    if seq_len is not None and m.max_position_embeddings and seq_len > m.max_position_embeddings:
        return None  # the model's own context is shorter than the one asked
    r = inference(ServingWorkload(model=m.id, gpu=gpu, gpus=count, weights=weights, max_model_len=seq_len), cat)
    if not r.starts:
        return None
    return {"model": m.id, "params_b": m.params_published_b, "weights_gib_per_gpu": round(r.weights_gib_per_gpu, 1),
            "max_model_len": r.max_model_len, "context_lowered_from": r.context_lowered_from,
            "max_concurrency_at_load": r.max_concurrency_at_load}


_BYTES = {"bf16": 2.0, "fp8": 1.0, "int4": 0.55}  # per parameter, with int4's group scales


def _largest(cat: Catalog, models: list[ModelSpec], gpu: str, count: int, weights: Dtype,
             seq_len: int | None = None) -> Artifact:
    """The largest model that starts, and the next one up that does not. The weights grow with the parameters,
    but a model can also be refused for its shape (a tensor-parallel degree that does not divide its heads, a
    quantised kernel's group size), so the search does not assume the boundary is sharp: it binary-searches the
    largest that starts, then looks above it, among the models whose weights alone could fit, for any that starts."""
    lo, hi = -1, len(models)  # models[lo] starts (or lo = -1), models[hi] does not (or hi = len)
    best: Artifact | None = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        got = _try(cat, models[mid], gpu, count, weights, seq_len)
        if got is not None:
            lo, best = mid, got
        else:
            hi = mid
    g, _ = gpu_for(cat, gpu)
    budget_b = g.memory_gib * count * 0.95 * 2**30 / 1e9 / _BYTES[weights]  # the most parameters the cards could hold
    for i in range(len(models) - 1, hi - 1, -1):
        if models[i].params_published_b > budget_b or i <= lo:
            continue
        got = _try(cat, models[i], gpu, count, weights, seq_len)
        if got is not None:
            lo, best = i, got
            break
    above = next((m for m in models[lo + 1:] if _try(cat, m, gpu, count, weights, seq_len) is None), None)
    return {"weights": weights, "largest": best, "max_params_b": best["params_b"] if best else None,
            "smallest_not_starting": {"model": above.id, "params_b": above.params_published_b} if above else None}


def serve_capacity(cat: Catalog, gpu: str, count: int = 1, target: Literal["model_size", "context"] = "model_size",
                   model: str | None = None, weights: Dtype | None = None, seq_len: int | None = None) -> Artifact:
    """`seq_len`: the context the question states ('能部署多大的模型 32k上下文'): a model counts only when it starts
    with --max-model-len at least that long."""
    g, said = gpu_for(cat, gpu)
    out: Artifact = {"kind": "capacity", "use": "serve", "target": target, "gpu": g.id, "gpu_name": short_name(g.id),
                     "gpu_count": count, "gpu_memory_gib": g.memory_gib, "engine": "vllm",
                     "assumptions": [said[0]] if said else [], "assumptions_zh": [said[1]] if said else []}
    if target == "context":
        if model is None:
            raise ValueError("the serving context limit needs a model")
        r = inference(ServingWorkload(model=model, gpu=g.id, gpus=count, weights=weights), cat)
        out.update({"model": {"id": r.model.id, "name": r.model.name}, "weights": r.weights, "starts": r.starts,
                    "max_seq_len": r.max_model_len_fits if r.max_model_len_fits > 0 else None,
                    "kv_capacity_tokens": r.kv_capacity_tokens, "weights_gib_per_gpu": round(r.weights_gib_per_gpu, 1),
                    "kv_cache_gib_per_gpu": round(r.kv_cache_gib_per_gpu, 1)})
        return out
    dtypes: tuple[Dtype, ...] = (weights,) if weights else (("bf16", "fp8", "int4") if g.supports_fp8
                                                           else ("bf16", "int4"))
    models = _decoders(cat)
    if seq_len is not None:
        out["seq_len"] = seq_len
    out["rows"] = [_largest(cat, models, g.id, count, d, seq_len) for d in dtypes]
    out["max_params_b"] = max((r["max_params_b"] or 0 for r in out["rows"]), default=0) or None
    return out
