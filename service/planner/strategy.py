"""Choose how a job runs on one instance type: method, ZeRO stage, offload, checkpointing, nodes."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from service.catalog.schema import GpuSpec, InstanceRow, ModelSpec
from service.planner import settings as training_settings
from service.planner.resolve import Job
from service.sizing.comm import interconnect
from service.sizing.memory import estimate_memory
from service.sizing.throughput import OFFLOAD_SLOWDOWN as OFFLOAD_SLOWDOWN  # re-exported for the documents
from service.sizing.types import MemoryBreakdown, Offload, TrainSetup
from service.workload import Workload

HEADROOM = 0.92  # plan to use at most 92 % of GPU memory: spikes, allocator, driver reserve
HOST_RAM_USABLE = 0.85
NODE_STEPS = (1, 2, 4, 8, 16, 32, 64)
MIN_GPUS_PER_NODE_MULTI = 4  # multi-node plans use whole 4- or 8-GPU servers


_LABEL_WORDS = {
    "en": {"full": "Full fine-tune", "pretrain": "Pre-training", "freeze": "Freeze (last layers)", "ddp": "DDP",
           "offload_optimizer": "offload optimizer to CPU", "offload_all": "offload all to CPU",
           "ckpt": "grad checkpointing", "no_ckpt": "no checkpointing", "selective": "selective checkpointing",
           "nodes": "{} nodes"},
    "zh": {"full": "全参微调", "pretrain": "预训练", "freeze": "冻结微调（训练最后几层）", "ddp": "DDP 数据并行",
           "offload_optimizer": "优化器卸载到 CPU", "offload_all": "参数与优化器卸载到 CPU",
           "ckpt": "梯度检查点", "no_ckpt": "不开梯度检查点", "selective": "选择性激活检查点", "nodes": "{} 节点"},
}


@dataclass(frozen=True)
class Strategy:
    setup: TrainSetup
    gpus_per_node: int
    nodes: int
    gpu_fraction: float  # < 1 for vGPU slices

    @property
    def total_gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    def label(self, lang: str = "en") -> str:
        """'LoRA r8 + DDP + grad checkpointing + BF16' in English or Chinese."""
        s, w = self.setup, _LABEL_WORDS["zh" if lang == "zh" else "en"]
        lora = {"lora": f"LoRA r{s.lora_rank}", "qlora": f"QLoRA {s.quant_bits or 4}-bit r{s.lora_rank}"}
        parts = [lora.get(s.method) or w[s.method]]
        if self.total_gpus > 1:
            fsdp = {"fsdp": "FSDP", "fsdp2": "FSDP2"}.get(s.sharding)
            parts.append((fsdp or f"ZeRO-{s.zero_stage}") if s.zero_stage else w["ddp"])
        if s.offload != "none":
            parts.append(w[f"offload_{s.offload}"])
        parts.append((w["selective"] if s.ckpt_mode == "selective" else w["ckpt"]) if s.grad_ckpt else w["no_ckpt"])
        parts.append({"bf16": "BF16", "pure_bf16": "pure BF16"}.get(s.precision, s.precision.upper()))
        if s.optimizer != "adamw":
            parts.append(s.optimizer.replace("_", "-"))
        if self.nodes > 1:
            parts.append(w["nodes"].format(self.nodes))
        return " + ".join(parts)

    def label_zh(self) -> str:
        return self.label("zh")

    def as_dict(self) -> dict[str, object]:
        s = self.setup
        return {
            "label": self.label(), "label_zh": self.label_zh(), "method": s.method, "quant_bits": s.quant_bits,
            "zero_stage": s.zero_stage,
            "offload": s.offload, "grad_ckpt": s.grad_ckpt, "precision": s.precision,
            "micro_batch": s.micro_batch, "seq_len": s.seq_len,
            "lora_rank": s.lora_rank if s.method in ("lora", "qlora") else None,
            "gpus_per_node": self.gpus_per_node, "nodes": self.nodes,
            "deepspeed": s.zero_stage > 0 and s.sharding == "deepspeed",
            "sharding": s.sharding if s.zero_stage > 0 else None,
            "optimizer": s.optimizer.replace("_", "-"), "optimizer_in_backward": s.optimizer_in_bwd,
            "activation_checkpointing": s.checkpointing, "attention": s.attention,
            "loss": s.loss.replace("_", "-"), "fp32_weights": s.fp32_weights,
            "lora_targets": s.lora_targets.replace("_", "-") if s.method in ("lora", "qlora") else None,
            "lora_modules_to_save": list(s.lora_extra) if s.method in ("lora", "qlora") else None,
            "kbit_upcast": s.kbit_upcast if s.method == "qlora" else None,
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
    """The setup on one GPU: the stated settings, the framework's defaults for the rest."""
    kind = job.model.kind
    default_mb = {"cnn": 32, "vision_transformer": 32, "diffusion": 1, "encoder": 16}.get(kind, 1)
    s, _ = training_settings.settings_for(w, job.method, gpu, 1, 0)
    setup = TrainSetup(
        method=job.method,  # type: ignore[arg-type]
        quant_bits=job.quant_bits,
        seq_len=job.seq_len,
        micro_batch=(w.micro_batch or default_mb) * job.seqs,  # a preference pair is two sequences
        grad_ckpt=s.grad_ckpt if w.checkpointing is not None else True,
        ckpt_mode=s.ckpt_mode,
        frozen_copies=job.frozen_copies,
        interconnect=interconnect(gpu),
    )
    setup = training_settings.apply(setup, s, w)
    if gpu.arch in ("kepler", "pascal"):  # no tensor cores and no usable FP16 math before Volta: FP32
        setup = replace(setup, precision="fp32")
    return setup


