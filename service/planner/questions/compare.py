"""Comparisons and savings: the planner run once per option (or before and after a change), side by side.

Every figure is the planner's (`service.planner.plan`) or, for a GPU no cloud here prices, the estimate's on
the fewest cards that fit (time and fit, no price). The winner is the cheapest priced option that fits, or the
fastest when the question asks for speed.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.errors import InvalidInputError
from service.planner.questions.fit import gpus_needed
from service.workload import BillingChoice, CloudName, Method, Workload

Artifact = dict[str, Any]
Kind = Literal["gpu", "cloud", "method", "billing"]


def run_plan(cat: Catalog, w: Workload, max_age: int) -> Artifact:
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict

    return plan_to_dict(plan(w, cat, max_price_age_days=max_age), max_candidates=5)


def _top(p: Artifact) -> Artifact | None:
    cands = p.get("candidates") or []
    return cands[0] if cands else None


def plan_row(option: str, p: Artifact) -> Artifact:
    c = _top(p)
    if c is None:
        return {"option": option, "fits": False, "priced": False, "hours": None, "cost_cny": None,
                "instance_type": None, "cloud": None, "gpu": None, "gpu_count": None, "billing": "",
                "reason": p.get("infeasible") or "", "reason_zh": p.get("infeasible_zh") or ""}
    return {"option": option, "fits": True, "priced": c["total_cost_cny"] is not None, "hours": c["training_hours"],
            "cost_cny": c["total_cost_cny"], "instance_type": c["instance_type"], "cloud": c["cloud"],
            "gpu": c["gpu"], "gpu_count": c["total_gpus"], "billing": c["billing"],
            "per_gpu_gib": c["memory_per_gpu_gib"], "gpu_memory_gib": c["gpu_memory_gib"],
            "strategy": c["strategy"]["label"], "strategy_zh": c["strategy"].get("label_zh", "")}


def _gpu_row(cat: Catalog, w: Workload, gpu: str, max_age: int) -> Artifact:
    row = plan_row(gpu, run_plan(cat, w.model_copy(update={"gpu_include": [gpu], "gpu_count": None}), max_age))
    if row["fits"]:
        return row
    needed = gpus_needed(cat, w.model_copy(update={"gpu_include": [], "gpu_count": None}), gpu)
    if needed is None:
        return row
    return {**row, "fits": True, "priced": False, "hours": needed["training_hours"], "gpu": gpu,
            "gpu_count": needed["gpus"], "per_gpu_gib": needed["memory"]["per_gpu_gib"],
            "gpu_memory_gib": needed["gpu_memory_gib"]}


def compare(cat: Catalog, w: Workload, kind: Kind, options: list[str], by: Literal["cost", "hours"] = "cost",
            max_age: int = 180) -> Artifact:
    """The options side by side and the winner: by cost when every option that fits has a price; otherwise by
    time, per card for GPUs (GPU-hours: the plans pick different counts), saying a price was missing."""
    allowed = {"cloud": get_args(CloudName), "billing": get_args(BillingChoice), "method": get_args(Method)}.get(kind)
    wrong = [o for o in options if allowed is not None and o not in allowed]
    if wrong and allowed is not None:  # 'tencent' as a method was a KeyError (a 500), 'A100' as a cloud no plan
        raise InvalidInputError(f"options: {', '.join(map(repr, wrong))} is not a {kind} (compare_kind {kind} "
                                f"compares {', '.join(allowed)}).", "Give options of the kind compared, or change "
                                "compare_kind (gpu, cloud, method, billing).")
    rows: list[Artifact] = []
    for opt in options:
        if kind == "gpu":
            gid = resolve_gpu(opt, cat.gpus)[0].id
            rows.append(_gpu_row(cat, w, gid, max_age))
            continue
        updates: dict[str, dict[str, Any]] = {
            "cloud": {"clouds": [opt]}, "billing": {"billing": opt},
            "method": {"method": opt, "quant_bits": 4 if opt == "qlora" else None}}
        update = updates[kind]
        rows.append(plan_row(opt, run_plan(cat, w.model_copy(update=update), max_age)))
    fitting = [r for r in rows if r["fits"]]
    for r in fitting:
        r["card_hours"] = r["hours"] * r["gpu_count"] if r["hours"] is not None and r["gpu_count"] else None
    priced = [r for r in fitting if r["priced"]]
    unpriced = [r["option"] for r in fitting if not r["priced"]]
    cost_unknown = by == "cost" and bool(unpriced)  # 'which is better value' with a price missing: said first
    ranked: str = by
    if by == "cost" and priced and not unpriced:
        winner = min(priced, key=lambda r: (r["cost_cny"], r["hours"]))
    elif fitting and kind == "gpu" and all(r["card_hours"] for r in fitting):
        # GPUs against each other: per card (the plans pick different counts: 8 x L20 against one 4090)
        ranked = "card_hours"
        winner = min(fitting, key=lambda r: (r["card_hours"], r["cost_cny"] or 0))
    elif fitting:
        ranked = "hours"
        winner = min(fitting, key=lambda r: (r["hours"], r["cost_cny"] or 0))
    else:
        winner = None
    return {"kind": "compare", "compare_kind": kind, "by": ranked, "comparison": rows, "winner": None if winner is None else winner["option"],
            "unpriced": unpriced, "cost_unknown": cost_unknown, "workload": w.model_dump()}


def savings(cat: Catalog, before: Workload, after: Workload, max_age: int = 180) -> Artifact:
    """Both plans' picks and the difference (after - before): negative cost = a saving."""
    a, b = plan_row("before", run_plan(cat, before, max_age)), plan_row("after", run_plan(cat, after, max_age))
    changed = {k: v for k, v in after.model_dump().items() if before.model_dump().get(k) != v}
    delta = None if not (a["priced"] and b["priced"]) else round(b["cost_cny"] - a["cost_cny"], 2)
    hours = None if a["hours"] is None or b["hours"] is None else round(b["hours"] - a["hours"], 2)
    return {"kind": "savings", "before": a, "after": b, "changed": changed, "delta_cny": delta,
            "delta_hours": hours, "saving_cny": None if delta is None else -delta,
            "workload": after.model_dump(), "before_workload": before.model_dump()}
