"""Bytes per trainable parameter of each state a training run keeps, by precision, optimizer and framework.

Each case is the framework's own rule (the tests in tests/sizing/test_sizing_precision.py carry one per case):

| setting | weight | grad | master | moments | total |
|---|---|---|---|---|---|
| amp-bf16 / fp16 (DeepSpeed `bf16` / `fp16`, Megatron) | 2 | 2 | 4 | 8 | 16 |
| amp with the weights in fp32 (FSDP `mixed_precision`, HF Trainer over an fp32 model) | 4 | 4 | 0 | 8 | 16 |
| pure bf16 (torchtune, FSDP without mixed precision, a bf16 model without DeepSpeed) | 2 | 2 | 0 | 4 | 8 |
| pure bf16 under DeepSpeed `bf16_master_weights_and_grads` + `bf16_optimizer_states` | 2 | 2 | 2 | 4 | 10 |
| pure bf16 asked of DeepSpeed without those flags: its ZeRO optimizer upcasts | 2 | 2 | 4 | 8 | 16 |
| fp8 (torchao float8 / Transformer Engine: FP8 GEMMs over amp states) | as amp | | | | 16 |
| fp32 | 4 | 4 | 0 | 8 | 16 |
| bitsandbytes 8-bit Adam (two 1-byte moments, blockwise) | | | | 2 | |
| Adafactor (factored second moment, no first moment) | | | | ~0 | |

Sources: ZeRO paper (Rajbhandari et al. 2020, K = 12: fp32 master + m + v over 16-bit weights and gradients);
DeepSpeed's low-precision options (deepspeedai/DeepSpeed PR 7700; DeepSpeedExamples
training/bf16_master_weight/README.md @516082c: 6.86B model on 4 GPUs, ZeRO-3, allocated after the step 25.74 GiB
= 16 B/param and 16.17 GiB = 10 B/param); DeepSpeed ZeRO-3 keeps its gradient partition in the gradient
accumulation dtype, the 16-bit one under `bf16` (deepspeed/runtime/engine.py `get_data_types`,
zero/stage3.py `grad_partitions_flat_buffer`), and upcasts one optimizer sub-group (`sub_group_size`, 1e9) to fp32
at the step (`_prepare_fp32_grad_for_sub_group`); torch.optim.AdamW keeps its moments in the parameter's dtype;
bitsandbytes Adam8bit (B8 in shared/reference/sizing.md); FSDP MixedPrecision keeps fp32 shards and gathers bf16
copies (torch.distributed.fsdp).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.sizing.types import TrainSetup

MOMENT_BYTES = {"adamw": 8.0, "adamw_8bit": 2.0, "paged_adamw_8bit": 2.0, "adafactor": 0.0}  # fp32 / 8-bit / factored
# DeepSpeed ZeRO-3 `sub_group_size` default (deepspeed/runtime/zero/config.py): the optimizer steps the partition in
# sub-groups of this many elements, upcasting each one's gradient to the master's dtype for its step
DS_SUB_GROUP_ELEMS = 1e9


@dataclass(frozen=True)
class StateBytes:
    """Bytes per trainable parameter: the weight the forward reads, its gradient, the optimizer's master copy (0
    where the weights are the master) and the optimizer's moments."""

    weight: float
    grad: float
    master: float
    moments: float

    @property
    def optim(self) -> float:
        """What the optimizer holds: master + moments."""
        return self.master + self.moments

    @property
    def total(self) -> float:
        return self.weight + self.grad + self.master + self.moments


def deepspeed_zero(setup: TrainSetup) -> bool:
    """DeepSpeed's ZeRO optimizer owns the states (stage 1-3, or an offload, which needs a ZeRO stage)."""
    return setup.sharding == "deepspeed" and (setup.zero_stage >= 1 or setup.offload != "none")


def bf16_master(setup: TrainSetup) -> bool:
    """Pure bf16 under DeepSpeed ZeRO with `bf16_master_weights_and_grads` and `bf16_optimizer_states`."""
    return setup.precision == "pure_bf16" and deepspeed_zero(setup) and setup.ds_bf16_master


