"""Capacity: given GPUs x count (and a method), the largest model, the longest context or the largest micro-batch
that fits, with the arithmetic at the limit. Every figure is the estimate's (`service.planner.estimate`) at the
sizes searched; this module only chooses which sizes to try.

- model size: the catalog's dense decoders, smallest first, up to the first that does not fit; the limit lies
  between the last that fits and the first that does not (interpolated, and both named).
- context: the longest sequence (multiples of 512 tokens) that fits for the named model.
- batch: the largest micro-batch at the stated (or default) sequence length.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from service.catalog.loader import Catalog
from service.planner.estimate import EstimateRequest, estimate
from service.planner.questions.fit import gpu_for, short_name, usable_gib
from service.workload import DEFAULT_SEQ_LEN, Workload

Artifact = dict[str, Any]
Target = Literal["model_size", "context", "batch"]
METHODS_SHOWN = ("full", "lora", "qlora")  # a model-size question without a method gets all three
_MAX_SEQ = 1_048_576
_MAX_BATCH = 1024


def _sized(cat: Catalog, w: Workload, gpu: str, n: int) -> Artifact:
    if n > 1 and w.zero_stage is None:  # more cards only raise the limit when the model states are sharded
        w = w.model_copy(update={"zero_stage": 3})
    return estimate(EstimateRequest(w, gpu, n), cat)


def _largest(fits: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The largest integer in [lo, hi] for which `fits` holds, assuming it is monotone (fits at small sizes,
    not at large); None when even `lo` does not fit."""
    if not fits(lo):
        return None
    if fits(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _row(out: Artifact) -> Artifact:
    return {"per_gpu_gib": out["memory"]["per_gpu_gib"], "memory": out["memory"], "strategy": out["strategy"],
            "fits": out["fits"], "model": out["model"]}


def _dense_decoders(cat: Catalog) -> list[Any]:
    """One catalog decoder per size (dense, text-only), smallest first: the sizes the search steps through."""
    seen: dict[float, Any] = {}
    for m in sorted(cat.models, key=lambda m: (m.params_published_b, m.id)):
        if (m.kind == "decoder" and m.moe is None and "_vl" not in m.family and m.family != "internvl2"
                and m.vision_params_b is None):
            seen.setdefault(round(m.params_published_b, 1), m)
    return list(seen.values())


def _model_size(cat: Catalog, w: Workload, gpu: str, n: int, method: str) -> Artifact:
    """The largest catalog decoder that fits, the smallest that does not, and the size between them where the
    per-GPU memory (linear in the parameter count between the two) reaches the usable memory."""
    base = w.model_copy(update={"params_b": None, "method": method, "quant_bits": 4 if method == "qlora" else None})
    usable = usable_gib(gpu_for(cat, gpu)[0])
    below: tuple[Any, Artifact] | None = None
    above: tuple[Any, Artifact] | None = None
    fitting: list[Artifact] = []
    for m in _dense_decoders(cat):
        out = _sized(cat, base.model_copy(update={"model": m.id}), gpu, n)
        if out["fits"]:
            below = (m, out)
            fitting.append({"model": m.id, "params_b": m.params_published_b,
                            "per_gpu_gib": out["memory"]["per_gpu_gib"]})
        else:
            above = (m, out)
            break
    row: Artifact = {"method": method, "max_params_b": None, "largest_fitting": None, "smallest_not_fitting": None,
                     "largest_catalog_models": sorted(fitting, key=lambda r: -r["params_b"])[:3]}
    if above is not None:
        row["smallest_not_fitting"] = {"model": above[0].id, "params_b": above[0].params_published_b,
                                       "per_gpu_gib": above[1]["memory"]["per_gpu_gib"]}
    if below is None:
        return row
    row.update(_row(below[1]))
    row["largest_fitting"] = fitting[-1]
    p0, g0 = below[0].params_published_b, below[1]["memory"]["per_gpu_gib"]
    if above is None:
        row["max_params_b"] = p0
        return row
    p1, g1 = above[0].params_published_b, above[1]["memory"]["per_gpu_gib"]
    if p1 > 1.6 * p0:  # no catalog size in between: the limit is not known closer than 'at least p0'
        row["max_params_b"] = p0
        return row
    slope = (g1 - g0) / (p1 - p0) if p1 > p0 else 0.0
    limit = p0 + (usable - g0) / slope if slope > 0 else p0
    row["max_params_b"] = max(p0, min(p1, math.floor(limit * 2) / 2))  # down to half a billion
    return row


def capacity(cat: Catalog, w: Workload, gpu: str, count: int = 1, target: Target = "model_size",
             method_stated: bool = True) -> Artifact:
    """The limit of `target` on `count` x `gpu` for the workload (its method, model and lengths)."""
    g, said = gpu_for(cat, gpu)
    out: Artifact = {"kind": "capacity", "target": target, "gpu": g.id, "gpu_name": short_name(g.id),
                     "gpu_count": count, "gpu_memory_gib": g.memory_gib,
                     "usable_gib": usable_gib(g), "workload": w.model_dump(),
                     "assumptions": [said[0]] if said else [], "assumptions_zh": [said[1]] if said else []}
    if target == "model_size":
        methods = (w.method,) if method_stated else METHODS_SHOWN
        rows = [_model_size(cat, w, g.id, count, m) for m in methods]
        out["rows"] = rows
        out["max_params_b"] = rows[0]["max_params_b"]
        out["seq_len"] = w.seq_len or DEFAULT_SEQ_LEN
        return out
    if not w.model and not w.params_b:
        raise ValueError("capacity for context or batch needs a model")
    if target == "context":
        def fits_seq(k: int) -> bool:
            return bool(_sized(cat, w.model_copy(update={"seq_len": k * 512}), g.id, count)["fits"])

        k = _largest(fits_seq, 1, _MAX_SEQ // 512)
        out["max_seq_len"] = None if k is None else k * 512
        at = w.model_copy(update={"seq_len": (k or 1) * 512})
    else:
        def fits_batch(b: int) -> bool:
            return bool(_sized(cat, w.model_copy(update={"micro_batch": b}), g.id, count)["fits"])

        b = _largest(fits_batch, 1, _MAX_BATCH)
        out["max_micro_batch"] = b
        at = w.model_copy(update={"micro_batch": b or 1})
    sized = _sized(cat, at, g.id, count)
    out.update(_row(sized))
    out["assumptions"] = out["assumptions"] + list(sized["assumptions"])
    return out
