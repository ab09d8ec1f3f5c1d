"""Stored activations of one micro-batch: per decoder layer by checkpointing mode, and the loss's logits.

Per layer after Korthikanti et al. 2022 (sizing.md A2), adapted to SwiGLU MLPs and GQA, 16-bit activations:

    attention: QKV input 2sbh + Q 2sbh + K,V 4*s*b*kv + o_proj input 2sbh + the kernel's score term
    SwiGLU MLP: input 2sbh + gate, up, act(gate), product 8*s*b*I
    two norms: 4sbh

Score term: FlashAttention / SDPA keep the fp32 logsumexp, 4*heads*s*b (FlashAttention-2 paper; the s x s matrix is
never stored, A7). Eager attention (transformers' eager_attention_forward) keeps the fp32 softmax output (4 B, for
the softmax backward) and its 16-bit copy (2 B, for the AV matmul) per score, heads*s^2*b, and repeat_kv's expanded
K and V for grouped-query heads.

A linear whose weight is frozen needs no copy of its input for the backward: with LoRA on the attention only (qv /
attn), the MLP's input and down_proj's input are not kept.

Checkpointing (A6): `full` keeps each layer's input (2sbh; 4sbh when prepare_model_for_kbit_training has put the
residual stream in fp32) and recomputes one layer at a time; `selective` keeps the linear layers' outputs and
recomputes the attention core and the elementwise ops (Megatron-LM's selective recomputation; torchtune's and
PyTorch's op-level selective checkpointing keep the matmul outputs the same way): no s^2 scores, no norm or
activation-function outputs.

Logits (full vocabulary, Hugging Face's loss path): the bf16 logits the model output keeps (2 B), the fp32
log-softmax saved for the backward (4 B), its fp32 gradient (4 B) and the bf16 gradient (2 B): 12 B per vocabulary
entry per token; 16 B when the head runs in fp32 (prepare_model_for_kbit_training upcasts it). A chunked or fused
cross-entropy (Liger's fused linear cross-entropy, Cut Cross-Entropy, torchtune's LinearCrossEntropyLoss, TRL's
chunked_nll) never holds the whole: Liger sizes its chunk so the chunk's logits have about as many elements as the
hidden states (chunk_size = BT / ceil(V / H), rounded to a power of two), kept in fp32 with their fp32 gradient,
plus the bf16 gradient of the hidden states: 10 B per hidden element.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.params import head_dim, shared_expert_width
from service.sizing.types import GIB, TrainSetup

LOGIT_BYTES = 12  # bf16 logits 2 + fp32 log-softmax 4 + fp32 grad 4 + bf16 grad 2 (see module docstring)
LOGIT_BYTES_FP32_HEAD = 16  # fp32 logits 4 + log-softmax 4 + grad 4 + grad of the fp32 logits 4
FUSED_CE_BYTES = 10  # per hidden element: fp32 chunk logits 4 + their fp32 gradient 4 + bf16 hidden gradient 2
EAGER_SCORE_BYTES = 6  # fp32 softmax output 4 + its 16-bit copy 2, per score (transformers eager attention)
FLASH_LSE_BYTES = 4  # fp32 logsumexp per head and token (FlashAttention-2)
# Non-transformer models (estimates, unverified): stored activations per sample. CNNs: 12.5 MiB per forward
# GFLOP (ResNet-50, 8.2 GFLOPs at 224 px, ~100 MiB/sample in mixed precision); diffusion UNets at 1024 px:
# 12 GiB/sample, 3 GiB with checkpointing. Checkpointing keeps ~30 % of CNN activations.
ACT_MIB_PER_GFLOP = 12.5
DIFFUSION_ACT_GIB = 12.0
CKPT_KEEP_NON_TRANSFORMER = 0.3


def _mlp_width(m: ModelSpec) -> float:
    """Intermediate width a token passes through (MoE: top-k experts and the shared expert)."""
    if m.moe is not None:
        return float(m.moe.moe_intermediate_size * m.moe.top_k + shared_expert_width(m))
    return float(m.intermediate_size or 0)


def _kv_dim(m: ModelSpec) -> int:
    heads = m.num_heads or 0
    return (m.num_kv_heads or heads) * head_dim(m) if m.mla is None else (m.hidden_size or 0)


def _h_bytes(setup: TrainSetup) -> int:
    """Bytes per element of the residual stream: fp32 when the embedding is fp32 (fp32 weights, or QLoRA after
    prepare_model_for_kbit_training); autocast does not cast the residual additions."""
    return 4 if setup.fp32_weights or setup.method == "qlora" and setup.kbit_upcast else 2


def _score_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    s, b, heads = setup.seq_len, setup.micro_batch, m.num_heads or 0
    if setup.fused_attention:
        return float(FLASH_LSE_BYTES * heads * s * b)
    expanded_kv = 4 * s * b * max(0, heads * head_dim(m) - _kv_dim(m)) if m.mla is None else 0
    return float(EAGER_SCORE_BYTES * heads * s * s * b + expanded_kv)


def decoder_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """Stored activations of one transformer layer for one micro-batch, without recomputation."""
    s, b = setup.seq_len, setup.micro_batch
    h, hb = m.hidden_size or 0, _h_bytes(setup)
    inter = _mlp_width(m)
    frozen_mlp = setup.method in ("lora", "qlora") and setup.lora_targets != "all_linear"
    mlp: float
    if m.mlp == "gelu":
        mlp = 2 * s * b * h + 2 * 2 * s * b * (m.intermediate_size or 0)  # fc1 input, gelu input + fc2 input
    else:
        per_inter = 4 if setup.liger_swiglu else (6 if frozen_mlp else 8)  # Liger: gate and up only
        mlp = (0 if frozen_mlp else hb * s * b * h) + per_inter * s * b * inter
    attn = hb * s * b * h + 2 * s * b * h + 4 * s * b * _kv_dim(m) + 2 * s * b * h  # qkv input, Q, K+V, o input
    norms = 2 * hb * s * b * h
    return float(attn + _score_bytes(m, setup) + mlp + norms)


def selective_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """One layer under selective recomputation: its input and the linear layers' outputs (Q, K, V, attention
    output, o_proj output, gate, up, down_proj output) plus the kernel's logsumexp."""
    s, b = setup.seq_len, setup.micro_batch
    h, hb = m.hidden_size or 0, _h_bytes(setup)
    inter = (m.intermediate_size or 0) if m.mlp == "gelu" else 2 * _mlp_width(m)
    return float(hb * s * b * h + 2 * s * b * (4 * h + 2 * _kv_dim(m) + inter)
                 + FLASH_LSE_BYTES * (m.num_heads or 0) * s * b)


