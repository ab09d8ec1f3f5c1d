"""What each training framework does when a setting is left unset, read from its source at a stated commit.

The engine sizes concrete settings (TrainSetup); a user states some and the framework decides the rest. Every
answer names the defaults it assumed (`Defaults.describe`).

Sources (the repositories at the commits named; paths inside them):
- LLaMA-Factory @ff6d4d1 (2026-08-18): hparams/finetuning_args.py (lora_rank 8, lora_target "all", pure_bf16
  False), hparams/model_args.py (flash_attn "auto" = the transformers default, SDPA; disable_gradient_checkpointing
  False; enable_liger_kernel False), model/adapter.py (trainable parameters upcast to fp32 unless pure_bf16 or
  DeepSpeed ZeRO-3; no prepare_model_for_kbit_training), examples/deepspeed/*.json.
- ms-swift @3602360 (2026-08-22): arguments/tuner_args.py (target_modules ['all-linear'], lora_rank 8),
  trainers/arguments.py (gradient_checkpointing True, use_liger_kernel False), arguments/base_args/model_args.py
  (torch_dtype from the model's config: bf16 weights, so without DeepSpeed AdamW keeps bf16 states; attn_impl None).
- torchtune @bd2a0fc (2026-04-23): recipes/configs/llama3_1/8B_{lora,qlora,full}_single_device.yaml and 8B_full.yaml
  (dtype bf16 weights and optimizer states; enable_activation_checkpointing True; LinearCrossEntropyLoss, chunked;
  LoRA on q, v, output_proj and the MLP, rank 8; full single-device: bitsandbytes PagedAdamW8bit with
  optimizer_in_bwd True; distributed: FSDP2, torch AdamW).
- Axolotl @067b021 (2026-07-24): utils/schemas/config.py (gradient_checkpointing False), utils/schemas/training.py
  (optimizer adamw_torch_fused), loaders/model.py (QLoRA runs prepare_model_for_kbit_training unless FSDP or
  ZeRO-3, then `_configure_embedding_dtypes` casts the norms and the embedding modules back to torch_dtype for an
  adapter run: no fp32 embeddings, head or residual stream stay), utils/schemas/peft.py (lora_target_linear unset: PEFT's per-model default, q_proj and v_proj for Llama).
- TRL @f2cd577 (2026-07-24): trainer/base_config.py (gradient_checkpointing True), trainer/sft_config.py (bf16 True,
  loss_type "chunked_nll"), trainer/sft_trainer.py (a model named by id loads in fp32; QLoRA adapters cast to bf16;
  no prepare_model_for_kbit_training since v0.22, Aug 2025).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.sizing.types import Attention, CkptMode, LoraTargets, Loss, Optimizer, Precision, Sharding

Framework = Literal["llamafactory", "ms-swift", "torchtune", "axolotl", "trl"]
FRAMEWORKS: tuple[Framework, ...] = ("llamafactory", "ms-swift", "torchtune", "axolotl", "trl")
DEFAULT_FRAMEWORK: Framework = "llamafactory"  # the launch bundle's framework
Ckpt = Literal["none", "selective", "full"]


@dataclass(frozen=True)
class FrameworkDefaults:
    name: str
    precision: Precision  # amp "bf16" or "pure_bf16" (a GPU without BF16 runs fp16)
    optimizer: Optimizer
    optimizer_full_single: Optimizer  # full fine-tuning on one GPU (torchtune's memory-lean recipe)
    optimizer_in_bwd_full_single: bool
    checkpointing: Ckpt
    lora_targets: LoraTargets
    lora_rank: int
    attention: Attention
    loss: Loss
    kbit_upcast: bool  # QLoRA through PEFT's prepare_model_for_kbit_training
    fp32_weights: bool  # amp with the trained weights held in fp32 (no separate fp32 master)
    base_fp32: bool  # the whole model loads in fp32 (LoRA's frozen base too)
    sharding: Sharding
    pure_without_zero: bool  # weights load in bf16 and, without DeepSpeed's fp32 master, AdamW keeps bf16 states
    # AdamW through a fused kernel: torchtune's configs set torch AdamW fused=True, Axolotl defaults to
    # adamw_torch_fused; the Transformers Trainer's default (LLaMA-Factory, ms-swift, TRL) is adamw_torch, foreach,
    # until PyTorch 2.8 (transformers PR 37358, 2025-07): the larger step peak is assumed
    fused_adamw: bool
    source: str


_COMMON = dict(optimizer="adamw", lora_rank=8, attention="sdpa", sharding="deepspeed", kbit_upcast=False,
               fp32_weights=False, base_fp32=False, pure_without_zero=False, optimizer_in_bwd_full_single=False,
               fused_adamw=False)
DEFAULTS: dict[str, FrameworkDefaults] = {
    "llamafactory": FrameworkDefaults(**{**_COMMON, **dict(  # type: ignore[arg-type]
        name="LLaMA-Factory", precision="bf16", optimizer_full_single="adamw", checkpointing="full",
        lora_targets="all_linear", loss="full_logits", fp32_weights=True, source="hiyouga/LLaMA-Factory@ff6d4d1")}),
    "ms-swift": FrameworkDefaults(**{**_COMMON, **dict(  # type: ignore[arg-type]
        name="ms-swift", precision="bf16", optimizer_full_single="adamw", checkpointing="full",
        lora_targets="all_linear", loss="full_logits", pure_without_zero=True, source="modelscope/ms-swift@3602360")}),
    "torchtune": FrameworkDefaults(**{**_COMMON, **dict(  # type: ignore[arg-type]
        name="torchtune", precision="pure_bf16", optimizer_full_single="paged_adamw_8bit",
        optimizer_in_bwd_full_single=True, checkpointing="full", lora_targets="all_linear", loss="chunked",
        sharding="fsdp2", pure_without_zero=True, fused_adamw=True, source="pytorch/torchtune@bd2a0fc")}),
    "axolotl": FrameworkDefaults(**{**_COMMON, **dict(  # type: ignore[arg-type]
        name="Axolotl", precision="bf16", optimizer_full_single="adamw", checkpointing="none", lora_targets="qv",
        loss="full_logits", kbit_upcast=False, fused_adamw=True, source="axolotl-ai-cloud/axolotl@067b021")}),
    "trl": FrameworkDefaults(**{**_COMMON, **dict(  # type: ignore[arg-type]
        name="TRL", precision="bf16", optimizer_full_single="adamw", checkpointing="full", lora_targets="qv",
        loss="chunked", fp32_weights=True, base_fp32=True, source="huggingface/trl@f2cd577")}),
}

PRECISION_NAMES: dict[str, Precision] = {"amp-bf16": "bf16", "pure-bf16": "pure_bf16", "fp16": "fp16",
                                          "fp8": "fp8", "fp32": "fp32"}
OPTIMIZER_NAMES: dict[str, Optimizer] = {"adamw": "adamw", "adamw-8bit": "adamw_8bit",
                                          "paged-adamw-8bit": "paged_adamw_8bit", "adafactor": "adafactor"}
TARGET_NAMES: dict[str, LoraTargets] = {"qv": "qv", "attn": "attn", "all-linear": "all_linear"}
LOSS_NAMES: dict[str, Loss] = {"full-logits": "full_logits", "chunked": "chunked"}


@dataclass(frozen=True)
class Settings:
    """The settings that shape memory and speed, whoever chose them."""

    precision: Precision
    optimizer: Optimizer
    optimizer_in_bwd: bool
    grad_ckpt: bool
    ckpt_mode: CkptMode
    lora_targets: LoraTargets
    lora_rank: int
    attention: Attention
    loss: Loss
    kbit_upcast: bool
    fp32_weights: bool
    sharding: Sharding
    fused_optimizer: bool = False
    liger_swiglu: bool = False
    ds_bf16_master: bool = False  # DeepSpeed bf16_master_weights_and_grads + bf16_optimizer_states


@dataclass(frozen=True)
class Stated:
    """What the user stated (None = unset). Names in the public schema's spelling."""

    precision: str | None = None
    optimizer: str | None = None
    checkpointing: str | None = None
    lora_targets: str | None = None
    lora_rank: int | None = None
    attention: str | None = None
    loss: str | None = None
    kbit_upcast: bool | None = None
    sharding: str | None = None
    # DeepSpeed's low-precision flags: None = set exactly when pure bf16 is asked of DeepSpeed ZeRO (a measured run
    # states them as it ran: LLaMA-Factory's pure_bf16 under a plain DeepSpeed config keeps the fp32 master)
    ds_bf16_master: bool | None = None


