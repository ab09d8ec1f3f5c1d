"""Feasibility and minimum GPUs: one named GPU (any in gpus.yaml, rented here or not) x count for a workload.

Every figure comes from the engine (`service.planner.estimate.estimate`, which sizes with
`service.sizing.memory.estimate_memory`); this module only chooses which setups to size and orders them.
"""

from __future__ import annotations

import re
from typing import Any

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec
from service.planner.estimate import EstimateRequest, estimate
from service.sizing.verdict import CARD_USABLE, card_capacity_gib
from service.workload import Workload

Artifact = dict[str, Any]
COUNTS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 40, 48, 56, 64)  # any count in one server, whole servers beyond
# GPUs a 'least memory' answer sizes on when no GPU is named: a 24 GiB card, 48, 80 and 96 GiB data-centre cards.
REFERENCE_GPUS = ("RTX-4090", "L20", "A100-80G-SXM", "H20")


def usable_gib(g: GpuSpec) -> float:
    """What PyTorch can use on the card (service/sizing/verdict.py): the fit verdict's capacity."""
    return round(card_capacity_gib(g), 1)


def _zh_assumptions(cat: Catalog, w: Workload) -> list[str]:
    """The workload's assumptions in Chinese, as the engine states them (the estimate's own extra lines about
    ZeRO, checkpointing and MFU are English only)."""
    from service.planner.resolve import resolve_job

    return list(resolve_job(w, cat.models).assumptions_zh)


def _sized(cat: Catalog, w: Workload, gpu: str, n: int, offload: str = "none") -> Artifact:
    if n > 1 and w.zero_stage is None:
        w = w.model_copy(update={"zero_stage": 3})  # more cards only lower the per-GPU memory when sharded
    return estimate(EstimateRequest(w, gpu, n, offload), cat)  # type: ignore[arg-type]


def _row(out: Artifact, change: str, **extra: Any) -> Artifact:
    return {"change": change, "gpu_count": out["gpus"], "per_gpu_gib": out["memory"]["per_gpu_gib"],
            "fits": out["fits"], "training_hours": out["training_hours"], "method": out["strategy"]["method"],
            "zero_stage": out["strategy"]["zero_stage"], "seq_len": out["strategy"]["seq_len"], **extra}


def gpus_needed(cat: Catalog, w: Workload, gpu: str) -> Artifact | None:
    """The fewest cards of `gpu` (1 to 8, then whole 8-card servers up to 64; ZeRO-3 beyond one) on which the
    workload fits, sized."""
    for n in COUNTS:
        out = _sized(cat, w, gpu, n)
        if out["fits"]:
            return out
    return None


