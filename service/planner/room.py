"""When a setup is tight or does not fit: the one setting change that gives room, cheapest in speed first."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from service.catalog.schema import ModelSpec
from service.sizing.memory import estimate_memory
from service.sizing.types import TrainSetup
from service.sizing.verdict import fit_verdict


@dataclass(frozen=True)
class Room:
    setting: str  # the workload field and value, e.g. "loss=chunked"
    change: str  # English
    change_zh: str
    need_gib: float

    def as_dict(self) -> dict[str, object]:
        return {"setting": self.setting, "change": self.change, "change_zh": self.change_zh,
                "need_gib": round(self.need_gib, 2)}


def _changes(m: ModelSpec, s: TrainSetup) -> Iterator[tuple[str, str, str, TrainSetup]]:
    if s.loss == "full_logits" and m.kind == "decoder":
        yield ("loss=chunked", "a chunked / fused cross-entropy (Liger, enable_liger_kernel)",
               "分块/融合交叉熵（Liger，enable_liger_kernel）", replace(s, loss="chunked"))
    if s.attention == "eager":
        yield ("attention=sdpa", "SDPA or FlashAttention instead of eager attention",
               "用 SDPA / FlashAttention 替代 eager 注意力", replace(s, attention="sdpa"))
    if not s.grad_ckpt:
        yield ("activation_checkpointing=selective", "selective activation checkpointing",
               "选择性激活检查点", replace(s, grad_ckpt=True, ckpt_mode="selective"))
    if s.checkpointing != "full":
        yield ("activation_checkpointing=full", "full activation checkpointing", "完整激活检查点",
               replace(s, grad_ckpt=True, ckpt_mode="full"))
    if s.micro_batch > 1:
        half = max(1, s.micro_batch // 2)
        yield (f"micro_batch={half}", f"micro-batch {half} (more gradient accumulation)",
               f"micro batch 降到 {half}（增加梯度累积）", replace(s, micro_batch=half))
    full = s.method in ("full", "pretrain", "freeze")
    if full and s.optimizer == "adamw":
        yield ("optimizer=adamw-8bit", "8-bit AdamW (bitsandbytes)", "8-bit AdamW（bitsandbytes）",
               replace(s, optimizer="adamw_8bit"))
    if s.n_gpus > 1 and s.zero_stage < 3 and full:
        yield ("zero_stage=3", "ZeRO-3 (shard the weights too)", "ZeRO-3（权重也分片）", replace(s, zero_stage=3))
    if full and s.offload == "none":
        stage = max(2, s.zero_stage)
        yield ("offload=optimizer", "offload the optimizer to CPU RAM (slower)", "优化器卸载到 CPU 内存（更慢）",
               replace(s, offload="optimizer", zero_stage=stage))
    if s.method == "lora":
        yield ("method=qlora", "QLoRA (4-bit base)", "QLoRA（4-bit 量化底座）", replace(s, method="qlora", quant_bits=4))


def room_hint(m: ModelSpec, setup: TrainSetup, capacity_gib: float) -> Room | None:
    """The first change (cheapest in speed first) after which the estimate fits with margin; None if none does."""
    for setting, en, zh, alt in _changes(m, setup):
        mem = estimate_memory(m, alt)
        if fit_verdict(mem.per_gpu_gib, capacity_gib, mem.expected_error).status == "fits":  # beyond its band
            return Room(setting, en, zh, mem.per_gpu_gib)
    return None
