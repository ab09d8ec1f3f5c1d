"""Workload x catalog -> feasible candidates per cloud, costed and ranked; rejected options keep their reason."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import date

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.catalog.schema import GpuSpec, InstanceRow
from service.labels import confidence_label
from service.planner.advice import infeasible_hint, plan_notes
from service.planner.costing import (
    QUOTE_LINKS,
    CostLine,
    Quote,
    budget_verdict,
    choose_billing,
    cost_lines,
    deadline_verdict,
    price_dict,
    price_notes,
    quote,
    quote_notes,
)
from service.planner.resolve import Job, resolve_job
from service.planner.strategy import Fit, NoFit, Strategy, choose
from service.sizing.compute import scaling_efficiency, training_time
from service.sizing.host import RAM_PER_GPU_MEMORY, VCPU_PER_GPU, Note, gpu_notes, host_notes
from service.sizing.types import MemoryBreakdown, TimeEstimate
from service.workload import Workload


@dataclass(frozen=True)
class Candidate:
    inst: InstanceRow
    gpu: GpuSpec
    strategy: Strategy
    memory: MemoryBreakdown
    time: TimeEstimate
    hours: float
    cost: CostLine | None  # None: price on request (no public price); see quote
    costs: dict[str, CostLine]
    within_budget: bool | None
    meets_deadline: bool | None
    warnings: tuple[Note, ...]
    quote: Quote | None = None

    @property
    def ok(self) -> bool:
        return self.within_budget is not False and self.meets_deadline is not False

    @property
    def priced(self) -> bool:
        return self.cost is not None

    @property
    def total_cny(self) -> float:
        """The job's cost; infinite when the price is on request (sorts after every priced option)."""
        return self.cost.total_cny if self.cost is not None else math.inf

    def host_check(self) -> dict[str, object]:
        """The host rules (>= 8 vCPU per GPU, RAM >= 2x GPU memory) and the GPU interconnect of this pick."""
        i, g = self.inst, self.gpu
        gpus = max(1.0, i.gpu_count)
        link = f"NVLink {g.nvlink_gb_s:g} GB/s" if g.nvlink_gb_s else f"PCIe Gen{g.pcie_gen}"
        return {"vcpu_per_gpu": round(i.vcpus / gpus, 1), "vcpu_ok": i.vcpus >= VCPU_PER_GPU * gpus,
                "ram_recommended_gib": round(RAM_PER_GPU_MEMORY * i.gpu_count * i.gpu_memory_gib),
                "ram_ok": i.memory_gib >= RAM_PER_GPU_MEMORY * i.gpu_count * i.gpu_memory_gib,
                "interconnect": link, "rdma": i.rdma, "nodes": self.strategy.nodes}

    def as_dict(self) -> dict[str, object]:
        i = self.inst
        return {
            "cloud": i.cloud, "instance_type": i.instance_type, "family": i.family, "gpu": self.gpu.id,
            "gpu_name": self.gpu.name, "gpu_count": i.gpu_count, "nodes": self.strategy.nodes,
            "vcpus": i.vcpus, "memory_gib": i.memory_gib, "rdma": i.rdma, "sale_status": i.sale_status,
            "instance_source": i.source, "instance_confidence": i.confidence,
            "strategy": self.strategy.as_dict(),
            "memory_per_gpu_gib": round(self.memory.per_gpu_gib, 2), "memory": self.memory.as_dict(),
            "host_ram_needed_gib": round(self.memory.host_ram_gib, 1),
            "gpu_memory_gib": i.gpu_memory_gib,
            "training_hours": round(self.hours, 2),
            "throughput_tokens_per_s": round(self.time.throughput_tokens_per_s, 1),
            "mfu": self.time.mfu.value, "mfu_source": self.time.mfu.source,
            "flops_per_token": self.time.flops_per_token, "work_units": self.time.tokens_total,
            "peak_tflops": self.gpu.dense_16bit_tflops, "total_gpus": self.strategy.total_gpus,
            "slowdown": round(self.hours / self.time.hours, 3) if self.time.hours else 1.0,
            "scaling_efficiency": round(self.time.scaling_efficiency, 3),
            "cost_cny": {b: c.as_dict() for b, c in self.costs.items()},
            **self._cost_fields(),
            "host": self.host_check(),
            "within_budget": self.within_budget, "meets_deadline": self.meets_deadline,
            "warnings": [n.as_dict() for n in self.warnings],
        }

    def _cost_fields(self) -> dict[str, object]:
        c = self.cost
        if c is None:
            q = self.quote
            return {"billing": "on_request", "total_cost_cny": None, "monthly_cost_cny": None, "price": None,
                    "price_on_request": True, "quote": q.as_dict() if q is not None else None,
                    "quote_link": q.link if q is not None else QUOTE_LINKS[self.inst.cloud]}
        return {"billing": c.billing, "total_cost_cny": round(c.total_cny, 2),
                "monthly_cost_cny": round(c.monthly_cny, 2), "price": price_dict(c.price),
                "price_on_request": False, "quote_link": QUOTE_LINKS[self.inst.cloud]}


