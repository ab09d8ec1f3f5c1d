"""The planner's result types: one sized, timed and costed option, the frontier of cluster sizes, the plan."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from service.catalog.schema import GpuSpec, InstanceRow
from service.planner.costing import QUOTE_LINKS, CostLine, Quote, price_dict
from service.planner.resolve import Job
from service.planner.strategy import Strategy
from service.sizing.expected_error import time_error_fields
from service.sizing.host import RAM_PER_GPU_MEMORY, VCPU_PER_GPU, Note
from service.sizing.types import MemoryBreakdown, TimeEstimate
from service.sizing.verdict import Verdict, card_capacity_gib, fit_verdict
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
    room: dict[str, object] | None = None  # when tight: the setting that gives room (service/planner/room.py)

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
        # None where the instance's vCPU or RAM is not published (unknown, never guessed)
        return {"vcpu_per_gpu": None if i.vcpus is None else round(i.vcpus / gpus, 1),
                "vcpu_ok": None if i.vcpus is None else i.vcpus >= VCPU_PER_GPU * gpus,
                "ram_recommended_gib": round(RAM_PER_GPU_MEMORY * i.gpu_count * i.gpu_memory_gib),
                "ram_ok": None if i.memory_gib is None else
                i.memory_gib >= RAM_PER_GPU_MEMORY * i.gpu_count * i.gpu_memory_gib,
                "interconnect": link, "rdma": i.rdma, "nodes": self.strategy.nodes}

    def verdict(self) -> Verdict:
        """The fit on the instance's own GPU memory (a vGPU slice offers less than the card)."""
        share = card_capacity_gib(self.gpu) / self.gpu.memory_gib
        return fit_verdict(self.memory.per_gpu_gib, self.inst.gpu_memory_gib * share, self.memory.expected_error)

    def as_dict(self) -> dict[str, object]:
        i = self.inst
        return {
            "cloud": i.cloud, "instance_type": i.instance_type, "family": i.family, "gpu": self.gpu.id,
            "gpu_name": self.gpu.name, "gpu_count": i.gpu_count, "nodes": self.strategy.nodes,
            "vcpus": i.vcpus, "memory_gib": i.memory_gib, "rdma": i.rdma, "sale_status": i.sale_status,
            "instance_source": i.source, "instance_confidence": i.confidence,
            "strategy": self.strategy.as_dict(),
            "memory_per_gpu_gib": round(self.memory.per_gpu_gib, 2), "memory": self.memory.as_dict(),
            "memory_verdict": {**self.verdict().as_dict(), "room": self.room},
            "host_ram_needed_gib": round(self.memory.host_ram_gib, 1),
            "gpu_memory_gib": i.gpu_memory_gib,
            "training_hours": round(self.hours, 2),
            **self.rate_per_1e8(),
            "throughput_tokens_per_s": round(self.time.throughput_tokens_per_s, 1),
            "mfu": self.time.mfu.value, "mfu_source": self.time.mfu.source,
            "flops_per_token": self.time.flops_per_token, "work_units": self.time.tokens_total,
            "peak_tflops": self.gpu.dense_16bit_tflops, "total_gpus": self.strategy.total_gpus,
            "slowdown": self.time.offload_slowdown,
            "scaling_efficiency": round(self.time.scaling_efficiency, 3),
            **time_error_fields(self.time),
            "cost_cny": {b: c.as_dict() for b, c in self.costs.items()},
            **self._cost_fields(),
            "host": self.host_check(),
            "within_budget": self.within_budget, "meets_deadline": self.meets_deadline,
            "warnings": [n.as_dict() for n in self.warnings],
        }

    def rate_per_1e8(self) -> dict[str, float | None]:
        """Hours and yuan per 1e8 tokens on this configuration: what scales to any data size (the job's figures
        divided by its tokens; yuan at the chosen billing's cost of these hours, null when priced on request)."""
        tokens = self.time.tokens_total
        if tokens <= 0 or not math.isfinite(self.hours):
            return {"hours_per_1e8_tokens": None, "cny_per_1e8_tokens": None}
        scale = 1e8 / tokens
        cny = None if self.cost is None else round(self.cost.total_cny * scale, 2)
        return {"hours_per_1e8_tokens": round(self.hours * scale, 3), "cny_per_1e8_tokens": cny}

    def _cost_fields(self) -> dict[str, object]:
        c = self.cost
        if c is None:
            q = self.quote
            return {"billing": "on_request", "total_cost_cny": None, "monthly_cost_cny": None, "price": None,
                    "price_on_request": True, "quote": q.as_dict() if q is not None else None,
                    "quote_link": q.link if q is not None else QUOTE_LINKS[self.inst.cloud]}
        return {"billing": c.billing, "total_cost_cny": round(c.total_cny, 2),
                "monthly_cost_cny": round(c.monthly_cny, 2), "price": price_dict(c.price),
                "price_on_request": False, "quote": None, "quote_link": QUOTE_LINKS[self.inst.cloud]}


@dataclass(frozen=True)
class FrontierPoint:
    """One cluster size of an instance family: what it takes and whether it meets the deadline and budget
    (cost_cny None: price on request)."""

    instance_type: str
    nodes: int
    total_gpus: int
    hours: float
    cost_cny: float | None
    meets_deadline: bool | None
    within_budget: bool | None
    slower_than_fewer_gpus: bool = False  # marked: a smaller cluster of the family is faster (weaker links)

    def as_dict(self) -> dict[str, object]:
        return {"instance_type": self.instance_type, "nodes": self.nodes, "total_gpus": self.total_gpus,
                "hours": round(self.hours, 2),
                "cost_cny": None if self.cost_cny is None else round(self.cost_cny, 2),
                "meets_deadline": self.meets_deadline, "within_budget": self.within_budget,
                "slower_than_fewer_gpus": self.slower_than_fewer_gpus}


def mark_slower(points: list[FrontierPoint]) -> tuple[FrontierPoint, ...]:
    """Points sorted by GPU count, each marked when a smaller cluster of the family is at least as fast."""
    out: list[FrontierPoint] = []
    best = float("inf")
    for p in sorted(points, key=lambda x: x.total_gpus):
        out.append(replace(p, slower_than_fewer_gpus=True) if p.hours >= best else p)
        best = min(best, p.hours)
    return tuple(out)


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
    frontier: dict[str, tuple[FrontierPoint, ...]] = field(default_factory=dict)
    options: tuple[Candidate, ...] = field(default=())  # every sized cluster (all node counts), unranked
    settings_notes: tuple[tuple[str, str], ...] = field(default=())  # framework defaults assumed, (en, zh)

    def fastest_within_budget(self) -> Candidate | None:
        fits = [c for c in self.options if c.within_budget is not False]
        return min(fits, key=lambda c: (c.hours, c.total_cny)) if fits else None

    def cheapest_within_deadline(self) -> Candidate | None:
        fits = [c for c in self.options if c.meets_deadline is not False and c.priced]
        return min(fits, key=lambda c: (c.total_cny, c.hours)) if fits else None

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