def configured(base: TrainSetup, w: Workload, gpu: GpuSpec | None, n: int, stage: int, off: Offload,
               ck: bool) -> TrainSetup:
    """`base` on n GPUs at a ZeRO stage: the framework defaults that depend on them resolved again."""
    setup = replace(base, n_gpus=n, zero_stage=stage, offload=off, grad_ckpt=ck)
    if gpu is None or base.precision == "fp32":
        return setup
    s, _ = training_settings.settings_for(w, base.method, gpu, n, stage)
    return training_settings.apply(setup, s, w)


Knobs = tuple[int, Offload, bool]  # ZeRO stage, offload, gradient checkpointing


def _variants(base: TrainSetup, n: int, w: Workload) -> Iterator[Knobs]:
    """Setups (as knobs on `base`) from fastest to most memory-frugal; user-fixed knobs are kept."""
    ckpts = [w.checkpointing != "none"] if w.checkpointing is not None else [False, True]
    sharded = base.method in ("full", "pretrain", "freeze")
    stages: list[int]
    if w.zero_stage is not None:
        stages = [w.zero_stage]
    elif n == 1:
        stages = [0]
    else:
        stages = [2, 3] if sharded else [0, 3]
    offloads: list[Offload] = ["none", "optimizer", "all"] if sharded else ["none"]
    for off in offloads:
        stage_list = stages
        if n == 1 and w.zero_stage is None:
            stage_list = [{"none": 0, "optimizer": 2, "all": 3}[off]]  # DeepSpeed ZeRO-Offload on one GPU
        for stage in stage_list:
            if off == "all" and stage < 3 or off == "optimizer" and n > 1 and stage < 2:
                continue
            for ck in ckpts:
                yield stage, off, ck


# The planner sizes the same setups for many instance types: per model and base setup, the sized variants for
# each (GPU count, multi-node) in the order `_variants` yields them, with the smallest per-GPU need among them.
# Keyed by the model's identity, holding the model so that its id cannot be reused while cached.
Sized = tuple[tuple[tuple[TrainSetup, MemoryBreakdown, float], ...], float]
_MemoTable = dict[tuple[int, bool], Sized]
_MEMO: dict[tuple[object, ...], tuple[ModelSpec, _MemoTable]] = {}
_MEMO_MAX = 64


