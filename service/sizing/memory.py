"""GPU memory per device for training, every term reported.

Sources (shared/reference/sizing.md): model states from the ZeRO paper and DeepSpeed's estimator (A3:
mixed-precision AdamW = 2 B weights + 2 B grads + 12 B optimizer = 16 B/param, ZeRO-1/2/3 shard optimizer /
+grads / +weights, ZeRO-3 gathers the largest layer at 4 B/param); pure bf16 AdamW 8 B/param and 8-bit Adam
(LLaMA-Factory table B1, Eleuther A1); QLoRA NF4 + double quantisation 4.127 bits/param with embeddings and
lm_head kept 16-bit (A5); activations per layer after Korthikanti et al. (A2) adapted to SwiGLU and GQA,
without the s^2 scores when a fused attention kernel runs (A7), layer inputs only under checkpointing (A6);
logits b*s*V*12 B (fp32 upcast in the loss path); CUDA context 0.9 GiB, NCCL 1.5 GiB, fragmentation 7 % (B8, E1).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import ModelSpec
from service.sizing.params import ParamCounts, count_params, head_dim, lora_params, shared_expert_width
from service.sizing.types import GIB, MemoryBreakdown, Offload, TrainSetup

CUDA_CONTEXT_GIB = 0.9  # torch 2.1 eager on A100 measured 0.92 GB (stas00, sizing.md B8)
NCCL_GIB = 1.5  # torch.distributed init "expect ~1-2GB" (B8)
FRAGMENTATION = 0.07  # allocator fragmentation 5-10 % (sizing.md E1)
NF4_BYTES = 4.127 / 8  # NF4 + double quantisation (A5)
INT8_BYTES = 1.0 + 0.06  # LLM.int8 weights + ~6 % quantisation overhead (gpu_poor, A5)
# Logits per token and vocabulary entry in Hugging Face's loss path: the bf16 logits (2 B), their fp32 upcast (4 B),
# the fp32 log-softmax kept for the backward (4 B) and the bf16 gradient (2 B). Fitted check: the Qwen A100 table's
# memory growth with context (evals/anchors.yaml) is 11-13 B per vocab entry per token after the layer terms.
LOGIT_BYTES = 12
# Non-transformer models (estimates, unverified): stored activations per sample. CNNs: 12.5 MiB per forward
# GFLOP (ResNet-50, 8.2 GFLOPs at 224 px, ~100 MiB/sample in mixed precision); diffusion UNets at 1024 px:
# 12 GiB/sample, 3 GiB with checkpointing. Checkpointing keeps ~30 % of CNN activations.
ACT_MIB_PER_GFLOP = 12.5
DIFFUSION_ACT_GIB = 12.0
CKPT_KEEP_NON_TRANSFORMER = 0.3
UNET_LORA_FRACTION = 0.01  # estimate: rank 8-32 LoRA on a diffusion UNet's attention layers, ~1 % of its weights
DS_BUFFER_FACTOR = 1.5  # DeepSpeed estimator's additional_buffer_factor for CPU RAM (A3)


def _weight_bytes_per_param(setup: TrainSetup) -> float:
    return 4.0 if setup.precision == "fp32" else 2.0


def _state_bytes(setup: TrainSetup) -> tuple[float, float]:
    """(gradient bytes, optimizer bytes) per trainable parameter for full-parameter training."""
    if setup.precision == "pure_bf16":
        return 2.0, 4.0  # bf16 grads, two bf16 Adam moments (8 B/param in all with the weights)
    if setup.precision == "fp32":
        return 4.0, 8.0
    if setup.optimizer == "adamw_8bit":
        return 2.0, 6.0  # fp32 master 4 + 8-bit moments 2 (Eleuther A1)
    return 2.0, 12.0  # fp32 master 4 + momentum 4 + variance 4 (ZeRO paper K=12)


def _frozen_weight_gib(m: ModelSpec, c: ParamCounts, setup: TrainSetup) -> float:
    if setup.method != "qlora":
        return c.total * _weight_bytes_per_param(setup) / GIB
    quant = NF4_BYTES if (setup.quant_bits or 4) == 4 else INT8_BYTES
    rest = c.total - c.linear  # embeddings, lm_head, norms stay 16-bit
    return (c.linear * quant + rest * 2.0) / GIB


def trainable_params(m: ModelSpec, c: ParamCounts, setup: TrainSetup) -> float:
    if setup.method in ("full", "pretrain"):
        return c.total
    if setup.method == "freeze":
        layers = max(1, m.num_layers or 1)
        per_layer = c.linear / layers
        return per_layer * min(setup.freeze_trainable_layers, layers)
    if m.kind in ("cnn", "diffusion"):
        return c.total * UNET_LORA_FRACTION  # no per-layer shapes in the catalog for these
    return lora_params(c, setup.lora_rank)


def _decoder_layer_act_bytes(m: ModelSpec, setup: TrainSetup) -> float:
    """Stored activations of one transformer layer for one micro-batch, 16-bit activations."""
    s, b = setup.seq_len, setup.micro_batch
    h = m.hidden_size or 0
    heads = m.num_heads or 0
    kv_dim = (m.num_kv_heads or heads) * head_dim(m) if m.mla is None else h
    if m.mlp == "gelu":
        mlp = 2 * s * b * h + 2 * 2 * s * b * (m.intermediate_size or 0)  # fc1 input, gelu input + fc2 input
    elif m.moe is not None:
        e = m.moe
        mlp = 2 * s * b * h + 8 * s * b * (e.moe_intermediate_size * e.top_k + shared_expert_width(m))
    else:
        mlp = 2 * s * b * h + 8 * s * b * (m.intermediate_size or 0)  # input, gate, up, act(gate), product
    attn = 2 * s * b * h + 2 * s * b * h + 4 * s * b * kv_dim + 2 * s * b * h  # qkv input, Q, K+V, o input
    scores = 4 * heads * s * b if setup.fused_attention else 5 * heads * s * s * b  # logsumexp vs s^2 (A2)
    norms = 4 * s * b * h
    return float(attn + scores + mlp + norms)


def activation_gib(m: ModelSpec, setup: TrainSetup) -> float:
    if m.kind in ("cnn", "diffusion"):
        keep = CKPT_KEEP_NON_TRANSFORMER if setup.grad_ckpt else 1.0
        if m.kind == "diffusion":
            return setup.micro_batch * DIFFUSION_ACT_GIB * (0.25 if setup.grad_ckpt else 1.0)
        return setup.micro_batch * (m.gflops_per_sample or 0.0) * ACT_MIB_PER_GFLOP / 1024 * keep
    layers = m.num_layers or 0
    per_layer = _decoder_layer_act_bytes(m, setup)
    h = m.hidden_size or 0
    s, b = setup.seq_len, setup.micro_batch
    # with checkpointing: layer inputs + one layer recomputed (A6)
    stored = layers * 2 * s * b * h + per_layer if setup.grad_ckpt else layers * per_layer
    logits = s * b * (m.vocab_size or 0) * LOGIT_BYTES if m.kind == "decoder" else 0
    return (stored + logits) / GIB


def estimate_memory(m: ModelSpec, setup: TrainSetup) -> MemoryBreakdown:
    """Per-GPU memory for one training setup (see module docstring for every constant's source)."""
    c = count_params(m)
    n = max(1, setup.n_gpus)
    z = setup.zero_stage
    notes: list[str] = []
    trainable = trainable_params(m, c, setup)
    grad_b, opt_b = _state_bytes(setup)
    if setup.method in ("lora", "qlora"):
        grad_b, opt_b = 4.0, 12.0  # adapters kept in fp32: fp32 grads, fp32 weights copy counted in opt
        notes.append(f"LoRA rank {setup.lora_rank} on all linear layers: {trainable / 1e6:.1f}M trainable")

    weights = _frozen_weight_gib(m, c, setup)
    grads = trainable * grad_b / GIB
    optim = trainable * opt_b / GIB
    host = 0.0
    if z >= 1:
        # DeepSpeed keeps an fp32 gradient partition next to the fp32 master and moments (16 B/param sharded),
        # and the 16-bit gradients whole under ZeRO-1/2 (its estimator's 4 B/param, memory.rst, sizing.md A3)
        optim = trainable * (opt_b + 4.0) / GIB / n
    if z >= 3:
        grads /= n
    if z >= 3:
        weights = weights / n + 4 * c.largest_layer / GIB  # gathered fp16 layer + its grads (DeepSpeed)
        notes.append("ZeRO-3 gathers the largest layer on every GPU (4 B/param)")
    if setup.offload in ("optimizer", "all"):
        # DeepSpeed CPU RAM x 1.5 buffer (A3): ZeRO-3 with zero.Init params x 16 (optimizer) or 18 (all), the
        # job's total (the planner divides it over nodes); ZeRO-2 (one node here) params x max(4 x GPUs, 16),
        # since every process first builds the fp32 model on the CPU. The fp32 gradients live on the CPU with
        # the optimizer: DeepSpeed's GPU formulas keep no gradient partition on the GPU under offload.
        factor = 18 if setup.offload == "all" else 16
        host_bytes = trainable * factor if z >= 3 else max(4 * n * c.total, factor * trainable)
        host = host_bytes * DS_BUFFER_FACTOR / GIB
        optim = 0.0
        grads = 0.0
        if setup.offload == "all":
            weights = 4 * c.largest_layer / GIB
            notes.append("ZeRO-3 offload of parameters and optimizer to CPU RAM: slow, needs fast host memory")
        else:
            notes.append("ZeRO offload of the optimizer to CPU RAM")

    acts = activation_gib(m, setup)
    overhead = CUDA_CONTEXT_GIB + (NCCL_GIB if n > 1 else 0.0)
    if setup.method == "qlora":
        # dequantised bf16 copy of the largest quantised linear, fwd + bwd (embeddings stay 16-bit: no copy)
        largest_quantised = max((x.d_in * x.d_out for x in c.linears), default=c.largest_layer)
        overhead += 2 * largest_quantised * 2 / GIB
    overhead += FRAGMENTATION * (weights + grads + optim + acts)
    return MemoryBreakdown(
        weights_gib=weights,
        gradients_gib=grads,
        optimizer_gib=optim,
        activations_gib=acts,
        overhead_gib=overhead,
        trainable_params=trainable,
        host_ram_gib=host,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class DeepSpeedStates:
    """DeepSpeed's estimate of model-state memory (params + grads + Adam states, no activations), GiB."""

    gpu_gib: float  # per GPU
    cpu_gib: float  # per node


def deepspeed_model_states_gib(
    params: float,
    largest_layer: float,
    gpus_per_node: int,
    stage: int,
    offload: Offload = "none",
    nodes: int = 1,
    zero_init: bool = True,
) -> DeepSpeedStates:
    """The formulas of DeepSpeed's `estimate_zero{2,3}_model_states_mem_needs` (docs memory.rst, sizing.md A3).

    DeepSpeed's convention differs from the ZeRO paper's that `estimate_memory` follows: it keeps the fp16
    params and fp16 grads whole under ZeRO-2 (4 B/param) and counts fp32 grads (16 B/param sharded; 18 with the
    fp16 params under ZeRO-3), where the paper counts 2 + 2 + 12 = 16 B/param in all.
    """
    total_gpus = gpus_per_node * nodes
    if stage == 2:
        if offload == "all":
            raise ValueError("ZeRO-2 cannot offload parameters; use stage 3")
        if offload == "optimizer":
            gpu = 2 * params
            cpu = params * max(4 * gpus_per_node, 16) * DS_BUFFER_FACTOR
        else:
            gpu = 4 * params + int(16 * params / total_gpus)
            cpu = params * 4 * gpus_per_node * DS_BUFFER_FACTOR  # only while the model is first built
    elif stage == 3:
        gpus_factor = 1 / nodes
        gathered = 4 * largest_layer  # fp16 params gathered + fp16 grads of the largest layer
        if offload == "all":
            gpu = gathered
            cpu = params * (18 * gpus_factor if zero_init else max(4 * gpus_per_node, 18 * gpus_factor))
        elif offload == "optimizer":
            gpu = gathered + int(2 * params / total_gpus)
            cpu = params * (16 * gpus_factor if zero_init else max(4 * gpus_per_node, 16 * gpus_factor))
        else:
            gpu = gathered + int(18 * params / total_gpus)
            cpu = (largest_layer if zero_init else params) * 4 * gpus_per_node
        cpu *= DS_BUFFER_FACTOR
    else:
        raise ValueError(f"DeepSpeed's estimator covers ZeRO stages 2 and 3, not {stage}")
    return DeepSpeedStates(gpu / GIB, cpu / GIB)
