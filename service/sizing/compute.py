"""Training FLOPs per token, and the published at-scale MFU used for cluster-scale pre-training.

FLOPs per token: 6N for full training (Eleuther A1), 4N when weights are frozen (LoRA/QLoRA need no
weight-gradient GEMMs, sizing.md E2; freeze pays the weight gradients of its trainable share). Attention is causal:
the score and value matmuls cost 2*s*L*H*d per token forward (half of the non-causal 4*s*L*H*d that verl counts,
D7) and twice that backward. Two FLOP counts are kept apart:

- model FLOPs (what MFU is measured on, what the one-line rule 6*N*tokens approximates);
- executed FLOPs: model FLOPs + the forward that activation recomputation runs again (2N + the attention forward,
  A6) + the score matmul that FlashAttention's backward recomputes (FlashAttention-2 paper: the backward runs five
  matmuls to the forward's two). The node-level throughput model (service/sizing/throughput.py) divides executed
  FLOPs by a hardware-utilisation prior, so recomputation is never counted twice.
"""

from __future__ import annotations

import math

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.params import count_params, flops_matmul_params, head_dim, moe_layers, softmax_layers
from service.sizing.types import MfuPrior, TrainSetup

SPOT_RERUN_OVERHEAD = 0.15  # assumed share of work redone after spot interruptions (estimate)
CAUSAL_ATTN_FWD = 2.0  # x s*L*H*d per token: QK^T and AV over half the keys on average (causal mask)
FLASH_BWD_RECOMPUTE = 1.0  # x s*L*H*d: FlashAttention's backward recomputes QK^T (FlashAttention-2, Dao 2023)


def _attn_unit(m: ModelSpec, seq_len: int) -> float:
    """s*L*H*d for the model's attention (MLA: the q/k head width)."""
    if m.kind not in ("decoder", "encoder", "vision_transformer"):
        return 0.0
    layers, heads = softmax_layers(m), m.num_heads or 0  # linear-attention layers have no s^2 term
    hd = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim if m.mla else head_dim(m)
    return float(seq_len * layers * heads * hd)


def _dense_coeff(method: str, trainable_fraction: float) -> float:
    if method in ("full", "pretrain"):
        return 6.0
    if method == "freeze":
        return 4.0 + 2.0 * trainable_fraction
    return 4.0


def model_flops_per_token(m: ModelSpec, setup: TrainSetup, trainable_fraction: float = 1.0) -> float:
    """Model FLOPs per token (forward + backward, no recomputation), causal attention."""
    n = flops_matmul_params(m)
    causal = m.kind == "decoder"
    attn = _attn_unit(m, setup.seq_len) * (CAUSAL_ATTN_FWD if causal else 2 * CAUSAL_ATTN_FWD) * 3
    return _dense_coeff(setup.method, trainable_fraction) * n + attn


def flops_per_token(m: ModelSpec, setup: TrainSetup, trainable_fraction: float = 1.0) -> float:
    """Executed FLOPs per token: model FLOPs + recomputation (+2N and the attention forward under checkpointing)
    + FlashAttention's recomputed scores."""
    n = flops_matmul_params(m)
    unit = _attn_unit(m, setup.seq_len) * (1.0 if m.kind == "decoder" else 2.0)
    extra = FLASH_BWD_RECOMPUTE * unit if setup.fused_attention else 0.0
    if setup.recomputes_layers:
        extra += 2 * n + CAUSAL_ATTN_FWD * unit
    elif setup.checkpointing == "selective":  # the attention core runs again; the linears do not
        extra += CAUSAL_ATTN_FWD * unit
    extra += setup.frozen_copies * 2 * n  # a reference / reward model's forward on every token
    return model_flops_per_token(m, setup, trainable_fraction) + extra


def expert_flops_share(m: ModelSpec) -> float:
    """Share of the per-token matmul parameters that sit in routed experts (their GEMMs are small: tokens per
    expert = tokens x top_k / experts)."""
    if m.moe is None:
        return 0.0
    c = count_params(m)
    e = m.moe
    layers = moe_layers(m)
    routed = sum(x.d_in * x.d_out * layers * e.top_k for x in c.linears if x.name.startswith("expert_"))
    total = flops_matmul_params(m)
    return routed / total if total else 0.0


def verl_step_flops(m: ModelSpec, seqlens: list[int]) -> float:
    """verl's FLOPs for one training step over sequences (full training, no recomputation, non-causal count)."""
    layers, heads = m.num_layers or 0, m.num_heads or 0
    hd = head_dim(m) if m.mla is None else m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim
    tokens = sum(seqlens)
    return 6 * flops_matmul_params(m) * tokens + 12 * sum(s * s for s in seqlens) * layers * heads * hd


# Cluster-scale pre-training (hundreds to thousands of GPUs, 3D parallelism): published end-to-end MFU on model
# FLOPs, which already includes pipeline bubbles and tensor-parallel communication the node model does not see.
CLUSTER_SCALE_GPUS = 256
_HOPPER_POINTS = ((8.0, 0.20), (70.0, 0.31), (405.0, 0.38))  # Llama 3/3.1 model cards on H100 (C1)
_ARCH_MFU = {
    "ampere": (0.42, "Llama 2 model card on A100-80GB implies 0.39-0.46 MFU; Megatron-LM 41.5 % at 22B (sizing.md C1, C2)"),
    "volta": (0.35, "estimate: V100 has no BF16 or FlashAttention-2; no published MFU in our references"),
    "turing": (0.25, "estimate: T4 is a 70 W inference card; sustained training rates run far below peak"),
    "pascal": (0.35, "estimate against the P40's FP32 rate (no tensor cores)"),
    "ada": (0.35, "estimate: no published Ada training MFU in our references; PCIe only, no NVLink"),
    "blackwell": (0.30, "estimate: B200 software still maturing; no published MFU in our references"),
    "kepler": (0.30, "estimate against the K80's FP32 rate (no tensor cores, no FP16 math)"),
    "ascend": (0.35, "estimate: no published Ascend training MFU in our references (CANN / torch_npu stack)"),
    "cdna3": (0.30, "estimate: no published MI300X training MFU in our references (ROCm stack)"),
}


def _hopper_mfu(params_b: float) -> float:
    pts = _HOPPER_POINTS
    if params_b <= pts[0][0]:
        return pts[0][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if params_b <= x1:
            t = (math.log(params_b) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return y0 + t * (y1 - y0)
    return pts[-1][1]


def cluster_mfu(gpu: GpuSpec, m: ModelSpec) -> MfuPrior:
    """Published MFU of pre-training at cluster scale (model FLOPs basis)."""
    params_b = m.active_params_b or m.params_published_b
    if gpu.arch == "hopper" and gpu.dense_16bit_tflops >= 300:
        return MfuPrior(round(_hopper_mfu(params_b), 4), "Llama 3/3.1 model cards on H100 at 16k GPUs: ~0.20 MFU "
                        "at 8B, ~0.31 at 70B, ~0.38 at 405B (sizing.md C1)")
    if gpu.arch == "hopper":
        return MfuPrior(0.42, "H20: compute-light Hopper; assumed like A100 at scale (estimate)")
    value, src = _ARCH_MFU[gpu.arch]
    return MfuPrior(value, src)
