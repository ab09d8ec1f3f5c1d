"""Choose how a job runs on one instance type: method, ZeRO stage, offload, checkpointing, nodes."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from service.catalog.schema import GpuSpec, InstanceRow
from service.planner.resolve import Job
from service.sizing.memory import estimate_memory
from service.sizing.types import MemoryBreakdown, TrainSetup
from service.workload import Workload

HEADROOM = 0.92  # plan to use at most 92 % of GPU memory: spikes, allocator, driver reserve
HOST_RAM_USABLE = 0.85
NODE_STEPS = (1, 2, 4, 8, 16, 32, 64)
OFFLOAD_SLOWDOWN = {"none": 1.0, "optimizer": 1.5, "all": 3.0}  # estimates: PCIe-bound CPU Adam / param swaps


@dataclass(frozen=True)
class Strategy:
    setup: TrainSetup
    gpus_per_node: int
    nodes: int
    gpu_fraction: float  # < 1 for vGPU slices

    @property
    def total_gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    def label(self) -> str:
        s = self.setup
        parts = [{"full": "Full fine-tune", "pretrain": "Pre-training", "freeze": "Freeze (last layers)",
                  "lora": f"LoRA r{s.lora_rank}", "qlora": f"QLoRA {s.quant_bits or 4}-bit r{s.lora_rank}"}[s.method]]
        if self.total_gpus > 1:
            parts.append(f"ZeRO-{s.zero_stage}" if s.zero_stage else "DDP")
        if s.offload != "none":
            parts.append(f"offload {s.offload} to CPU")
        parts.append("grad checkpointing" if s.grad_ckpt else "no checkpointing")
        parts.append("BF16" if s.precision in ("bf16", "pure_bf16") else s.precision.upper())
        if self.nodes > 1:
            parts.append(f"{self.nodes} nodes")
        return " + ".join(parts)

    def as_dict(self) -> dict[str, object]:
        s = self.setup
        return {
            "label": self.label(), "method": s.method, "quant_bits": s.quant_bits, "zero_stage": s.zero_stage,
            "offload": s.offload, "grad_ckpt": s.grad_ckpt, "precision": s.precision,
            "micro_batch": s.micro_batch, "seq_len": s.seq_len,
            "lora_rank": s.lora_rank if s.method in ("lora", "qlora") else None,
            "gpus_per_node": self.gpus_per_node, "nodes": self.nodes, "deepspeed": s.zero_stage > 0,
        }


@dataclass(frozen=True)
class Fit:
    strategy: Strategy
    memory: MemoryBreakdown
    slowdown: float


@dataclass(frozen=True)
class NoFit:
    reason: str
    closest_gib: float  # smallest per-GPU need seen


def base_setup(job: Job, w: Workload, gpu: GpuSpec) -> TrainSetup:
    kind = job.model.kind
    default_mb = {"cnn": 32, "vision_transformer": 32, "diffusion": 1, "encoder": 16}.get(kind, 1)
    precision = "bf16" if gpu.supports_bf16 else ("fp32" if gpu.arch == "pascal" else "fp16")
    return TrainSetup(
        method=job.method,  # type: ignore[arg-type]
        quant_bits=job.quant_bits,
        precision=precision,  # type: ignore[arg-type]
        seq_len=job.seq_len,
        micro_batch=w.micro_batch or default_mb,
        grad_ckpt=w.grad_ckpt if w.grad_ckpt is not None else True,
        lora_rank=w.lora_rank or 8,
    )


def _variants(base: TrainSetup, n: int, w: Workload) -> Iterator[TrainSetup]:
    """Setups from fastest to most memory-frugal; user-fixed knobs are kept."""
    ckpts = [w.grad_ckpt] if w.grad_ckpt is not None else [False, True]
    sharded = base.method in ("full", "pretrain", "freeze")
    stages: list[int]
    if w.zero_stage is not None:
        stages = [w.zero_stage]
    elif n == 1:
        stages = [0]
    else:
        stages = [2, 3] if sharded else [0, 3]
    offloads = ["none", "optimizer", "all"] if sharded else ["none"]
    for off in offloads:
        stage_list = stages
        if n == 1 and w.zero_stage is None:
            stage_list = [{"none": 0, "optimizer": 2, "all": 3}[off]]  # DeepSpeed ZeRO-Offload on one GPU
        for stage in stage_list:
            if off == "all" and stage < 3 or off == "optimizer" and n > 1 and stage < 2:
                continue
            for ck in ckpts:
                yield replace(base, n_gpus=n, zero_stage=stage, offload=off, grad_ckpt=ck)  # type: ignore[arg-type]


def _fits(mem: MemoryBreakdown, gpu_mem_gib: float, host_ram_gib: float, nodes: int) -> bool:
    return (mem.per_gpu_gib <= HEADROOM * gpu_mem_gib
            and mem.host_ram_gib / nodes <= HOST_RAM_USABLE * host_ram_gib)


def choose(job: Job, w: Workload, gpu: GpuSpec, inst: InstanceRow) -> Fit | NoFit:
    per_node = max(1, math.floor(inst.gpu_count))
    fraction = min(1.0, inst.gpu_count)
    base = base_setup(job, w, gpu)
    closest = math.inf
    node_steps = [1] if inst.is_slice else list(NODE_STEPS)
    if w.gpu_count is not None:
        if w.gpu_count % per_node:
            return NoFit(f"has {per_node} GPUs per node; {w.gpu_count} GPUs is not a whole number of nodes",
                         math.inf)
        node_steps = [w.gpu_count // per_node]
    for nodes in node_steps:
        if nodes > 1 and job.method in ("lora", "qlora") and w.gpu_count is None:
            break  # adapters do not shard across nodes usefully; a bigger GPU is the answer
        for setup in _variants(base, per_node * nodes, w):
            if nodes > 1 and setup.zero_stage < 3:
                continue
            mem = estimate_memory(job.model, setup)
            closest = min(closest, mem.per_gpu_gib)
            if _fits(mem, inst.gpu_memory_gib, inst.memory_gib, nodes):
                strat = Strategy(setup, per_node, nodes, fraction)
                return Fit(strat, mem, OFFLOAD_SLOWDOWN[setup.offload])
    where = f"{per_node}x {gpu.id} ({inst.gpu_memory_gib:g} GiB each)"
    return NoFit(f"needs {closest:.1f} GiB per GPU at best on {where}, over the "
                 f"{HEADROOM * inst.gpu_memory_gib:.1f} GiB usable", closest)
