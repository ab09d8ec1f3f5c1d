"""Memory terms, one formula at a time, on the hand-counted tiny decoder (tests/sizing/specs.py).

P = 189,760 parameters, 61,440 of them in linears, largest tensor 64,000 (the embedding; the head is as large),
one decoder layer 30,880 (linears 30,720 + two norms 128 + half the final norm... counted as (P - 128,000) / 2).
h = 64, KV width 32, I = 96, V = 1,000, 4 heads of 16.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.sizing.activations import (
    activation_gib,
    decoder_layer_act_bytes,
    selective_layer_act_bytes,
)
from service.sizing.buffers import CUDA_CONTEXT_GIB, FRAG_PERSISTENT, FRAG_TRANSIENT, NCCL_GIB
from service.sizing.memory import estimate_memory
from service.sizing.types import GIB, TrainSetup
from tests.sizing.specs import decoder, gpt_like

P = 189_760
LINEAR = 61_440
LARGEST = 64_000
LAYER = (P - 2 * LARGEST) / 2  # 30,880


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
        # Pure bf16 (LLaMA-Factory "8x", torchtune): 2 + 2 + two bf16 moments 4 = 8 B/param.
        (TrainSetup("full", precision="pure_bf16"), 2 * P, 2 * P, 4 * P),
        # fp32 everywhere: 4 B weights, 4 B grads, m + v 8 B = 16 B/param.
        (TrainSetup("full", precision="fp32"), 4 * P, 4 * P, 8 * P),
        # amp with the weights in fp32 (LLaMA-Factory upcasts trainables, TRL loads fp32): 4 + 4 + 8, no master.
        (TrainSetup("full", fp32_weights=True), 4 * P, 4 * P, 8 * P),
        # 8-bit Adam (bitsandbytes): fp32 master 4 + two 1-byte moments 2 = 6 B optimizer.
        (TrainSetup("full", optimizer="adamw_8bit"), 2 * P, 2 * P, 6 * P),
        # Adafactor (factored second moment, no first moment): the fp32 master only.
        (TrainSetup("full", optimizer="adafactor"), 2 * P, 2 * P, 4 * P),
        # Optimizer stepped inside the backward (torchtune optimizer_in_bwd): no gradient buffer.
        (TrainSetup("full", precision="pure_bf16", optimizer_in_bwd=True), 2 * P, 0.0, 4 * P),
        # Pre-training counts as full training.
        (TrainSetup("pretrain"), 2 * P, 2 * P, 12 * P),
    ],
)
def test_full_training_bytes_per_parameter(setup: TrainSetup, weights: float, grads: float, optim: float) -> None:
    assert model_states_bytes(setup) == pytest.approx((weights, grads, optim))


def test_paged_optimizer_states_live_outside_the_allocator() -> None:
    # bitsandbytes paged optimizers use CUDA unified memory: not in allocated/reserved, pageable to CPU RAM.
    mem = estimate_memory(decoder(), TrainSetup("full", precision="pure_bf16", optimizer="paged_adamw_8bit"))
    assert mem.optimizer_gib == 0
    assert mem.paged_gib * GIB == pytest.approx(2 * P)
    assert mem.host_ram_gib * GIB == pytest.approx(2 * P)


@pytest.mark.parametrize(
    ("stage", "weights", "grads", "optim", "buffers"),
    [
        # 4 GPUs, DeepSpeed. ZeRO-0 (DDP): nothing sharded, no buffers.
        (0, 2 * P, 2 * P, 12 * P, 0.0),
        # ZeRO-1: the 16-bit gradients stay whole; an fp32 gradient partition joins the fp32 master and moments.
        (1, 2 * P, 2 * P, 16 * P / 4, 0.0),
        # ZeRO-2: gradients are reduced bucket by bucket (contiguous_gradients): one 16-bit bucket (5e8 elements,
        # capped at the model) instead of whole gradients.
        (2, 2 * P, 0.0, 16 * P / 4, 2 * P),
        # ZeRO-3: weights and 16-bit gradients sharded too, the gradient partition kept 16-bit (the fp32 master and
        # moments: 12 B/param; one sub-group's fp32 gradient only at the step, under the activations here);
        # gathered: up to stage3_max_live_parameters (1e9, here the whole model) in bf16, the largest module's
        # unsharded gradient, and the hidden^2 reduce bucket.
        (3, 2 * P / 4, 2 * P / 4, 12 * P / 4, 2 * P + 2 * LARGEST + 2 * 64 * 64),
    ],
)
def test_zero_stages(stage: int, weights: float, grads: float, optim: float, buffers: float) -> None:
    mem = estimate_memory(decoder(), TrainSetup("full", n_gpus=4, zero_stage=stage))
    assert (mem.weights_gib * GIB, mem.gradients_gib * GIB, mem.optimizer_gib * GIB) == pytest.approx(
        (weights, grads, optim))
    assert mem.buffers_gib * GIB == pytest.approx(buffers)


@pytest.mark.parametrize(
    ("sharding", "gathered"),
    [
        # FSDP1 wrapped per layer: two layers in flight plus the root unit (embedding + head) kept unsharded.
        ("fsdp", min(P, 2 * LAYER + 2 * LARGEST)),
        # FSDP2 with embedding and head as units of their own: the two largest units.
        ("fsdp2", 2 * LARGEST),
    ],
)
def test_fsdp_shards_fp32_states_and_gathers_units(sharding: str, gathered: float) -> None:
    # FSDP MixedPrecision keeps fp32 shards: 4 + 4 + 8 B/param over 4 GPUs; gathers in bf16.
    mem = estimate_memory(decoder(), TrainSetup("full", n_gpus=4, zero_stage=3, sharding=sharding))  # type: ignore[arg-type]
    assert (mem.weights_gib * GIB, mem.gradients_gib * GIB, mem.optimizer_gib * GIB) == pytest.approx(
        (P, P, 2 * P))
    unit_grad = 2 * max(LAYER, LARGEST)
    assert mem.buffers_gib * GIB == pytest.approx(2 * gathered + unit_grad + 2 * 64 * 64)


def test_pure_bf16_under_deepspeed_keeps_the_fp32_master() -> None:
    # DeepSpeed's ZeRO optimizer holds fp32 partitions unless its low-precision flags are set: a bf16 model under a
    # plain DeepSpeed config (LLaMA-Factory's pure_bf16) saves nothing there.
    pure = estimate_memory(decoder(), TrainSetup("full", precision="pure_bf16", n_gpus=4, zero_stage=3))
    amp = estimate_memory(decoder(), TrainSetup("full", n_gpus=4, zero_stage=3))
    assert pure.optimizer_gib == pytest.approx(amp.optimizer_gib)
    # bf16_master_weights_and_grads + bf16_optimizer_states: a bf16 master 2 B + bf16 moments 4 B, sharded.
    low = estimate_memory(decoder(), TrainSetup("full", precision="pure_bf16", n_gpus=4, zero_stage=3,
                                                ds_bf16_master=True))
    assert low.optimizer_gib * GIB == pytest.approx(6 * P / 4)


def test_lora_keeps_base_weights_frozen_and_adapters_in_fp32() -> None:
    # r=4 on every linear: 7,424 adapter params: fp32 copy 4 B (weights), fp32 grads 4 B, Adam moments 8 B.
    mem = estimate_memory(decoder(), TrainSetup("lora", lora_rank=4))
    assert mem.trainable_params == 7_424
    assert mem.weights_gib * GIB == pytest.approx(2 * P + 4 * 7_424)
    assert mem.gradients_gib * GIB == pytest.approx(4 * 7_424)
    assert mem.optimizer_gib * GIB == pytest.approx(8 * 7_424)


@pytest.mark.parametrize(
    ("targets", "extra", "trainable"),
    [
        # q (64->64) and v (64->32): r=4 x (128 + 96) x 2 layers = 1,792.
        ("qv", (), 1_792),
        # q, k, v, o: 4 x (128 + 96 + 96 + 128) x 2 = 3,584.
        ("attn", (), 3_584),
        # every linear, plus the head trained in full (modules_to_save): 7,424 + 64,000.
        ("all_linear", ("lm_head",), 7_424 + 64_000),
    ],
)
def test_lora_targets(targets: str, extra: tuple[str, ...], trainable: float) -> None:
    setup = TrainSetup("lora", lora_rank=4, lora_targets=targets, lora_extra=extra)  # type: ignore[arg-type]
    assert estimate_memory(decoder(), setup).trainable_params == trainable


def test_freeze_trains_the_last_layers_only() -> None:
    # freeze_trainable_layers=1 of 2: one layer's linears = 61,440 / 2 = 30,720 trainable, at 2 + 12 B.
    mem = estimate_memory(decoder(), TrainSetup("freeze", freeze_trainable_layers=1))
    assert mem.trainable_params == 30_720
    assert mem.optimizer_gib * GIB == pytest.approx(12 * 30_720)


@pytest.mark.parametrize(
    ("bits", "kbit_upcast", "per_linear_param", "rest"),
    [
        # NF4 + double quantisation: 4 + 0.127 bits (QLoRA paper, sizing.md A5); the rest in bf16.
        (4, False, 4.127 / 8, 2),
        # LLM.int8: 1 B + 6 % quantisation overhead (gpu_poor, A5).
        (8, False, 1.06, 2),
        # prepare_model_for_kbit_training casts embeddings, head and norms to fp32.
        (4, True, 4.127 / 8, 4),
    ],
)
def test_qlora_quantises_linears(bits: int, kbit_upcast: bool, per_linear_param: float, rest: float) -> None:
    # 61,440 linear params quantised; embedding + lm_head + norms (128,320) kept wide; adapters 7,424 x 4 B.
    mem = estimate_memory(decoder(), TrainSetup("qlora", quant_bits=bits, lora_rank=4, kbit_upcast=kbit_upcast))
    assert mem.weights_gib * GIB == pytest.approx(LINEAR * per_linear_param + (P - LINEAR) * rest + 4 * 7_424)


def test_qlora_dequant_buffer_is_the_largest_quantised_linear() -> None:
    # Regression: the buffer was sized on the largest tensor, which for big-vocabulary models is the 16-bit
    # embedding (never dequantised). Largest quantised linear here: 64 x 96 = 6,144 -> 2 copies x 2 B = 24,576.
    # It lives while a layer computes, never at the loss: it counts only beyond the logits' peak (one token, a
    # chunked loss: 10 B x 64 = 640), and not at all under full-vocabulary logits (12 B x 2,048 x 1,000).
    short = TrainSetup("qlora", quant_bits=4, lora_rank=4, seq_len=1, loss="chunked", fused_optimizer=True)
    lora = estimate_memory(decoder(), replace(short, method="lora", quant_bits=None))
    qlora = estimate_memory(decoder(), short)
    assert qlora.buffers_gib * GIB == pytest.approx(4 * 6_144 - 640)
    assert lora.activations_gib == qlora.activations_gib
    assert estimate_memory(decoder(), TrainSetup("qlora", quant_bits=4, lora_rank=4)).buffers_gib == 0


def test_decoder_layer_activations_by_hand() -> None:
    # What the traced transformers code keeps (evals/traces), s=8, b=2 -> 16 tokens; h=64, q=64, KV 32, I=96:
    # two norms: fp32 input 4 B + the normalised tensor for the weight's gradient 2 B -> 12h = 768 per token
    # linear inputs: attention input 2h, MLP input 2h (shared by q/k/v, gate/up), down_proj's 2I -> 448
    # fused attention: Q 2q, K 2kv, V 2kv, output 2q (o_proj's input is a view of it) -> 384; logsumexp 4 x 4 = 16
    # SwiGLU: gate, up, act(gate) 6I = 576                     -> 2,192 per token x 16 = 35,072 bytes per layer
    setup = TrainSetup("full", seq_len=8, micro_batch=2)
    assert decoder_layer_act_bytes(decoder(), setup) == 35_072
    # Eager: Q and repeat_kv's expanded K, V (2 x 64 each: 384 - 2 x 64 = 256 per token less the kernel output),
    # fp32 softmax (4 B) + its 16-bit copy (2 B) per score: 6 x 4 heads x 8 x 16 = 3,072; the expansion
    # 2 B x 16 x (32 + 32) = 2,048; o_proj's input is a contiguous copy: 2q x 16 = 2,048; no logsumexp.
    eager = replace(setup, attention="eager")
    assert decoder_layer_act_bytes(decoder(), eager) == 35_072 - 128 * 16 - 256 + 3_072 + 2_048 + 2_048


def test_lora_on_attention_only_keeps_no_mlp_inputs() -> None:
    # Frozen linears keep no input; each adapted one keeps its own bf16 copy (PEFT's cast to the fp32 adapter,
    # autocast's back): q and v, 2 x (2h + 2r) = 288 per token. Frozen norm weights: 4h each, 512 per token. The
    # attention core (400) and SwiGLU's 6I (576) stay: 1,776 x 16 = 28,416.
    setup = TrainSetup("lora", seq_len=8, micro_batch=2, lora_targets="qv")
    assert decoder_layer_act_bytes(decoder(), setup) == 28_416


def test_no_checkpointing_keeps_every_layer_plus_logits() -> None:
    # 2 layers x 35,072 + logits s*b*V*12 B = 16 x 1,000 x 12 = 192,000 -> 262,144 bytes.
    setup = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=False)
    assert activation_gib(decoder(), setup) * GIB == pytest.approx(262_144)


def test_logits_are_costed_at_the_fp32_upcast() -> None:
    # Bug (issue 12): logits at 8 B per vocab entry per token; HF's loss path keeps bf16 logits (2), the fp32
    # log-softmax (4), its fp32 gradient (4) and the bf16 gradient (2): 12 B. The logits term grows with b x s.
    one = TrainSetup("full", seq_len=8, micro_batch=1, grad_ckpt=True)
    two = replace(one, micro_batch=2)
    layers_only = 2 * 2 * 8 * 64  # layer inputs 2sbh x 2 layers at b=1
    logits_one = activation_gib(decoder(), one) * GIB - layers_only  # above the one recomputed layer
    assert logits_one == pytest.approx(8 * 1_000 * 12)
    assert activation_gib(decoder(), two) > 1.9 * activation_gib(decoder(), one)


def test_chunked_loss_holds_a_hidden_sized_chunk() -> None:
    # Fused / chunked cross-entropy: fp32 chunk logits + their gradient + bf16 hidden gradient, 10 B x s*b*h
    # = 10 x 16 x 64 = 10,240 instead of the 192,000 of full logits; without checkpointing it adds to the layers.
    full = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=False)
    chunked = replace(full, loss="chunked")
    diff = (activation_gib(decoder(), full) - activation_gib(decoder(), chunked)) * GIB
    assert diff == pytest.approx(192_000 - 10_240)
    # Checkpointed, the recomputed layer (35,072) outgrows the chunk: the peak is the layer's, not the loss's.
    ckpt = replace(chunked, grad_ckpt=True)
    assert activation_gib(decoder(), ckpt) * GIB == pytest.approx(2 * 2 * 16 * 64 + 35_072)


def test_checkpointing_keeps_layer_inputs_and_one_recomputed_layer() -> None:
    # Layer inputs 2sbh x 2 layers = 4,096 + the larger of one recomputed layer (35,072) and the logits
    # (192,000), which the backward frees before it recomputes the last layer (the traces peak at inputs +
    # logits) = 196,096 bytes.
    setup = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=True)
    assert activation_gib(decoder(), setup) * GIB == pytest.approx(196_096)
    # fp32 weights (fp32 embedding): the residual stream, and so the kept layer inputs, are fp32: +4,096 (the
    # logits still outgrow the recomputed layer).
    wide = replace(setup, fp32_weights=True)
    assert activation_gib(decoder(), wide) * GIB == pytest.approx(activation_gib(decoder(), setup) * GIB + 4_096)


def test_selective_checkpointing_keeps_linear_outputs() -> None:
    # Per layer: input 2sbh 2,048 + 2*s*b*(4h + 2*KV + 2I) = 32 x 512 = 16,384 + logsumexp 256 = 18,688;
    # two layers 37,376 + the larger of the recomputed core's 256 and the logits 192,000 = 229,376 bytes:
    # between none and full.
    setup = TrainSetup("full", seq_len=8, micro_batch=2, grad_ckpt=True, ckpt_mode="selective")
    assert selective_layer_act_bytes(decoder(), setup) == 18_688
    assert activation_gib(decoder(), setup) * GIB == pytest.approx(229_376)
    none = activation_gib(decoder(), replace(setup, grad_ckpt=False))
    full = activation_gib(decoder(), replace(setup, ckpt_mode="full"))
    assert full < activation_gib(decoder(), setup) < none


@pytest.mark.parametrize(("s", "b"), [(512, 1), (2048, 4), (4096, 2)])
def test_gpt_layer_follows_korthikanti(s: int, b: int) -> None:
    # Korthikanti et al. (sizing.md A2): sbh(34 + 5as/h) bytes per GPT layer without recomputation. It counts two
    # 1-byte dropout masks (attention output, MLP output) that dropout-free LLM training does not keep (-2sbh) and
    # 5 B per score (16-bit scores and softmax, a 1-byte dropout mask) where transformers' eager attention keeps
    # the fp32 softmax and its 16-bit copy: 6 B.
    m = gpt_like(hidden=256, heads=8)
    h, a = 256, 8
    expected = s * b * h * 32 + 6 * a * s * s * b
    got = decoder_layer_act_bytes(m, TrainSetup("full", seq_len=s, micro_batch=b, attention="eager"))
    assert got == pytest.approx(expected)


def test_fused_attention_is_linear_in_sequence_length() -> None:
    # FlashAttention never stores s x s scores (A7): doubling s doubles the layer's activations exactly.
    m = decoder()
    one = decoder_layer_act_bytes(m, TrainSetup("full", seq_len=1024))
    two = decoder_layer_act_bytes(m, TrainSetup("full", seq_len=2048))
    assert two == pytest.approx(2 * one)
    eager = [decoder_layer_act_bytes(m, TrainSetup("full", seq_len=s, attention="eager")) for s in (1024, 2048)]
    assert eager[1] > 2 * eager[0]  # the s^2 term grows faster


def test_allocated_reserved_and_device_totals() -> None:
    # allocated = the four model terms + buffers; reserved adds the caching allocator's reserve (2 % of the
    # persistent states, 15 % of the per-step tensors); the device total adds the CUDA context (+ NCCL).
    one = estimate_memory(decoder(), TrainSetup("full"))
    states = one.weights_gib + one.gradients_gib + one.optimizer_gib
    assert one.allocated_gib == pytest.approx(states + one.activations_gib + one.buffers_gib)
    assert one.allocator_gib == pytest.approx(FRAG_PERSISTENT * states
                                              + FRAG_TRANSIENT * (one.activations_gib + one.buffers_gib))
    assert one.reserved_gib == pytest.approx(one.allocated_gib + one.allocator_gib)
    assert one.per_gpu_gib == pytest.approx(one.reserved_gib + CUDA_CONTEXT_GIB)
    two = estimate_memory(decoder(), TrainSetup("full", n_gpus=2))
    assert two.runtime_gib == pytest.approx(CUDA_CONTEXT_GIB + NCCL_GIB)
    # The five public terms still add up to the total.
    assert one.per_gpu_gib == pytest.approx(states + one.activations_gib + one.overhead_gib)


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
        # ZeRO-3 optimizer offload: the fp16 partition 2P/4 (gathered parameters are buffers).
        (3, "optimizer", 2 * P / 4),
        # ZeRO-3 offload of everything: nothing resident (the gathered layer is a buffer).
        (3, "all", 0.0),
    ],
)
def test_offload_leaves_no_optimizer_or_gradients_on_the_gpu(stage: int, offload: str, weights: float) -> None:
    # Regression: gradients used to stay on the GPU under offload, which DeepSpeed's GPU formulas do not count.
    mem = estimate_memory(decoder(), TrainSetup("full", n_gpus=4, zero_stage=stage, offload=offload))  # type: ignore[arg-type]
    assert mem.optimizer_gib == 0
    assert mem.gradients_gib == 0
    assert mem.weights_gib * GIB == pytest.approx(weights)



@pytest.mark.parametrize("sharding", ["fsdp", "fsdp2"])
def test_fsdp_cpu_offload_moves_the_parameters_too(sharding: str) -> None:
    # FSDP has one CPU offload (CPUOffload(offload_params=True); FSDP2's CPUOffloadPolicy): the sharded parameters
    # leave the GPU with the optimizer, unlike DeepSpeed's optimizer-only offload. Regression: torchtune's Llama-3.1-70B
    # full fine-tune with fsdp_cpu_offload read 33.6 GiB per GPU against a measured 13.9 GiB.
    fsdp = TrainSetup("full", n_gpus=4, zero_stage=3, offload="optimizer", sharding=sharding)  # type: ignore[arg-type]
    ds = replace(fsdp, sharding="deepspeed")
    plain = replace(fsdp, offload="none")
    assert estimate_memory(decoder(), fsdp).weights_gib == 0
    assert estimate_memory(decoder(), ds).weights_gib * GIB == pytest.approx(2 * P / 4)
    # the layers are still gathered on the GPU while they compute: the same buffers as without offload
    assert estimate_memory(decoder(), fsdp).buffers_gib == pytest.approx(estimate_memory(decoder(), plain).buffers_gib)

def test_memory_terms_of_real_model_are_reported_separately(model) -> None:
    # Qwen2-7B full, one GPU, bf16: weights 2 B x 7.6157e9 = 14.19 GiB, grads the same, optimizer 12 B = 85.11 GiB.
    mem = estimate_memory(model("Qwen2-7B"), TrainSetup("full"))
    assert mem.weights_gib == pytest.approx(7_615_616_512 * 2 / GIB)
    assert mem.gradients_gib == pytest.approx(7_615_616_512 * 2 / GIB)
    assert mem.optimizer_gib == pytest.approx(7_615_616_512 * 12 / GIB)
    assert set(mem.as_dict()) == {"per_gpu_gib", "weights_gib", "gradients_gib", "optimizer_gib",
                                  "activations_gib", "overhead_gib", "allocated_gib", "reserved_gib", "buffers_gib",
                                  "allocator_gib", "runtime_gib", "paged_optimizer_gib", "expected_error_pct",
                                  "expected_error_rows", "expected_error_class"}