@dataclass(frozen=True)
class PlanResult:
    workload: Workload
    job: Job
    candidates: tuple[Candidate, ...]
    rejected: tuple[tuple[str, str], ...]
    assumptions: tuple[str, ...]
    notes: tuple[Note, ...] = field(default=())
    infeasible: str = ""
    infeasible_zh: str = ""

    def picks(self) -> dict[str, Candidate]:
        out: dict[str, Candidate] = {}
        for c in self.candidates:
            out.setdefault(c.inst.cloud, c)
        return out

    def alternatives(self) -> dict[str, Candidate]:
        if not self.candidates:
            return {}
        top = self.candidates[0]
        out: dict[str, Candidate] = {}
        # Alternatives trade cost against time, so they come from priced options only.
        cheaper = [c for c in self.candidates if c.priced and c.total_cny < top.total_cny - 0.5]
        faster = [c for c in self.candidates if c.priced and c.hours < top.hours * 0.95]
        if cheaper:
            out["cheaper"] = min(cheaper, key=lambda c: (c.total_cny, c.hours))
        if faster:
            out["faster"] = min(faster, key=lambda c: (c.hours, c.total_cny))
        return out


def _gpu_filter(w: Workload, cat: Catalog) -> tuple[set[str], set[str], list[str]]:
    notes: list[str] = []
    include, exclude = set(), set()
    for name in w.gpu_include:
        g, note = resolve_gpu(name, cat.gpus)
        include |= _family_ids(g, cat)
        notes += [note] if note else []
    for name in w.gpu_exclude:
        g, _ = resolve_gpu(name, cat.gpus)
        exclude |= _family_ids(g, cat)
    return include, exclude, notes


def _family_ids(g: GpuSpec, cat: Catalog) -> set[str]:
    """'A100' as a filter means every A100 form factor the clouds sell, not only the default one."""
    stem = g.id.split("-")[0]
    return {x.id for x in cat.gpus if x.id.split("-")[0] == stem}


