"""Causes of a training OOM, or of memory higher than expected: each a pure function of the `TrainCase`, the GiB it
explains per GPU from the sizing engine (service/sizing/memory.py, activations.py), and the fix with the per-GPU
need after it.

    replicas          DDP / torchrun without ZeRO or FSDP: every card holds the whole model, its gradients and
                      optimizer states; more cards add speed, not memory
    model_states      full fine-tuning's states: mixed-precision AdamW 16 B per parameter (pure bf16 8 B, 8-bit
                      optimizers less), divided only by ZeRO / FSDP
    weights_alone     the frozen weights of a LoRA run alone fill the card
    logits            sequence x vocabulary x 12 B (bf16 logits, fp32 log-softmax and its gradient) per sample
    activations       sequence x micro-batch (RL: completions x their length per card)
    vision_tokens     image slices x tokens per slice, video frames, max_pixels
    no_checkpointing  gradient checkpointing off: every layer's activations kept (unstated: listed, what it costs if off)
    eager_attention   eager attention keeps the seq^2 scores
    optimizer_states  AdamW's fp32 moments against an 8-bit optimizer
    fp32_weights      a model loaded in fp32
    reference_model   DPO / PPO / GRPO: a frozen reference (and reward) model beside the policy
    rollout_engine    RL's colocated vLLM / SGLang reserving its share of the card
    other_processes   other processes on the card (the pasted CUDA error's figures)
"""

from __future__ import annotations

from service.planner.causes.cases import FULL_METHODS, RL_STAGES, TrainCase
from service.planner.causes.types import Cause, Fix, Quantity
from service.sizing.activations import logits_bytes
from service.sizing.params import count_params
from service.sizing.precision import state_bytes
from service.sizing.types import GIB
from service.sizing.vision import image_tokens

MIN_GIB = 0.5  # a term under this (or under MIN_SHARE of the card) is no cause worth naming
MIN_SHARE = 0.05
DEFAULT_ROLLOUT_SHARE = 0.5  # verl's rollout.gpu_memory_utilization default (0.5; 0.6 in later releases)
SMALL_IMAGE_PIXELS = 1003520  # 1280 Qwen2-VL tokens (28 x 28 pixels each): the usual lowered max_pixels


def _gib(x: float) -> Quantity:
    return Quantity.of(x, "GiB")


def _worth(case: TrainCase, gib: float) -> bool:
    return gib >= max(MIN_GIB, MIN_SHARE * case.capacity_gib)


def memory_fix(case: TrainCase, code: str, setting: str | None, **change: object) -> Fix:
    """A fix as the per-GPU need it leaves, and whether that fits the card."""
    need = case.memory(**change).per_gpu_gib
    return Fix(code=code, setting=setting, fixed=_gib(need), fits=need <= case.capacity_gib)


def _first_fitting(fixes: list[Fix]) -> Fix | None:
    return next((f for f in fixes if f.fits), fixes[0] if fixes else None)


def replicas(case: TrainCase) -> Cause:
    s = case.setup
    if case.gpus <= 1 or s.zero_stage > 0 or s.model_parallel > 1 or case.knobs.strategy in (
            "zero", "fsdp", "megatron", "device_map"):
        return Cause.no("replicas")
    full = case.states_gib()
    saved = full - case.states_gib(zero_stage=3)
    if not _worth(case, saved):
        return Cause.no("replicas")
    stated = case.knobs.strategy == "ddp" or "zero_stage" in case.stated
    fix = memory_fix(case, "zero3", "deepspeed: ds_z3_config.json", zero_stage=3)
    return Cause(code="replicas", explains=_gib(full), stated=stated, fix=fix,
                 detail={"ranks": case.gpus, "weights_gib": round(case.memory().weights_gib, 1),
                         "saved_gib": round(saved, 1)})


def model_states(case: TrainCase) -> Cause:
    s = case.setup
    if s.method not in FULL_METHODS:
        return Cause.no("model_states")
    states = case.states_gib()
    if states < 0.3 * case.capacity_gib:
        return Cause.no("model_states")
    b = state_bytes(s)
    fixes: list[Fix] = []
    if case.gpus > 1 and s.zero_stage < 3:
        fixes.append(memory_fix(case, "zero3", "deepspeed: ds_z3_config.json", zero_stage=3))
    if s.optimizer == "adamw":
        fixes.append(memory_fix(case, "optimizer_8bit", "optim: adamw_8bit", optimizer="adamw_8bit"))
    if s.offload == "none":
        fixes.append(memory_fix(case, "offload", "deepspeed: ds_z3_offload_config.json", offload="optimizer",
                                zero_stage=max(2, s.zero_stage)))
    fixes.append(memory_fix(case, "lora", "finetuning_type: lora", method="lora"))
    return Cause(code="model_states", explains=_gib(states), fix=_first_fitting(fixes),
                 detail={"bytes_per_param": round(b.weight + b.grad + b.optim, 1),
                         "params_b": round(case.model.params_published_b, 1),
                         "shards": case.gpus if s.zero_stage >= 1 else 1})


