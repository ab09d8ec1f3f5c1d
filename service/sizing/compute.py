"""Training compute and time: FLOPs per token by method, MFU priors from published runs, scaling.

FLOPs: 6N per token for full training (Eleuther A1), 4N when weights are frozen (LoRA/QLoRA need no
weight-gradient GEMMs, sizing.md E2), +2N under activation recomputation (A6), plus the attention term
12*s*L*H*d per token (verl's counter, D7). MFU priors come from published end-to-end runs (sizing.md C1/C2):
they already include the communication of NVLink + RDMA clusters, so scaling only discounts weaker links.
"""

from __future__ import annotations

import math

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.params import flops_matmul_params, head_dim
from service.sizing.types import MfuPrior, TimeEstimate, TrainSetup

# QLoRA runs slower than LoRA because of dequantisation: gpu_poor's cost factor 1.75 (sizing.md B5)
QLORA_SLOWDOWN = 1.75
SPOT_RERUN_OVERHEAD = 0.15  # assumed share of work redone after spot interruptions (estimate)


def flops_per_token(m: ModelSpec, setup: TrainSetup, trainable_fraction: float = 1.0) -> float:
    """Training FLOPs per token (forward + backward [+ recomputation]) for a decoder or encoder."""
    n = flops_matmul_params(m)
    method = setup.method
    if method in ("full", "pretrain"):
        dense = 6 * n
    elif method == "freeze":
        dense = 4 * n + 2 * n * trainable_fraction
    else:
        dense = 4 * n
    if setup.grad_ckpt:
        dense += 2 * n
    attn = 0.0
    if m.kind in ("decoder", "encoder", "vision_transformer"):
        layers, heads = m.num_layers or 0, m.num_heads or 0
        hd = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim if m.mla else head_dim(m)
        attn = 12 * setup.seq_len * layers * heads * hd
        if setup.grad_ckpt:
            attn += 4 * setup.seq_len * layers * heads * hd
    return dense + attn


def verl_step_flops(m: ModelSpec, seqlens: list[int]) -> float:
    """verl's FLOPs for one training step over sequences (full training, no recomputation)."""
    layers, heads = m.num_layers or 0, m.num_heads or 0
    hd = head_dim(m) if m.mla is None else m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim
    tokens = sum(seqlens)
    return 6 * flops_matmul_params(m) * tokens + 12 * sum(s * s for s in seqlens) * layers * heads * hd


# MFU priors by architecture for full training, each with where it comes from.
_HOPPER_POINTS = ((8.0, 0.20), (70.0, 0.31), (405.0, 0.38))  # Llama 3/3.1 model cards on H100 (C1)
_ARCH_MFU = {
    "ampere": (0.42, "Llama 2 model card on A100-80GB implies 0.39-0.46 MFU; Megatron-LM 41.5 % at 22B (sizing.md C1, C2)"),
    "volta": (0.35, "estimate: V100 has no BF16 or FlashAttention-2; no published fine-tune MFU in our references"),
    "turing": (0.25, "estimate: T4 is a 70 W inference card; sustained training rates run far below peak"),
    "pascal": (0.35, "estimate against the P40's FP32 rate (no tensor cores)"),
    "ada": (0.35, "estimate: no published Ada training MFU in our references; PCIe only, no NVLink"),
    "blackwell": (0.30, "estimate: B200 software still maturing; no published MFU in our references"),
}
_METHOD_FACTOR = {"full": 1.0, "pretrain": 1.0, "freeze": 0.9, "lora": 0.85, "qlora": 0.85 / QLORA_SLOWDOWN}
NON_TRANSFORMER_MFU = 0.30  # estimate for CNN / diffusion UNet training (convolutions, data loading)


def _hopper_mfu(params_b: float) -> float:
    pts = _HOPPER_POINTS
    if params_b <= pts[0][0]:
        return pts[0][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if params_b <= x1:
            t = (math.log(params_b) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return y0 + t * (y1 - y0)
    return pts[-1][1]


def mfu_prior(gpu: GpuSpec, m: ModelSpec, method: str) -> MfuPrior:
    params_b = m.active_params_b or m.params_published_b
    if m.kind in ("cnn", "diffusion"):
        base, src = NON_TRANSFORMER_MFU, "estimate for convolutional / diffusion training"
    elif gpu.arch == "hopper" and gpu.dense_16bit_tflops < 300:
        base, src = 0.42, "H20: compute-light Hopper with high bandwidth per FLOP; assumed like A100 (estimate)"
    elif gpu.arch == "hopper":
        base = _hopper_mfu(params_b)
        src = "Llama 3/3.1 model cards on H100: ~0.20 MFU at 8B, ~0.31 at 70B, ~0.38 at 405B (sizing.md C1)"
    else:
        base, src = _ARCH_MFU[gpu.arch]
    factor = _METHOD_FACTOR[method]
    if factor != 1.0:
        src += f"; x{factor:.2f} for {method} (smaller GEMMs" + (", dequantisation 1.75x slower)" if method == "qlora" else ")")
    return MfuPrior(round(base * factor, 4), src)


def scaling_efficiency(gpu: GpuSpec, gpus_per_node: int, nodes: int, zero_stage: int, rdma: bool) -> float:
    """Discount for links weaker than the NVLink + RDMA clusters behind the MFU priors (estimates)."""
    eff = 1.0
    if gpus_per_node > 1 and gpu.nvlink_gb_s == 0:
        eff *= 0.65 if zero_stage >= 3 else 0.85  # PCIe all-gather / all-reduce
    elif gpus_per_node > 1 and gpu.nvlink_gb_s < 600:
        eff *= 0.95  # A800/H800 NVLink cut to 400 GB/s
    if nodes > 1 and not rdma:
        eff *= 0.5 if zero_stage >= 3 else 0.7  # TCP between nodes
    return eff


def training_time(
    m: ModelSpec,
    gpu: GpuSpec,
    setup: TrainSetup,
    tokens: float,
    total_gpus: int,
    scaling: float = 1.0,
    trainable_fraction: float = 1.0,
    gpu_fraction: float = 1.0,
    samples: float = 0.0,
) -> TimeEstimate:
    """Hours for `tokens` (transformers) or `samples` (CNN / diffusion) on `total_gpus` GPUs."""
    mfu = mfu_prior(gpu, m, setup.method)
    peak = gpu.dense_16bit_tflops * 1e12 * gpu_fraction
    if m.kind in ("cnn", "diffusion"):
        per_sample = 3 * (m.gflops_per_sample or 0.0) * 1e9 * (4 / 3 if setup.grad_ckpt else 1.0)
        if setup.method in ("lora", "qlora", "freeze"):
            per_sample *= 2 / 3
        flops = per_sample * samples
        per_token = per_sample
        units = samples
    else:
        per_token = flops_per_token(m, setup, trainable_fraction)
        flops = per_token * tokens
        units = tokens
    rate = total_gpus * peak * mfu.value * scaling  # FLOP/s
    seconds = flops / rate if rate > 0 else math.inf
    return TimeEstimate(
        flops_total=flops,
        flops_per_token=per_token,
        tokens_total=units,
        throughput_tokens_per_s=units / seconds if seconds > 0 else 0.0,
        hours=seconds / 3600,
        mfu=mfu,
        scaling_efficiency=scaling,
    )