def _candidate(job: Job, w: Workload, cat: Catalog, inst: InstanceRow, gpu: GpuSpec, fit: Fit,
               today: date, max_age: int) -> Candidate | str:
    s = fit.strategy
    scaling = scaling_efficiency(gpu, s.gpus_per_node, s.nodes, s.setup.zero_stage, inst.rdma)
    trainable_fraction = fit.memory.trainable_params / max(1.0, job.model.params_published_b * 1e9)
    time_setup = replace(s.setup, seq_len=job.avg_seq_len)
    t = training_time(job.model, gpu, time_setup, job.tokens_total, s.total_gpus, scaling,
                      trainable_fraction, s.gpu_fraction, job.samples_total)
    hours = t.hours * fit.slowdown
    lines = cost_lines(inst, s.nodes, hours, cat.prices)
    line, bill_notes = choose_billing(lines, w.billing)
    q: Quote | None = None
    if line is None:  # price on request: sized and timed like any other, never dropped
        q = quote(inst, s.nodes, hours, cat.prices)
        warnings = quote_notes(q, inst)
    else:
        warnings = [*bill_notes, *price_notes(line, inst.cloud, today, max_age)]
    warnings += gpu_notes(gpu, s.gpus_per_node, s.nodes, inst.rdma)
    warnings += host_notes(inst.vcpus, inst.memory_gib, inst.gpu_count, inst.gpu_memory_gib)
    if inst.is_slice:
        warnings.append(Note("vgpu_slice", "A vGPU slice shares one physical card: throughput is not guaranteed.",
                             "vGPU 切片与他人共享一张物理卡，性能无保障。"))
    if inst.sale_status in ("allowlist", "invite_only", "sold_out", "limited"):
        warnings.append(Note("sale_status", f"{inst.family} is {inst.sale_status.replace('_', ' ')}: ask sales / "
                             "open a ticket before you plan on it.",
                             f"{inst.family} 当前为{_STATUS_ZH[inst.sale_status]}，请先联系售前或提交工单确认资源。"))
    if inst.confidence != "official":
        warnings.append(Note("instance_unverified", f"{inst.instance_type}'s specs come from "
                             f"{confidence_label(inst.confidence, 'en')} sources; confirm them in the console.",
                             f"{inst.instance_type} 的规格来自{confidence_label(inst.confidence, 'zh')}来源，"
                             "请在控制台确认。", "info"))
    return Candidate(inst, gpu, s, fit.memory, t, hours, line, lines,
                     None if line is None else budget_verdict(line, w.budget_cny, w.budget_period),
                     deadline_verdict(hours, w.deadline_hours), tuple(warnings), q)


_STATUS_ZH = {"allowlist": "白名单售卖", "invite_only": "邀测", "sold_out": "售罄", "limited": "限量"}


def _rank(cands: list[Candidate], objective: str) -> list[Candidate]:
    if not cands:
        return cands
    min_cost = min((c.total_cny for c in cands if c.priced), default=1.0) or 1.0
    min_hours = min(c.hours for c in cands) or 1e-6

    # Price-on-request candidates rank normally for fastest and after every priced one otherwise.
    def key(c: Candidate) -> tuple[bool, bool, float, float]:
        if objective == "fastest":
            return (False, not c.ok, c.hours, c.total_cny)
        if objective == "balanced" and c.priced:
            score = math.log(c.total_cny / min_cost + 1e-9) + math.log(c.hours / min_hours + 1e-9)
            return (False, not c.ok, score, c.total_cny)
        return (not c.priced, not c.ok, c.total_cny, c.hours)

    return sorted(cands, key=key)


def plan(w: Workload, cat: Catalog, today: date | None = None, max_price_age_days: int = 180) -> PlanResult:
    """Every instance on the chosen clouds, sized, timed, costed and ranked by the objective."""
    today = today or date.today()
    job = resolve_job(w, cat.models)
    include, exclude, filter_notes = _gpu_filter(w, cat)
    gpus = {g.id: g for g in cat.gpus}
    cands: list[Candidate] = []
    rejected: list[tuple[str, str]] = []
    for inst in cat.instances:
        if w.clouds and inst.cloud not in w.clouds:
            continue
        if (include and inst.gpu not in include) or inst.gpu in exclude:
            rejected.append((inst.instance_type, f"{inst.gpu} excluded by your GPU filter"))
            continue
        if w.gpu_count is not None and inst.gpu_count < 1:
            continue
        gpu = gpus[inst.gpu]
        fit = choose(job, w, gpu, inst)
        if isinstance(fit, NoFit):
            rejected.append((inst.instance_type, fit.reason))
            continue
        cand = _candidate(job, w, cat, inst, gpu, fit, today, max_price_age_days)
        if isinstance(cand, str):
            rejected.append((inst.instance_type, cand))
        else:
            cands.append(cand)
    ranked = _rank(cands, w.objective)
    assumptions = (*filter_notes, *job.assumptions)
    hint, hint_zh = ("", "") if ranked else infeasible_hint(w, lambda alt: plan(alt, cat, today, max_price_age_days))
    return PlanResult(w, job, tuple(ranked), tuple(rejected), tuple(assumptions),
                      tuple(plan_notes(w, job, ranked)), hint, hint_zh)