def logits_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """The loss's peak over the vocabulary (decoders only)."""
    if m.kind != "decoder":
        return 0.0
    tokens = setup.seq_len * setup.micro_batch
    if setup.loss == "chunked":
        return float(FUSED_CE_BYTES * tokens * min(m.hidden_size or 0, m.vocab_size or 0))
    per = LOGIT_BYTES_FP32_HEAD if setup.method == "qlora" and setup.kbit_upcast else LOGIT_BYTES
    return float(tokens * (m.vocab_size or 0) * per)


def activation_gib(m: ModelSpec, setup: TrainSetup) -> float:
    """Peak stored activations of one micro-batch, logits included (GiB)."""
    if m.kind in ("cnn", "diffusion"):
        keep = CKPT_KEEP_NON_TRANSFORMER if setup.grad_ckpt else 1.0
        if m.kind == "diffusion":
            return setup.micro_batch * DIFFUSION_ACT_GIB * (0.25 if setup.grad_ckpt else 1.0)
        return setup.micro_batch * (m.gflops_per_sample or 0.0) * ACT_MIB_PER_GFLOP / 1024 * keep
    layers = m.num_layers or 0
    per_layer = decoder_layer_act_bytes(m, setup)
    s, b, h = setup.seq_len, setup.micro_batch, m.hidden_size or 0
    mode = setup.checkpointing
    if setup.activation_offload:  # torchtune: saved tensors stream to CPU; one layer's stay while it computes
        stored = per_layer if mode == "none" else min(per_layer, layers * _h_bytes(setup) * s * b * h + per_layer)
    elif mode == "full":  # layer inputs + one layer recomputed (A6)
        stored = layers * _h_bytes(setup) * s * b * h + per_layer
    elif mode == "selective":  # every layer's kept outputs + the one whose core attention is recomputed
        stored = layers * selective_layer_act_bytes(m, setup) + _score_bytes(m, setup)
    else:
        stored = layers * per_layer
    return (stored + logits_bytes(m, setup)) / GIB
