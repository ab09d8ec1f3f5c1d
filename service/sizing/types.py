"""Frozen value types of the sizing engine. Units are in the names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Method = Literal["full", "lora", "qlora", "freeze", "pretrain"]
Precision = Literal["bf16", "fp16", "pure_bf16", "fp32"]
Offload = Literal["none", "optimizer", "all"]
Optimizer = Literal["adamw", "adamw_8bit"]

GIB = 1024**3


@dataclass(frozen=True)
class TrainSetup:
    """How one data-parallel replica trains: method, precision, sharding and batch shape."""

    method: Method
    quant_bits: int | None = None  # QLoRA 4 or 8
    n_gpus: int = 1  # GPUs that shard ZeRO state (data-parallel size)
    zero_stage: int = 0
    offload: Offload = "none"
    optimizer: Optimizer = "adamw"
    precision: Precision = "bf16"
    seq_len: int = 2048
    micro_batch: int = 1
    grad_ckpt: bool = True
    fused_attention: bool = True  # FlashAttention / SDPA memory-efficient kernel: no s^2 scores kept
    lora_rank: int = 8
    freeze_trainable_layers: int = 2  # LLaMA-Factory default for method=freeze


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory, each term reported, plus host RAM that offloading needs."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float
    trainable_params: float
    host_ram_gib: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def per_gpu_gib(self) -> float:
        return (
            self.weights_gib + self.gradients_gib + self.optimizer_gib + self.activations_gib + self.overhead_gib
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "per_gpu_gib": round(self.per_gpu_gib, 2),
            "weights_gib": round(self.weights_gib, 2),
            "gradients_gib": round(self.gradients_gib, 2),
            "optimizer_gib": round(self.optimizer_gib, 2),
            "activations_gib": round(self.activations_gib, 2),
            "overhead_gib": round(self.overhead_gib, 2),
        }


@dataclass(frozen=True)
class MfuPrior:
    value: float
    source: str


@dataclass(frozen=True)
class TimeEstimate:
    flops_total: float
    flops_per_token: float
    tokens_total: float
    throughput_tokens_per_s: float  # all GPUs together
    hours: float
    mfu: MfuPrior
    scaling_efficiency: float
    notes: tuple[str, ...] = field(default=())
    model_flops_per_token: float = 0.0  # MFU basis: no recomputation
    offload_slowdown: float = 1.0  # CPU offload factor already in `hours` and `throughput_tokens_per_s`