def pure(setup: TrainSetup) -> bool:
    """The states really stay 16-bit: pure bf16 anywhere but a DeepSpeed ZeRO optimizer without its low-precision
    flags (that one upcasts to an fp32 master whatever the model's dtype)."""
    return setup.precision == "pure_bf16" and (not deepspeed_zero(setup) or setup.ds_bf16_master)


def _moments(setup: TrainSetup, wide: bool) -> float:
    """Adam's two moments at 4 B each when `wide`, else at the parameter's 2 B; 8-bit and factored as they are."""
    b = MOMENT_BYTES[setup.optimizer]
    return b if setup.optimizer != "adamw" or wide else b / 2


def state_bytes(setup: TrainSetup) -> StateBytes:
    """Full-parameter training, per trainable parameter, before sharding (module docstring's table)."""
    if bf16_master(setup):
        return StateBytes(2.0, 2.0, 2.0, _moments(setup, wide=False))
    if pure(setup):
        return StateBytes(2.0, 2.0, 0.0, _moments(setup, wide=False))
    if setup.precision == "fp32":
        return StateBytes(4.0, 4.0, 0.0, _moments(setup, wide=True))
    if not deepspeed_zero(setup) and (setup.fp32_weights or setup.sharding != "deepspeed" and setup.zero_stage >= 2):
        return StateBytes(4.0, 4.0, 0.0, _moments(setup, wide=True))  # fp32 weights and grads, autocast in 16 bits
    return StateBytes(2.0, 2.0, 4.0, _moments(setup, wide=True))  # 16-bit weights and grads, fp32 master


def adapter_bytes(setup: TrainSetup) -> StateBytes:
    """LoRA adapters (and modules trained beside them): fp32 under amp (PEFT's autocast_adapter_dtype,
    LLaMA-Factory's upcast of trainable parameters), bf16 under pure bf16."""
    if setup.precision == "pure_bf16":
        return StateBytes(2.0, 2.0, 0.0, _moments(setup, wide=False))
    return StateBytes(4.0, 4.0, 0.0, _moments(setup, wide=True))


def step_upcast_bytes(setup: TrainSetup, trainable: float) -> float:
    """DeepSpeed ZeRO-3's transient at the optimizer step: one sub-group's gradient in the master's dtype (fp32; the
    16-bit gradient itself under the low-precision flags, already counted). 0 elsewhere."""
    if not (deepspeed_zero(setup) and setup.zero_stage >= 3) or bf16_master(setup):
        return 0.0
    if pure(setup):
        return 0.0
    return 4.0 * min(DS_SUB_GROUP_ELEMS, trainable / setup.shard_n)


def bytes_per_param(setup: TrainSetup) -> float:
    """The unsharded total, for answers and tests ('16 B/param: 2 weights + 2 grads + 4 master + 8 Adam')."""
    return state_bytes(setup).total


def describe(setup: TrainSetup, lang: str = "en") -> str:
    """'2 weights + 2 grads + 4 master + 8 Adam = 16 B/param' / '权重 2 + 梯度 2 + 主权重 4 + 优化器 8 = 16 B/参数'."""
    s = state_bytes(setup)
    opt = {"adamw": "Adam", "adamw_8bit": "8-bit Adam", "paged_adamw_8bit": "paged 8-bit Adam",
           "adafactor": "Adafactor"}[setup.optimizer]
    if lang == "zh":
        parts = [f"权重 {s.weight:g}", f"梯度 {s.grad:g}"] + ([f"主权重 {s.master:g}"] if s.master else []) + \
            [f"优化器状态 {s.moments:g}"]
        return " + ".join(parts) + f" = {s.total:g} B/参数"
    parts = [f"{s.weight:g} weights", f"{s.grad:g} grads"] + ([f"{s.master:g} master"] if s.master else []) + \
        [f"{s.moments:g} {opt}"]
    return " + ".join(parts) + f" = {s.total:g} B/param"