def _memo_for(model: ModelSpec, base: TrainSetup, w: Workload, gpu: GpuSpec) -> _MemoTable:
    # the knobs `_variants` and `configured` read besides the base
    key = (id(model), base, w.checkpointing, w.zero_stage, w.framework, training_settings.stated(w),
           gpu.supports_bf16, gpu.supports_flash_attn2)
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()  # rare; a single call, safe next to readers in other threads
    table: _MemoTable = {}
    _MEMO[key] = (model, table)
    return table


def _sized(model: ModelSpec, base: TrainSetup, n: int, multi_node: bool, w: Workload, gpu: GpuSpec) -> Sized:
    """Every variant on n GPUs (multi-node: ZeRO-2/3) with its memory, and the smallest per-GPU need."""
    out = []
    for stage, off, ck in _variants(base, n, w):
        if multi_node and stage < 2 and base.method in ("full", "pretrain", "freeze"):
            continue
        setup = replace(configured(base, w, gpu, n, stage, off, ck),
                        interconnect=interconnect(gpu, 2 if multi_node else 1))  # RDMA assumed between nodes
        mem = estimate_memory(model, setup)
        out.append((setup, mem, mem.per_gpu_gib))
    return tuple(out), min((x[2] for x in out), default=math.inf)


def choose(job: Job, w: Workload, gpu: GpuSpec, inst: InstanceRow) -> list[Fit] | NoFit:
    """The fastest setup that fits, for each cluster size: 1, 2, 4 ... nodes (without RDMA the time model charges
    the TCP network's bandwidth); a NoFit with the reason when no size fits."""
    per_node = max(1, math.floor(inst.gpu_count))
    fraction = min(1.0, inst.gpu_count)
    unsupported = training_settings.check_precision(w, gpu)
    if unsupported:
        return NoFit(unsupported, math.inf)
    base = base_setup(job, w, gpu)
    closest = host_short = math.inf
    node_steps = [1] if inst.is_slice else list(NODE_STEPS)
    if w.gpu_count is not None:
        if w.gpu_count % per_node:
            return NoFit(f"has {per_node} GPUs per node; {w.gpu_count} GPUs is not a whole number of nodes",
                         math.inf)
        node_steps = [w.gpu_count // per_node]
    memo = _memo_for(job.model, base, w, gpu)
    usable_gpu = HEADROOM * inst.gpu_memory_gib
    fits: list[Fit] = []
    for nodes in node_steps:
        if nodes > 1 and job.method in ("lora", "qlora") and w.gpu_count is None:
            break  # adapters do not shard across nodes usefully; a bigger GPU is the answer
        if nodes > 1 and per_node < MIN_GPUS_PER_NODE_MULTI and w.gpu_count is None:
            break  # clusters are built from whole multi-GPU servers, not many 1-2 GPU VMs
        n = per_node * nodes
        key = (n, nodes > 1)
        sized = memo.get(key)
        if sized is None:
            sized = memo[key] = _sized(job.model, base, n, nodes > 1, w, gpu)
        variants, floor = sized
        closest = min(closest, floor)
        if floor > usable_gpu:
            continue  # not even the most frugal variant fits this GPU
        for setup, mem, need in variants:
            if need > usable_gpu:
                continue
            # host RAM not published (a family known only from sightings): not held against the fit; the plan says so
            if inst.memory_gib is None or mem.host_ram_gib / nodes <= HOST_RAM_USABLE * inst.memory_gib:
                fits.append(Fit(Strategy(setup, per_node, nodes, fraction), mem, OFFLOAD_SLOWDOWN[setup.offload]))
                break
            host_short = min(host_short, mem.host_ram_gib / nodes)
    if fits:
        return fits
    where = f"{per_node}x {gpu.id} ({inst.gpu_memory_gib:g} GiB each)"
    if host_short < math.inf:
        # The GPUs would do with CPU offload, but the host cannot hold the offloaded states.
        return NoFit(f"fits {where} only with CPU offload, which needs {host_short:.0f} GiB of host RAM per node; "
                     f"the instance has {inst.memory_gib:g} GiB ({HOST_RAM_USABLE:.0%} usable)", closest)
    return NoFit(f"needs {closest:.1f} GiB per GPU at best on {where}, over the "
                 f"{HEADROOM * inst.gpu_memory_gib:.1f} GiB usable", closest)