def _changes(cat: Catalog, w: Workload, gpu: str, n: int, kind: str) -> list[Artifact]:
    """The changes that make it fit, cheapest first: the same cards with QLoRA / LoRA / a shorter context /
    offload, then more cards."""
    out: list[Artifact] = []
    if kind == "decoder" and w.method in ("lora", "full", "freeze"):
        out.append(_row(_sized(cat, w.model_copy(update={"method": "qlora", "quant_bits": 4}), gpu, n), "qlora"))
    if w.method in ("full", "freeze", "pretrain") and kind in ("decoder", "encoder"):
        out.append(_row(_sized(cat, w.model_copy(update={"method": "lora", "quant_bits": None}), gpu, n), "lora"))
    seq = w.seq_len or 2048
    if kind == "decoder" and seq >= 1024:
        out.append(_row(_sized(cat, w.model_copy(update={"seq_len": seq // 2}), gpu, n), "seq_len"))
    if w.method in ("full", "pretrain", "freeze"):
        out.append(_row(_sized(cat, w, gpu, n, "optimizer"), "offload"))
    more = next((o for m in COUNTS if m > n and (o := _sized(cat, w, gpu, m))["fits"]), None)
    if more is not None:
        out.append(_row(more, "gpus"))
    return [r for r in out if r["fits"]]


def short_name(gpu_id: str) -> str:
    """'RTX-4090' -> 'RTX 4090', 'A100-80G-SXM' -> 'A100 80G SXM', 'RTX-3090TI' -> 'RTX 3090 Ti': the name as people
    write it."""
    return re.sub(r"(?<=\d)TI\b", " Ti", gpu_id.replace("-", " "))


def rentals(cat: Catalog, gpu_id: str) -> list[Artifact]:
    """Instance types that carry this GPU, per cloud, smallest first."""
    rows = sorted((r for r in cat.instances if r.gpu == gpu_id and not r.stale),
                  key=lambda r: (r.cloud, r.gpu_count, r.instance_type))
    return [{"cloud": r.cloud, "instance_type": r.instance_type, "gpu_count": r.gpu_count} for r in rows]


_MEMORY_ONLY = re.compile(r"^\s*(\d{1,3})\s*G(?:B|iB)?\s*$", re.IGNORECASE)


def gpu_for(cat: Catalog, name: str) -> tuple[GpuSpec, tuple[str, str] | None]:
    """The GPU by name; a bare memory size ('24G') is a card of that memory (a rented one first, then a consumer
    card), said as an assumption."""
    m = _MEMORY_ONLY.match(name)
    if m is None:
        return resolve_gpu(name, cat.gpus)[0], None
    size = float(m.group(1))
    same = [g for g in cat.gpus if g.memory_gib == size]
    if not same:
        return resolve_gpu(name, cat.gpus)[0], None  # the catalog's 'unknown GPU' error, with suggestions
    rented = {r.gpu for r in cat.instances}
    ranked = sorted(same, key=lambda g: (g.id not in rented, g.form_factor != "consumer", g.id))
    g = ranked[0]
    where = sorted({f"{r.family}" for r in cat.instances if r.gpu == g.id})[:3]
    others = [x.id for x in ranked[1:4]]
    en = (f"A {size:g} GB card: the memory is what counts; sized as the {g.id}"
          + (f" (rented as {', '.join(where)})" if where else "") + (f"; same class: {', '.join(others)}" if others else "")
          + ".")
    zh = (f"{size:g}G 显存的卡：看的是显存；按 {g.id} 估算" + (f"（云上实例 {'、'.join(where)}）" if where else "")
          + (f"，同档还有 {'、'.join(others)}" if others else "") + "。")
    return g, (en, zh)


def feasibility(cat: Catalog, w: Workload, gpu: str, count: int = 1) -> Artifact:
    """Does the workload fit on `count` x `gpu`? The memory arithmetic, the fewest cards that fit, the changes
    that would make it fit, and where the GPU can be rented."""
    g, said = gpu_for(cat, gpu)
    out = _sized(cat, w, g.id, count)
    needed = out if out["fits"] else gpus_needed(cat, w, g.id)
    kind = str(out["model"]["kind"])
    fits_with = [] if out["fits"] else _changes(cat, w, g.id, count, kind)
    return {
        "kind": "feasibility", "gpu": g.id, "gpu_name": short_name(g.id), "gpu_count": count, "fits": out["fits"],
        "verdict": out.get("verdict", "fits" if out["fits"] else "does_not_fit"),
        "memory_verdict": out.get("memory_verdict"),
        "per_gpu_gib": out["memory"]["per_gpu_gib"], "gpu_memory_gib": g.memory_gib,
        "usable_gib": usable_gib(g), "memory": out["memory"],
        "gpus_needed": None if needed is None else needed["gpus"],
        "needed_per_gpu_gib": None if needed is None else needed["memory"]["per_gpu_gib"],
        "training_hours": out["training_hours"], "strategy": out["strategy"], "model": out["model"],
        "fits_with": fits_with, "rent": rentals(cat, g.id), "form_factor": g.form_factor, "vendor": g.vendor,
        "assumptions": out["assumptions"] + ([said[0]] if said else []),
        "assumptions_zh": _zh_assumptions(cat, w) + ([said[1]] if said else []), "workload": w.model_dump(),
    }


OTHER_METHODS = ("full", "lora", "qlora")
OTHER_METHODS_GPU = "A100-80G-SXM"  # the card the other methods are counted on when none is named


def other_methods(cat: Catalog, w: Workload, gpu_id: str) -> list[Artifact]:
    """The fewest cards of `gpu_id` for each other fine-tuning method: '训练72b要多少显存' does not say full or LoRA."""
    out: list[Artifact] = []
    for method in OTHER_METHODS:
        if method == w.method:
            continue
        needed = gpus_needed(cat, w.model_copy(update={"method": method, "quant_bits": None}), gpu_id)
        out.append({"method": method, "gpu": gpu_id, "gpu_name": short_name(gpu_id),
                    "gpus_needed": None if needed is None else needed["gpus"],
                    "per_gpu_gib": None if needed is None else needed["memory"]["per_gpu_gib"]})
    return out


def min_gpus(cat: Catalog, w: Workload, gpu: str | None, method_assumed: bool = False) -> Artifact:
    """The fewest cards of a named GPU, or, with none named, the least GPU memory (one card's need) and the
    count on reference cards of 24 to 96 GiB. `method_assumed`: the question named no method, so the count for
    each other fine-tuning method is given too (`other_methods`)."""
    out = _min_gpus(cat, w, gpu)
    if method_assumed and w.method in OTHER_METHODS and out["model"].get("kind") == "decoder":
        ref = out["gpu"] or (OTHER_METHODS_GPU if any(g.id == OTHER_METHODS_GPU for g in cat.gpus) else None)
        if ref is not None:
            out["other_methods"] = other_methods(cat, w, ref)
    return out


def _in_time(cat: Catalog, w: Workload, gpu: str, needed: Artifact | None) -> tuple[Artifact | None, Artifact]:
    """With a deadline and a data size: the fewest cards that hold the job and finish in time (None: not even the
    most cards do), and the most cards' run (the time a count beyond all of them would still take)."""
    start = needed["gpus"] if needed is not None else COUNTS[-1]
    last: Artifact = needed or _sized(cat, w, gpu, COUNTS[-1])
    for n in (c for c in COUNTS if c >= start):
        out = needed if needed is not None and n == start else _sized(cat, w, gpu, n)
        if out is None or not out["fits"] or out["training_hours"] is None:
            continue
        last = out
        if out["training_hours"] <= (w.deadline_hours or 0):
            return out, out
    return None, last


def _larger_cards(cat: Catalog, w: Workload, memory_gib: float, vendor: str) -> list[Artifact]:
    """No count of the named card holds the job: the first card with more memory that does, and its count. The
    common reference cards (RTX 4090, L20, A100 80G, H20) come first, those the clouds rent before those they do not,
    each group smallest first; then the vendor's other cards the same way (what does not shard, activations above
    all, sets a floor per card that only a larger card clears)."""
    rank = {ref: i for i, ref in enumerate(REFERENCE_GPUS)}
    rented = {r.gpu for r in cat.instances if not r.stale}
    larger = sorted((g for g in cat.gpus if g.memory_gib > memory_gib and g.vendor == vendor),
                    key=lambda g: (g.id not in rank, g.id not in rented, g.memory_gib, rank.get(g.id, 0), g.id))
    for g in larger:
        needed = gpus_needed(cat, w, g.id)
        if needed is not None:
            return [{"gpu": g.id, "gpu_name": short_name(g.id), "gpu_memory_gib": g.memory_gib,
                     "gpus_needed": needed["gpus"], "per_gpu_gib": needed["memory"]["per_gpu_gib"]}]
    return []


def _min_gpus(cat: Catalog, w: Workload, gpu: str | None) -> Artifact:
    if gpu is not None:
        g, _ = resolve_gpu(gpu, cat.gpus)
        needed = gpus_needed(cat, w, g.id)
        one = _sized(cat, w, g.id, 1)
        deadline: dict[str, Any] = {}
        if w.deadline_hours and needed is not None and needed["training_hours"] is not None \
                and needed["training_hours"] > w.deadline_hours:
            # '一周内训完最少几张': the count that meets the deadline, not only the one that holds the memory
            timed, most = _in_time(cat, w, g.id, needed)
            deadline = {"deadline_hours": w.deadline_hours, "memory_gpus": needed["gpus"],
                        "memory_hours": needed["training_hours"], "deadline_met": timed is not None,
                        "most_gpus": most["gpus"], "most_hours": most["training_hours"]}
            needed = timed or needed
        shown = needed or _sized(cat, w, g.id, COUNTS[-1])
        larger = [] if needed is not None else _larger_cards(cat, w, g.memory_gib, g.vendor)
        return {**deadline, "options": larger,
            "kind": "min_gpus", "gpu": g.id, "gpu_name": short_name(g.id), "gpu_memory_gib": g.memory_gib,
            "usable_gib": usable_gib(g), "gpus_needed": None if needed is None else needed["gpus"],
            "gpu_count": None if needed is None else needed["gpus"], "fits": needed is not None,
            "per_gpu_gib": shown["memory"]["per_gpu_gib"], "memory": shown["memory"],
            "single_gpu_gib": one["memory"]["per_gpu_gib"], "strategy": shown["strategy"],
            "training_hours": shown["training_hours"], "model": shown["model"], "rent": rentals(cat, g.id),
            "form_factor": g.form_factor, "vendor": g.vendor, "assumptions": shown["assumptions"],
            "assumptions_zh": _zh_assumptions(cat, w), "workload": w.model_dump(),
        }
    refs = [r for r in REFERENCE_GPUS if any(x.id == r for x in cat.gpus)]
    one = _sized(cat, w, refs[-1], 1)
    options = []
    for ref in refs:
        needed = gpus_needed(cat, w, ref)
        g, _ = resolve_gpu(ref, cat.gpus)
        options.append({"gpu": ref, "gpu_name": short_name(g.id), "gpu_memory_gib": g.memory_gib,
                        "gpus_needed": None if needed is None else needed["gpus"],
                        "per_gpu_gib": None if needed is None else needed["memory"]["per_gpu_gib"]})
    return {
        "kind": "min_gpus", "gpu": None, "gpu_count": None, "gpus_needed": None, "fits": None,
        "single_gpu_gib": one["memory"]["per_gpu_gib"], "per_gpu_gib": one["memory"]["per_gpu_gib"],
        "min_memory_gib": round(one["memory"]["per_gpu_gib"] / CARD_USABLE["hbm"], 1), "memory": one["memory"],
        "strategy": one["strategy"], "model": one["model"], "options": options,
        "assumptions": one["assumptions"], "assumptions_zh": _zh_assumptions(cat, w), "workload": w.model_dump(),
    }
