"""Memory terms, one formula at a time, on the hand-counted tiny decoder (tests/sizing/specs.py).

P = 189,760 parameters, 61,440 of them in linears, largest tensor 64,000 (the embedding).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.sizing.memory import (
    CUDA_CONTEXT_GIB,
    FRAGMENTATION,
    NCCL_GIB,
    _decoder_layer_act_bytes,
    activation_gib,
    estimate_memory,
)
from service.sizing.types import GIB, TrainSetup
from tests.sizing.specs import decoder, gpt_like

P = 189_760
LINEAR = 61_440
LARGEST = 64_000


def model_states_bytes(setup: TrainSetup) -> tuple[float, float, float]:
    mem = estimate_memory(decoder(), setup)
    return mem.weights_gib * GIB, mem.gradients_gib * GIB, mem.optimizer_gib * GIB


@pytest.mark.parametrize(
    ("setup", "weights", "grads", "optim"),
    [
        # Mixed-precision AdamW (ZeRO paper K=12): bf16 weights 2 B, bf16 grads 2 B, fp32 master + m + v 12 B.
        (TrainSetup("full"), 2 * P, 2 * P, 12 * P),
        # fp16 mixed precision: the same 16 B/param.
        (TrainSetup("full", precision="fp16"), 2 * P, 2 * P, 12 * P),
        # Pure bf16 (LLaMA-Factory "8x"): 2 + 2 + two bf16 moments 4 = 8 B/param.
        (TrainSetup("full", precision="pure_bf16"), 2 * P, 2 * P, 4 * P),
        # fp32 everywhere: 4 B weights, 4 B grads, m + v 8 B = 16 B/param.
        (TrainSetup("full", precision="fp32"), 4 * P, 4 * P, 8 * P),
        # 8-bit Adam (Eleuther A1): fp32 master 4 + two 1-byte moments 2 = 6 B optimizer.
        (TrainSetup("full", optimizer="adamw_8bit"), 2 * P, 2 * P, 6 * P),
        # Pre-training counts as full training.
        (TrainSetup("pretrain"), 2 * P, 2 * P, 12 * P),
    ],
)
def test_full_training_bytes_per_parameter(setup: TrainSetup, weights: float, grads: float, optim: float) -> None:
    assert model_states_bytes(setup) == pytest.approx((weights, grads, optim))


@pytest.mark.parametrize(
    ("stage", "weights", "grads", "optim"),
    [
        # 4 GPUs. ZeRO-0 (DDP): nothing sharded.
        (0, 2 * P, 2 * P, 12 * P),
        # ZeRO-1/2 (DeepSpeed's estimator, memory.rst): the 16-bit gradients stay whole and an fp32 gradient
        # partition joins the fp32 master and moments: 16P/4.
        (1, 2 * P, 2 * P, 4 * P),
        (2, 2 * P, 2 * P, 4 * P),
        # ZeRO-3 also the weights and 16-bit gradients, plus the gathered largest layer at 4 B/param: 18P/4 in
        # all, as DeepSpeed's estimate_zero3 counts.
        (3, P / 2 + 4 * LARGEST, P / 2, 4 * P),
    ],
)
def test_zero_stages_divide_by_data_parallel_size(stage: int, weights: float, grads: float, optim: float) -> None:
    assert model_states_bytes(TrainSetup("full", n_gpus=4, zero_stage=stage)) == pytest.approx(
        (weights, grads, optim))


def test_lora_keeps_base_weights_frozen_and_adapters_in_fp32() -> None:
    # r=4 on every linear: 7,424 adapter params x (4 B fp32 grads, 4 B fp32 copy + 8 B Adam = 12 B).
    mem = estimate_memory(decoder(), TrainSetup("lora", lora_rank=4))
    assert mem.trainable_params == 7_424
    assert mem.weights_gib * GIB == pytest.approx(2 * P)
    assert mem.gradients_gib * GIB == pytest.approx(4 * 7_424)
    assert mem.optimizer_gib * GIB == pytest.approx(12 * 7_424)


def test_freeze_trains_the_last_layers_only() -> None:
    # freeze_trainable_layers=1 of 2: one layer's linears = 61,440 / 2 = 30,720 trainable, at 2 + 12 B.
    mem = estimate_memory(decoder(), TrainSetup("freeze", freeze_trainable_layers=1))
    assert mem.trainable_params == 30_720
    assert mem.optimizer_gib * GIB == pytest.approx(12 * 30_720)


@pytest.mark.parametrize(
    ("bits", "per_linear_param"),
    [
        # NF4 + double quantisation: 4 + 0.127 bits (QLoRA paper, sizing.md A5).
        (4, 4.127 / 8),
        # LLM.int8: 1 B + 6 % quantisation overhead (gpu_poor, A5).
        (8, 1.06),
    ],
)
def test_qlora_quantises_linears_and_keeps_embeddings_16_bit(bits: int, per_linear_param: float) -> None:
    # 61,440 linear params quantised; embedding + lm_head + norms (128,320) stay 2 B.
    mem = estimate_memory(decoder(), TrainSetup("qlora", quant_bits=bits, lora_rank=4))
    assert mem.weights_gib * GIB == pytest.approx(LINEAR * per_linear_param + (P - LINEAR) * 2)


def test_qlora_dequant_buffer_is_the_largest_quantised_linear() -> None:
    # Regression: the buffer was sized on the largest tensor, which for big-vocabulary models is the 16-bit
    # embedding (never dequantised). Largest quantised linear here: 64 x 96 = 6,144 -> 2 copies x 2 B.
    lora = estimate_memory(decoder(), TrainSetup("lora", lora_rank=4))
    qlora = estimate_memory(decoder(), TrainSetup("qlora", quant_bits=4, lora_rank=4))
    frag = FRAGMENTATION * (qlora.weights_gib + qlora.gradients_gib + qlora.optimizer_gib + qlora.activations_gib)
    assert qlora.overhead_gib == pytest.approx(CUDA_CONTEXT_GIB + 4 * 6_144 / GIB + frag)
    assert lora.activations_gib == qlora.activations_gib


def test_decoder_layer_activations_by_hand() -> None:
    # s=8, b=2, h=64 -> sbh = 1,024; KV dim 2 x 16 = 32; I = 96 (16-bit activations).
    # attention: QKV input 2sbh + Q 2sbh + K,V 4*sb*32 + o_proj input 2sbh = 6,144 + 2,048 = 8,192
    # scores, fused kernel: fp32 logsumexp 4 * heads * s * b = 256
    # SwiGLU MLP: input 2sbh + gate, up, act(gate), product 8*sb*I = 2,048 + 12,288 = 14,336
    # two norms: 4sbh = 4,096                                    -> 26,880 bytes per layer
    setup = TrainSetup("full", seq_len=8, micro_batch=2)
    assert _decoder_layer_act_bytes(decoder(), setup) == 26_880
    # Without a fused kernel the 5*a*s^2*b score term (Korthikanti) replaces the logsumexp: 5 x 4 x 64 x 2 = 2,560.
    assert _decoder_layer_act_bytes(decoder(), TrainSetup("full", seq_len=8, micro_batch=2,
                                                          fused_attention=False)) == 26_880 - 256 + 2_560


def test_no_checkpointing_keeps_every_layer_plus_logits() -> None:
    # 2 layers x 26,880 + logits s*b*V*12 B = 16 x 1,000 x 12 = 192,000 -> 245,760 bytes.
    setup = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=False)
    assert activation_gib(decoder(), setup) * GIB == pytest.approx(245_760)


def test_logits_are_costed_at_the_fp32_upcast() -> None:
    # Bug (issue 12): logits at 8 B per vocab entry per token; HF's loss path keeps bf16 logits (2), their fp32
    # upcast (4), the fp32 log-softmax (4) and the bf16 gradient (2): 12 B. The logits term grows with b x s.
    one = TrainSetup("full", seq_len=8, micro_batch=1, grad_ckpt=True)
    two = replace(one, micro_batch=2)
    layers_only = 2 * 2 * 8 * 64  # layer inputs 2sbh x 2 layers at b=1
    logits_one = activation_gib(decoder(), one) * GIB - layers_only - _decoder_layer_act_bytes(decoder(), one)
    assert logits_one == pytest.approx(8 * 1_000 * 12)
    assert activation_gib(decoder(), two) > 1.9 * activation_gib(decoder(), one)


def test_checkpointing_keeps_layer_inputs_and_one_recomputed_layer() -> None:
    # Layer inputs 2sbh x 2 layers = 4,096 + one layer's 26,880 + logits 192,000 = 222,976 bytes.
    setup = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=True)
    assert activation_gib(decoder(), setup) * GIB == pytest.approx(222_976)


@pytest.mark.parametrize(("s", "b"), [(512, 1), (2048, 4), (4096, 2)])
def test_gpt_layer_matches_korthikanti_less_dropout_masks(s: int, b: int) -> None:
    # Korthikanti et al. (sizing.md A2): sbh(34 + 5as/h) bytes per GPT layer without recomputation. It counts two
    # 1-byte dropout masks (attention output, MLP output) that dropout-free LLM training does not keep: -2sbh.
    m = gpt_like(hidden=256, heads=8)
    h, a = 256, 8
    expected = s * b * h * (34 + 5 * a * s / h) - 2 * s * b * h
    got = _decoder_layer_act_bytes(m, TrainSetup("full", seq_len=s, micro_batch=b, fused_attention=False))
    assert got == pytest.approx(expected)


def test_fused_attention_is_linear_in_sequence_length() -> None:
    # FlashAttention never stores s x s scores (A7): doubling s doubles the layer's activations exactly.
    m = decoder()
    one = _decoder_layer_act_bytes(m, TrainSetup("full", seq_len=1024))
    two = _decoder_layer_act_bytes(m, TrainSetup("full", seq_len=2048))
    assert two == pytest.approx(2 * one)
    unfused = [_decoder_layer_act_bytes(m, TrainSetup("full", seq_len=s, fused_attention=False))
               for s in (1024, 2048)]
    assert unfused[1] > 2 * unfused[0]  # the s^2 term grows faster


def test_overheads_context_nccl_and_fragmentation() -> None:
    # One GPU: CUDA context 0.9 GiB + 7 % of the other terms. Several GPUs: + NCCL 1.5 GiB.
    one = estimate_memory(decoder(), TrainSetup("full"))
    terms = one.weights_gib + one.gradients_gib + one.optimizer_gib + one.activations_gib
    assert one.overhead_gib == pytest.approx(CUDA_CONTEXT_GIB + FRAGMENTATION * terms)
    two = estimate_memory(decoder(), TrainSetup("full", n_gpus=2))
    terms2 = two.weights_gib + two.gradients_gib + two.optimizer_gib + two.activations_gib
    assert two.overhead_gib == pytest.approx(CUDA_CONTEXT_GIB + NCCL_GIB + FRAGMENTATION * terms2)
    assert one.per_gpu_gib == pytest.approx(terms + one.overhead_gib)


@pytest.mark.parametrize(
    ("stage", "offload", "n", "host_bytes_per_param"),
    [
        # DeepSpeed CPU RAM (memory.rst, sizing.md A3), additional_buffer_factor 1.5:
        # ZeRO-3 with zero.Init, optimizer offload: params x 16 x 1.5.
        (3, "optimizer", 4, 16 * 1.5),
        # ZeRO-3 offload of params + optimizer: params x 18 x 1.5.
        (3, "all", 4, 18 * 1.5),
        # ZeRO-2 offload on 2 GPUs: params x max(4 x 2, 16) x 1.5.
        (2, "optimizer", 2, 16 * 1.5),
        # ZeRO-2 offload on 8 GPUs: every process first builds the fp32 model -> max(4 x 8, 16) = 32.
        (2, "optimizer", 8, 32 * 1.5),
        # No offload: nothing planned on the host.
        (3, "none", 4, 0.0),
    ],
)
def test_offload_host_ram_follows_deepspeed(stage: int, offload: str, n: int, host_bytes_per_param: float) -> None:
    mem = estimate_memory(decoder(), TrainSetup("full", n_gpus=n, zero_stage=stage, offload=offload))  # type: ignore[arg-type]
    assert mem.host_ram_gib * GIB == pytest.approx(P * host_bytes_per_param)


@pytest.mark.parametrize(
    ("stage", "offload", "weights"),
    [
        # ZeRO-Offload: fp16 params stay on the GPU (2P), gradients and optimizer go to the CPU (DeepSpeed: 2 x params).
        (2, "optimizer", 2 * P),
        # ZeRO-3 optimizer offload: the fp16 partition 2P/4 + gathered layer (DeepSpeed case 3).
        (3, "optimizer", 2 * P / 4 + 4 * LARGEST),
        # ZeRO-3 offload of everything: only the gathered layer (DeepSpeed case 2).
        (3, "all", 4 * LARGEST),
    ],
)
def test_offload_leaves_no_optimizer_or_gradients_on_the_gpu(stage: int, offload: str, weights: float) -> None:
    # Regression: gradients used to stay on the GPU under offload, which DeepSpeed's GPU formulas do not count.
    mem = estimate_memory(decoder(), TrainSetup("full", n_gpus=4, zero_stage=stage, offload=offload))  # type: ignore[arg-type]
    assert mem.optimizer_gib == 0
    assert mem.gradients_gib == 0
    assert mem.weights_gib * GIB == pytest.approx(weights)


def test_memory_terms_of_real_model_are_reported_separately(model) -> None:
    # Qwen2-7B full, one GPU, bf16: weights 2 B x 7.6157e9 = 14.19 GiB, grads the same, optimizer 12 B = 85.11 GiB.
    mem = estimate_memory(model("Qwen2-7B"), TrainSetup("full"))
    assert mem.weights_gib == pytest.approx(7_615_616_512 * 2 / GIB)
    assert mem.gradients_gib == pytest.approx(7_615_616_512 * 2 / GIB)
    assert mem.optimizer_gib == pytest.approx(7_615_616_512 * 12 / GIB)
    assert set(mem.as_dict()) == {"per_gpu_gib", "weights_gib", "gradients_gib", "optimizer_gib",
                                  "activations_gib", "overhead_gib"}