def weights_alone(case: TrainCase) -> Cause:
    s = case.setup
    if s.method not in ("lora", "qlora"):
        return Cause.no("weights_alone")
    w = case.memory().weights_gib
    if w < 0.4 * case.capacity_gib or (case.gpus > 1 and s.zero_stage == 0):
        return Cause.no("weights_alone")  # under replicas the `replicas` cause names the same bytes
    if s.method == "lora":
        fix = memory_fix(case, "qlora", "quantization_bit: 4", method="qlora", quant_bits=4)
    else:
        fix = memory_fix(case, "more_gpus_zero3", "deepspeed: ds_z3_config.json", zero_stage=3,
                         n_gpus=max(2, case.gpus * 2))
    return Cause(code="weights_alone", explains=_gib(w), fix=fix,
                 detail={"params_b": round(case.model.params_published_b, 1),
                         "bytes_per_param": 0.5 if s.method == "qlora" else 2.0})


def logits(case: TrainCase) -> Cause:
    s = case.setup
    if case.model.kind != "decoder" or s.loss == "chunked":
        return Cause.no("logits")
    saved = case.per_gpu_gib - case.memory(loss="chunked").per_gpu_gib
    if not _worth(case, saved):
        return Cause.no("logits")
    return Cause(code="logits", explains=_gib(saved), stated=case.is_stated("seq_len"),
                 fix=memory_fix(case, "chunked_loss", "use_liger_kernel: true", loss="chunked"),
                 detail={"seq": s.seq_len, "vocab": case.model.vocab_size or 0, "micro_batch": s.micro_batch,
                         "logits_gib": round(logits_bytes(case.model, s) / GIB, 1)})


