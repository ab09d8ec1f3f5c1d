"""Plan-level advice: storage, NUMA, budget and deadline summaries, and what would make a job feasible."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from service.planner.candidate import Candidate, PlanResult
from service.planner.resolve import Job
from service.sizing.host import Note, numa_advice, storage_advice
from service.workload import Workload

MAX_NODES = 1_000_000  # more nodes than any cloud has: no count is named (a deadline of seconds)


def _fmt_cny(x: float) -> str:
    return f"¥{x:,.0f}"


def plan_notes(w: Workload, job: Job, ranked: Sequence[Candidate],
               options: Sequence[Candidate] = ()) -> list[Note]:
    notes = [storage_advice(w.dataset_gb), numa_advice()]
    if not ranked:
        return notes
    priced = [(c, c.cost) for c in ranked if c.cost is not None]
    if w.budget_cny is not None and priced and not any(c.within_budget for c in ranked):
        cheapest, cost = min(priced, key=lambda cc: cc[1].monthly_cny if w.budget_period == "month"
                             else cc[1].total_cny)
        spend = cost.monthly_cny if w.budget_period == "month" else cost.total_cny
        per = "per month" if w.budget_period == "month" else "in total"
        per_zh = "每月" if w.budget_period == "month" else "总计"
        notes.append(Note(
            "over_budget",
            f"No option fits the budget of {_fmt_cny(w.budget_cny)} {per}: the cheapest, "
            f"{cheapest.inst.instance_type}, costs {_fmt_cny(spend)} {per}. Raise the budget, use QLoRA, "
            "shorten the data or epochs, or accept a longer run on cheaper cards.",
            f"没有方案满足{per_zh} {_fmt_cny(w.budget_cny)} 的预算：最便宜的 {cheapest.inst.instance_type} "
            f"{per_zh}需 {_fmt_cny(spend)}。可提高预算、改用 QLoRA、减少数据量或轮数。",
        ))
    if w.deadline_hours is not None and not any(c.meets_deadline for c in (*ranked, *options)):
        notes.append(_deadline_note(w.deadline_hours, [*ranked, *options]))
    return notes


def _deadline_note(deadline: float, cands: Sequence[Candidate]) -> Note:
    """Misses the deadline: the fastest option, and how many GPUs of the kind with the best scaled rate would
    meet it (GPU-hours of its largest sized cluster spread over more whole nodes, at the same per-GPU rate)."""
    fastest = min(cands, key=lambda c: c.hours)
    multi = [c for c in cands if c.strategy.nodes > 1] or list(cands)
    best = min(multi, key=lambda c: c.hours * c.strategy.total_gpus)
    per_node = best.strategy.gpus_per_node
    need = best.hours * best.strategy.total_gpus / max(deadline, 1e-9) / per_node
    if not math.isfinite(need) or need > MAX_NODES:  # a deadline of seconds: no cluster count is worth naming
        return Note(
            "misses_deadline",
            f"No option finishes within {deadline:g} h: the fastest, {fastest.inst.instance_type} "
            f"({fastest.strategy.total_gpus}x {fastest.gpu.id}), needs {fastest.hours:.1f} h, and no cluster a cloud "
            "rents would be fast enough. Allow more time, or use fewer epochs or LoRA.",
            f"没有方案能在 {deadline:g} 小时内完成：最快的 {fastest.inst.instance_type}"
            f"（{fastest.strategy.total_gpus} 卡 {fastest.gpu.id}）需 {fastest.hours:.1f} 小时，云上可租的集群都达不到。"
            "请放宽期限，或减少轮数、改用 LoRA。",
        )
    nodes = math.ceil(need)
    gpus = nodes * per_node
    return Note(
        "misses_deadline",
        f"No option finishes within {deadline:g} h: the fastest, {fastest.inst.instance_type} "
        f"({fastest.strategy.total_gpus}x {fastest.gpu.id}), needs {fastest.hours:.1f} h. About {gpus}x "
        f"{best.gpu.id} ({nodes} nodes of {best.inst.instance_type}) would meet it at the same per-GPU rate, "
        "if the cloud sells that many; or use fewer epochs or LoRA.",
        f"没有方案能在 {deadline:g} 小时内完成：最快的 {fastest.inst.instance_type}"
        f"（{fastest.strategy.total_gpus} 卡 {fastest.gpu.id}）需 {fastest.hours:.1f} 小时。按相同的单卡速度，约需 "
        f"{gpus} 卡 {best.gpu.id}（{nodes} 台 {best.inst.instance_type}）才能按时完成（需确认云厂商可售数量）；"
        "或减少轮数、改用 LoRA。",
    )


_LIGHTER = {"pretrain": ("lora", None), "full": ("lora", None), "freeze": ("lora", None),
            "lora": ("qlora", 4), "qlora": ("qlora", 4)}


def infeasible_hint(w: Workload, rerun: Callable[[Workload], PlanResult]) -> tuple[str, str]:
    """(English, Chinese): what would make an infeasible workload feasible: a lighter method, fewer filters."""
    candidates: list[dict[str, Any]] = []
    method, bits = _LIGHTER[w.method]
    if (method, bits) != (w.method, w.quant_bits):
        candidates.append({"method": method, "quant_bits": bits})
    if method == "lora":
        candidates.append({"method": "qlora", "quant_bits": 4})
    if w.gpu_include or w.gpu_exclude or w.gpu_count or w.clouds:
        candidates.append({"gpu_include": [], "gpu_exclude": [], "gpu_count": None, "clouds": []})
    for change in candidates:
        result = rerun(w.model_copy(update=change))
        if result.candidates:
            top = result.candidates[0]
            what = ", ".join(f"{k}={v}" for k, v in change.items() if v not in (None, [])) or "without your filters"
            what_zh = _change_zh(change)
            cost, cost_zh = ((_fmt_cny(top.cost.total_cny),) * 2 if top.cost is not None
                             else ("price on request", "价格需询价"))
            pick = f"{top.inst.instance_type} ({top.gpu.id} x{top.inst.gpu_count:g}, {{label}}), {top.hours:.1f} h, {{cost}}"
            return (f"Nothing in the catalog runs this as asked. With {what} it fits: "
                    + pick.format(label=top.strategy.label(), cost=cost) + ".",
                    f"按当前条件目录中没有可行方案。改为 {what_zh} 即可："
                    + pick.format(label=top.strategy.label_zh(), cost=cost_zh) + "。")
    return ("Nothing in the catalog runs this workload, even with a lighter method. Reduce the sequence length "
            "or micro-batch, or choose a smaller model.",
            "即使换用更省显存的方法，目录中也没有可行方案。请缩短序列长度或 micro-batch，或选择更小的模型。")


_METHOD_ZH = {"full": "全参微调", "lora": "LoRA", "qlora": "QLoRA", "freeze": "冻结微调", "pretrain": "预训练"}


def _change_zh(change: dict[str, Any]) -> str:
    """A lighter setup in words: "QLoRA（4-bit 量化）", "去掉 GPU/云厂商筛选条件"."""
    if "method" not in change:
        return "去掉 GPU/云厂商筛选条件"
    method = _METHOD_ZH.get(str(change["method"]), str(change["method"]))
    bits = change.get("quant_bits")
    return f"{method}（{bits}-bit 量化）" if bits else method
