"""A workload's training settings made concrete for one GPU, GPU count and ZeRO stage, with the defaults assumed.

What the user stated wins; the framework's defaults (service/sizing/frameworks.py) fill the rest. Some defaults
depend on the cluster (ms-swift and torchtune train in pure bf16 unless DeepSpeed keeps an fp32 master; torchtune's
one-GPU full fine-tune uses a paged 8-bit AdamW stepped inside the backward), so the planner resolves them again
for every GPU count and stage it sizes.
"""

from __future__ import annotations

from service.catalog.schema import GpuSpec
from service.errors import InvalidInputError
from service.sizing.frameworks import DEFAULT_FRAMEWORK, DEFAULTS, Settings, Stated, resolve_settings
from service.sizing.types import TrainSetup
from service.workload import Workload


def stated(w: Workload) -> Stated:
    return Stated(precision=w.precision, optimizer=w.optimizer, checkpointing=w.checkpointing,
                  lora_targets=w.lora_targets, lora_rank=w.lora_rank, attention=w.attention, loss=w.loss,
                  kbit_upcast=w.kbit_upcast, sharding=w.sharding)


def settings_for(w: Workload, method: str, gpu: GpuSpec, n_gpus: int, zero_stage: int
                 ) -> tuple[Settings, list[tuple[str, str]]]:
    return resolve_settings(w.framework, stated(w), method=method, n_gpus=n_gpus, zero_stage=zero_stage,
                            supports_bf16=gpu.supports_bf16, supports_flash=gpu.supports_flash_attn2)


def check_precision(w: Workload, gpu: GpuSpec) -> str | None:
    """Why this GPU cannot run the stated precision, or None."""
    if w.precision == "fp8" and not gpu.supports_fp8:
        return f"{gpu.id} has no FP8 tensor cores (FP8 needs Ada, Hopper or newer)"
    return None


def require_precision(w: Workload, gpu: GpuSpec) -> None:
    why = check_precision(w, gpu)
    if why:
        raise InvalidInputError(f"precision fp8: {why}.", "Use amp-bf16, or an H100 / H800 / H20 / L40S / 4090.")


def apply(setup: TrainSetup, s: Settings, w: Workload) -> TrainSetup:
    """The setup with the resolved settings (checkpointing kept as the caller chose it)."""
    from dataclasses import replace

    return replace(setup, precision=s.precision, optimizer=s.optimizer, optimizer_in_bwd=s.optimizer_in_bwd,
                   ckpt_mode=s.ckpt_mode if w.checkpointing is not None else setup.ckpt_mode,
                   lora_targets=s.lora_targets, lora_rank=s.lora_rank, attention=s.attention, loss=s.loss,
                   kbit_upcast=s.kbit_upcast, fp32_weights=s.fp32_weights, sharding=s.sharding,
                   fused_optimizer=s.fused_optimizer, liger_swiglu=s.liger_swiglu, ds_bf16_master=s.ds_bf16_master,
                   lora_extra=tuple(w.lora_modules_to_save or ()))


def framework_note(w: Workload) -> tuple[str, str]:
    fw = DEFAULTS[w.framework or DEFAULT_FRAMEWORK]
    if w.framework is None:
        return (f"Unset training settings follow {fw.name}'s defaults ({fw.source}).",
                f"未指定的训练设置按 {fw.name} 的默认值（{fw.source}）。")
    return (f"Framework {fw.name}: unset settings follow its defaults ({fw.source}).",
            f"训练框架 {fw.name}：未指定的设置按其默认值（{fw.source}）。")