def activations(case: TrainCase) -> Cause:
    """What sequence x micro-batch stores (the loss's logits apart: `logits` names them)."""
    s = case.setup
    act = case.memory(loss="chunked").activations_gib
    if not _worth(case, act):
        return Cause.no("activations")
    rl = case.stage in RL_STAGES and (case.knobs.num_generations or case.knobs.completion_len)
    if s.micro_batch > 1:
        fix = memory_fix(case, "micro_batch_1", f"per_device_train_batch_size: 1, gradient_accumulation_steps: "
                         f"{s.micro_batch * max(1, s.grad_accum)}", micro_batch=1)
    elif not s.grad_ckpt:
        fix = memory_fix(case, "checkpointing", "gradient_checkpointing: true", grad_ckpt=True)
    else:
        fix = memory_fix(case, "shorter_seq", f"cutoff_len: {max(256, s.seq_len // 2)}",
                         seq_len=max(256, s.seq_len // 2))
    return Cause(code="rl_activations" if rl else "activations", explains=_gib(act),
                 stated=case.is_stated("seq_len", "micro_batch") or bool(rl), fix=fix,
                 detail={"seq": s.seq_len, "micro_batch": s.micro_batch, "tokens": s.seq_len * s.micro_batch,
                         "generations": case.knobs.num_generations or 0, "completion": case.knobs.completion_len or 0})


def vision_tokens(case: TrainCase) -> Cause:
    """The image (or video) tokens each sample carries: the case's sequence holds its text and these."""
    k = case.knobs
    tokens = image_tokens(case.model, k.max_pixels, k.image_slices, k.video_frames)
    s = case.setup
    if tokens is None or tokens >= s.seq_len:
        return Cause.no("vision_tokens")
    text = s.seq_len - tokens
    extra = case.per_gpu_gib - case.memory(seq_len=max(16, text)).per_gpu_gib
    if not _worth(case, extra):
        return Cause.no("vision_tokens")
    small = image_tokens(case.model, SMALL_IMAGE_PIXELS, None, None) or tokens // 4
    if k.image_slices or k.video_frames:
        small = max(1, tokens // max(2, (k.image_slices or 1) + (k.video_frames or 1)))
    fix = memory_fix(case, "fewer_image_tokens", f"image_max_pixels: {SMALL_IMAGE_PIXELS}",
                     seq_len=text + small) if small < tokens else None
    return Cause(code="vision_tokens", explains=_gib(extra), stated=any((k.max_pixels, k.image_slices, k.video_frames)),
                 fix=fix, detail={"tokens": tokens, "slices": k.image_slices or 0, "frames": k.video_frames or 0,
                                  "max_pixels": k.max_pixels or 0})


def no_checkpointing(case: TrainCase) -> Cause:
    """Checkpointing off, as stated; or, unstated and assumed on, what it would cost if the framework leaves it off
    (Hugging Face Trainer, TRL and ms-swift default to off)."""
    s = case.setup
    if s.grad_ckpt and not case.is_stated("checkpointing") and case.model.kind == "decoder":
        extra = case.memory(grad_ckpt=False).per_gpu_gib - case.per_gpu_gib
        if not _worth(case, extra):
            return Cause.no("maybe_no_checkpointing")
        return Cause(code="maybe_no_checkpointing", explains=_gib(extra), stated=False,
                     fix=Fix(code="checkpointing", setting="gradient_checkpointing: true",
                             fixed=_gib(case.per_gpu_gib), fits=case.per_gpu_gib <= case.capacity_gib),
                     detail={"seq": s.seq_len, "micro_batch": s.micro_batch})
    if s.grad_ckpt:
        return Cause.no("no_checkpointing")
    saved = case.per_gpu_gib - case.memory(grad_ckpt=True).per_gpu_gib
    if not _worth(case, saved):
        return Cause.no("no_checkpointing")
    return Cause(code="no_checkpointing", explains=_gib(saved), stated=case.is_stated("checkpointing"),
                 fix=memory_fix(case, "checkpointing", "gradient_checkpointing: true", grad_ckpt=True),
                 detail={"seq": s.seq_len, "micro_batch": s.micro_batch})


def eager_attention(case: TrainCase) -> Cause:
    s = case.setup
    if s.attention != "eager":
        return Cause.no("eager_attention")
    saved = case.per_gpu_gib - case.memory(attention="sdpa").per_gpu_gib
    if not _worth(case, saved):
        return Cause.no("eager_attention")
    flash = case.gpu.supports_flash_attn2
    return Cause(code="eager_attention", explains=_gib(saved), stated=case.is_stated("attention"),
                 fix=memory_fix(case, "flash" if flash else "sdpa",
                                "flash_attn: fa2" if flash else "flash_attn: sdpa", attention="sdpa"),
                 detail={"seq": s.seq_len, "heads": case.model.num_heads or 0})


def optimizer_states(case: TrainCase) -> Cause:
    s = case.setup
    if s.method not in FULL_METHODS or s.optimizer != "adamw" or s.offload != "none":
        return Cause.no("optimizer_states")
    saved = case.memory().optimizer_gib - case.memory(optimizer="adamw_8bit").optimizer_gib
    if not _worth(case, saved):
        return Cause.no("optimizer_states")
    return Cause(code="optimizer_states", explains=_gib(saved), stated=case.is_stated("optimizer"),
                 fix=memory_fix(case, "optimizer_8bit", "optim: adamw_8bit", optimizer="adamw_8bit"),
                 detail={"optimizer_gib": round(case.memory().optimizer_gib, 1)})


def fp32_weights(case: TrainCase) -> Cause:
    s = case.setup
    if s.precision != "fp32" or not case.gpu.supports_bf16 and case.gpu.arch in ("kepler", "pascal"):
        return Cause.no("fp32_weights")
    saved = case.per_gpu_gib - case.memory(precision="bf16").per_gpu_gib
    if not _worth(case, saved):
        return Cause.no("fp32_weights")
    return Cause(code="fp32_weights", explains=_gib(saved), stated=case.is_stated("precision"),
                 fix=memory_fix(case, "bf16", "bf16: true", precision="bf16"), detail={})


def reference_model(case: TrainCase) -> Cause:
    s = case.setup
    if s.frozen_copies <= 0:
        return Cause.no("reference_model")
    saved = case.per_gpu_gib - case.memory(frozen_copies=0).per_gpu_gib
    if not _worth(case, saved):
        return Cause.no("reference_model")
    return Cause(code="reference_model", explains=_gib(saved),
                 fix=memory_fix(case, "lora_reference", "finetuning_type: lora", method="lora", frozen_copies=0),
                 detail={"copies": s.frozen_copies})


def rollout_engine(case: TrainCase) -> Cause:
    engine = case.knobs.engine
    if case.stage not in RL_STAGES or engine not in ("vllm", "sglang"):
        return Cause.no("rollout_engine")
    share = case.knobs.gpu_memory_utilization or DEFAULT_ROLLOUT_SHARE
    held = share * case.gpu.memory_gib
    lower = max(0.2, round(share - 0.2, 1))
    return Cause(code="rollout_engine", explains=_gib(held), stated=case.knobs.gpu_memory_utilization is not None,
                 fix=Fix(code="rollout_share", setting=f"gpu_memory_utilization: {lower:g}",
                         fixed=_gib(lower * case.gpu.memory_gib)),
                 detail={"share": share, "card_gib": case.gpu.memory_gib})


def other_processes(case: TrainCase) -> Cause:
    other = other_gib(case.seen.card_gb, case.seen.free_gb, case.seen.process_gb, case.seen.other_gb)
    if other is None or other < MIN_GIB:
        return Cause.no("other_processes")
    return Cause(code="other_processes", explains=_gib(other),
                 fix=Fix(code="free_card", setting="CUDA_VISIBLE_DEVICES"),
                 detail={"card_gib": case.seen.card_gb or case.gpu.memory_gib, "process_gib": case.seen.process_gb or 0})


def other_gib(card: float | None, free: float | None, process: float | None, other: float | None) -> float | None:
    """Other processes' memory on the card: stated by the CUDA error, or what its total, free and this process's
    figures leave."""
    if other is not None:
        return other
    if card is not None and free is not None and process is not None:
        rest = card - free - process
        return rest if rest > 0 else None
    return None


def frozen_params_b(case: TrainCase) -> float:
    return count_params(case.model).total / 1e9


OOM_CAUSES = (replicas, model_states, weights_alone, logits, activations, vision_tokens, no_checkpointing,
              eager_attention, optimizer_states, fp32_weights, reference_model, rollout_engine, other_processes)