# Chinese names for the setting values a Chinese answer shows (codes stay in the English text and the plan's JSON)
_ZH = {"adamw": "AdamW", "full": "完整", "selective": "选择性", "none": "不开", "all_linear": "全部线性",
       "sdpa": "SDPA", "flash": "FlashAttention-2", "eager": "PyTorch 朴素实现", "full_logits": "完整输出层（全词表一次算出）",
       "chunked": "分块计算（Liger）"}


def _zh(value: str) -> str:
    return _ZH.get(value, value.replace("_", "-"))


def resolve_settings(framework: str | FrameworkDefaults | None, stated: Stated, *, method: str, n_gpus: int,
                     zero_stage: int, supports_bf16: bool = True, supports_flash: bool = True
                     ) -> tuple[Settings, list[tuple[str, str]]]:
    """Concrete settings and the defaults assumed, each as (English, Chinese)."""
    fw = framework if isinstance(framework, FrameworkDefaults) else DEFAULTS[framework or DEFAULT_FRAMEWORK]
    assumed: list[tuple[str, str]] = []
    full_single = method in ("full", "pretrain") and n_gpus == 1

    def note(en: str, zh: str) -> None:
        assumed.append((f"{en} ({fw.name} default)", f"{zh}（{fw.name} 默认）"))

    sharding: Sharding = stated.sharding if stated.sharding in ("deepspeed", "fsdp", "fsdp2") else fw.sharding  # type: ignore[assignment]
    if (stated.precision == "pure-bf16" and stated.sharding is None and sharding == "deepspeed" and n_gpus > 1
            and zero_stage >= 2 and method in ("full", "pretrain", "freeze")):
        # pure bf16 sharded: FSDP keeps bf16 shards and no master (8 B/param), DeepSpeed a second bf16 copy at best
        sharding = "fsdp"
        assumed.append(("pure bf16 sharded with FSDP (no master copy: 8 B/param; DeepSpeed ZeRO keeps a bf16 master "
                        "with bf16_master_weights_and_grads, 10 B/param, or an fp32 one by default, 16 B/param)",
                        "pure bf16 分片按 FSDP 估算（无主权重副本：8 B/参数；DeepSpeed ZeRO 开 bf16_master_weights_and_grads "
                        "时另存一份 bf16 主权重，10 B/参数，默认则为 fp32 主权重，16 B/参数）"))
    deepspeed_master = sharding == "deepspeed" and zero_stage >= 1
    if stated.precision is not None:
        precision = PRECISION_NAMES[stated.precision]
    elif fw.pure_without_zero and not deepspeed_master and method in ("full", "pretrain", "freeze"):
        precision = "pure_bf16"
        note("precision pure-bf16: weights and AdamW states in bf16", "精度 pure-bf16：权重与优化器状态均为 bf16")
    else:
        precision = fw.precision
        note(f"precision {'amp-bf16' if precision == 'bf16' else 'pure-bf16'}",
             f"精度 {'amp-bf16' if precision == 'bf16' else 'pure-bf16'}")
    if not supports_bf16 and precision in ("bf16", "pure_bf16"):
        precision = "fp16"
        assumed.append(("fp16 mixed precision: the GPU has no BF16", "该 GPU 不支持 BF16：按 fp16 混合精度"))
    in_bwd = False
    if stated.optimizer is not None:
        optimizer = OPTIMIZER_NAMES[stated.optimizer]
    else:
        optimizer = fw.optimizer_full_single if full_single else fw.optimizer
        in_bwd = full_single and fw.optimizer_in_bwd_full_single
        note(f"optimizer {optimizer.replace('_', '-')}" + (", stepped inside the backward" if in_bwd else ""),
             f"优化器 {_zh(optimizer)}" + ("，在反向传播中逐参数更新" if in_bwd else ""))
    ckpt = stated.checkpointing or fw.checkpointing
    if stated.checkpointing is None:
        off = ckpt != "none"
        note(f"activation checkpointing {ckpt}" + ("; a plan turns it off where memory allows (see its strategy)"
                                                   if off else ""),
             f"激活检查点：{_zh(ckpt)}" + ("；显存有余时方案会关掉以提速（见训练策略）" if off else ""))
    adapters = method in ("lora", "qlora")
    targets = TARGET_NAMES[stated.lora_targets] if stated.lora_targets else fw.lora_targets
    rank = stated.lora_rank or fw.lora_rank
    if adapters and stated.lora_targets is None:
        note(f"LoRA on {targets.replace('_', '-')} layers", f"LoRA 作用于{_zh(targets)}层")
    if adapters and stated.lora_rank is None:
        note(f"LoRA rank {rank}", f"LoRA 秩 {rank}")
    attention: Attention = stated.attention if stated.attention in ("flash", "sdpa", "eager") else fw.attention  # type: ignore[assignment]
    if stated.attention is None:
        note(f"attention {attention}", f"注意力实现：{_zh(attention)}")
    if attention == "flash" and not supports_flash:
        attention = "sdpa"
        assumed.append(("SDPA attention: the GPU has no FlashAttention-2", "该 GPU 不支持 FlashAttention-2：按 SDPA"))
    loss = LOSS_NAMES[stated.loss] if stated.loss else fw.loss
    if stated.loss is None:
        note(f"loss {loss.replace('_', '-')}", f"损失计算：{_zh(loss)}")
    kbit = fw.kbit_upcast and not (n_gpus > 1 and zero_stage >= 3) if stated.kbit_upcast is None \
        else stated.kbit_upcast
    if method == "qlora" and stated.kbit_upcast is None and kbit:
        note("QLoRA through prepare_model_for_kbit_training (norms, embeddings and head in fp32)",
             "QLoRA 经 prepare_model_for_kbit_training（归一化层、词嵌入与输出头为 fp32）")
    fsdp_shards = sharding != "deepspeed" and n_gpus > 1 and zero_stage >= 2  # MixedPrecision unshards in bf16
    fp32_weights = (fw.fp32_weights if method in ("full", "pretrain", "freeze") else fw.base_fp32) \
        and precision in ("bf16", "fp16", "fp8") and not deepspeed_master and not fsdp_shards
    if fp32_weights:
        note("weights held in fp32 under autocast" if method in ("full", "pretrain", "freeze")
             else "model loaded in fp32 (no dtype given)", "权重以 fp32 保存、autocast 计算" if method in (
                 "full", "pretrain", "freeze") else "模型按 fp32 加载（未指定 dtype）")
    fused = fw.fused_adamw or optimizer != "adamw"
    # LLaMA-Factory's and ms-swift's chunked loss is Liger's (enable_liger_kernel / use_liger_kernel), which also
    # swaps in Liger's SwiGLU; TRL's chunked_nll and torchtune's chunked loss leave the MLP alone
    liger = loss == "chunked" and fw.name in ("LLaMA-Factory", "ms-swift", "Axolotl")
    if optimizer == "adamw" and not fw.fused_adamw and not deepspeed_master and stated.optimizer is None:
        note("AdamW through torch's foreach path (a step-time copy of the second moments; fused from PyTorch 2.8)",
             "AdamW 用 PyTorch 的多张量非融合实现（优化器步多一份二阶矩临时张量；PyTorch 2.8 起默认融合实现）")
    ds_master = stated.ds_bf16_master if stated.ds_bf16_master is not None else (
        stated.precision == "pure-bf16" and deepspeed_master)
    ds_master = ds_master and precision == "pure_bf16" and deepspeed_master
    if ds_master and stated.ds_bf16_master is None:
        assumed.append(("pure bf16 under DeepSpeed ZeRO: bf16_master_weights_and_grads and bf16_optimizer_states on "
                        "(a bf16 master beside the bf16 weights: 10 B/param)",
                        "DeepSpeed ZeRO 下的 pure bf16：开启 bf16_master_weights_and_grads 与 bf16_optimizer_states"
                        "（bf16 权重之外另有一份 bf16 主权重：10 B/参数）"))
    return Settings(precision, optimizer, in_bwd, ckpt != "none", "selective" if ckpt == "selective" else "full",
                    targets, rank, attention, loss, kbit, fp32_weights, sharding, fused, liger, ds_master), assumed
