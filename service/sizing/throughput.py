"""Training time: a node-level throughput model whose constants keep their physical meaning and source.

Per GPU and micro-batch of b*s tokens:

    t_gpu   = executed FLOPs / (peak x HFU_MAX[arch] x m / (m + GEMM_HALF_TOKENS))   (+ QLoRA dequantisation)
    t_comm  = ZeRO / data-parallel bytes x (n - 1) / n / link bandwidth
    t_micro = t_gpu + t_comm - overlap x min(t_gpu, t_comm) + STEP_OVERHEAD_S   (overlap: comm_overlap)

m is the GEMM's row count (tokens in the micro-batch; routed experts see tokens x top_k / experts), so small
micro-batches and MoE experts run below the large-GEMM efficiency. CPU offload multiplies the time. Pre-training at
cluster scale (>= 256 GPUs) uses the published end-to-end MFU instead (service/sizing/compute.py).

Fitted (scripts/calibration_report.py, rows in evals/anchors.yaml): HFU_MAX["ampere"], GEMM_HALF_TOKENS,
STEP_OVERHEAD_S, QLORA_DEQUANT_S_PER_GPARAM. The rest are estimates, named as such. A user calibration file
(`gpu-advisor calibrate --save`) rescales HFU_MAX for a GPU it has measured (service/calibration/store.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.comm import (
    COMM_OVERLAP,
    LINK_OVERLAP,
    all_to_all_bytes,
    bus_gb_s,
    expert_loop_s,
    extra_ring_latency_s,
    interconnect,
)
from service.sizing.compute import (
    CLUSTER_SCALE_GPUS,
    cluster_mfu,
    expert_flops_share,
    flops_per_token,
    model_flops_per_token,
)
from service.sizing.expected_error import expected_error
from service.sizing.params import count_params
from service.sizing.types import Interconnect, MfuPrior, TimeEstimate, TrainSetup

# Hardware FLOPs utilisation on large GEMMs (executed FLOPs incl. recomputation / dense BF16 peak), eager PyTorch +
# FlashAttention-2. Ampere fitted on the Qwen A100 profiling table (evals/anchors.yaml, 0.62; FlashAttention-2
# reports up to 72 % end to end, Megatron-LM 43.7 % HFU at 22B with pipeline bubbles, sizing.md C2).
HFU_MAX = {
    "ampere": 0.62,
    "hopper": 0.45,  # estimate: H100 FLOPs grew 3.2x over A100, memory bandwidth 1.6x: a lower share is sustained
    "hopper_light": 0.60,  # estimate: H20 (148 TFLOPS, 4 TB/s) is bandwidth-rich, easy to keep busy
    # Ada as Ampere: an RTX 4090 has A100's FLOP-to-byte ratio (164 vs 153 FLOP/B) and cuBLAS reaches 92-96 % of
    # an Ada card's peak on large GEMMs (L20 HGEMM, 105-115 of 119.5 TFLOPS); the torchtune README's RTX 4090
    # full and LoRA runs sustain 0.6-0.65 of the dense peak end to end. Bandwidth-starved parts (L40S, 419
    # FLOP/B) lose their share through the GEMM half-point, which scales with the ridge point below.
    "ada": 0.62,
    "volta": 0.40,  # estimate: no BF16, no FlashAttention-2 (SDPA memory-efficient kernel)
    "turing": 0.30,  # estimate: T4 is a 70 W card; clocks drop under sustained load
    "pascal": 0.35,  # estimate against the P40's FP32 rate
    "blackwell": 0.40,  # estimate: software still maturing
    "kepler": 0.30,  # estimate against the K80's FP32 rate (no tensor cores)
    "ascend": 0.40,  # estimate: Huawei Ascend (CANN); no published fine-tune HFU in our references
    "cdna3": 0.40,  # estimate: AMD MI300X (ROCm); no published fine-tune HFU in our references
}
GEMM_HALF_TOKENS = 250.0  # GEMM rows at which efficiency halves on A100 (fitted: Qwen-7B/14B LoRA, 256-8192 tokens)
# A GEMM of m rows reads its weights once for 2m FLOPs per weight element: it is bandwidth-bound below the ridge
# point, peak FLOP/s / memory bytes/s (roofline). The fitted half-point (250 rows on A100, ridge 153 FLOP/B) is
# carried to other GPUs in proportion to their ridge: 124 rows on an RTX 3090, 268 on a 4090, 480 on an H100.
A100_RIDGE = 312e12 / 2039e9
# A card rated at the same peak as its die's highest-power SKU but given less power cannot hold the rated clock
# under sustained tensor load: dynamic power ~ C V^2 f with V ~ f in the DVFS range, so f ~ P^(1/3). A100 PCIe
# (250 / 300 W) against A100 SXM (400 W): 0.86 / 0.91 of the rated 312 TFLOPS.
DVFS_EXPONENT = 1 / 3
STEP_OVERHEAD_S = 0.06  # per micro-batch: Python, hooks, loss, optimizer bookkeeping (fitted)
# bitsandbytes NF4 dequantisation, per billion quantised params per forward/backward pass, on A100 (2039 GB/s):
# fitted on the Qwen Q-LoRA vs LoRA rows (1.8B/7B/14B: 28-32 ms per 1e9 params per micro-batch of 3 passes).
QLORA_DEQUANT_S_PER_GPARAM = 0.0098
A100_BW_GB_S = 2039.0
# Of that, the bytes: reading 0.5 B of NF4 and writing 2 B of bf16 per parameter, 2.5 GB per billion, which take
# 1.2 ms on A100 and follow the GPU's bandwidth; the rest (kernel launches, per-block absmax lookups) does not,
# and is kept as measured on A100.
DEQUANT_BYTES_PER_PARAM = 2.5
# ZeRO-3 fetches parameters module by module: one all-gather per weight tensor per pass, each paying a launch and
# synchronisation latency (tens of microseconds for small NCCL messages, nccl-tests; estimate). Negligible for a
# dense 8B (224 tensors), seconds for an MoE with 128 experts x 48 layers (18k tensors): measured ZeRO-3 MoE
# training runs ~4x slower than ZeRO-2 on 8x A800 (issue 12). That latency is an NVLink node's; a ring over a
# slower link or across nodes adds its step latency per rank (comm.extra_ring_latency_s).
GATHER_LATENCY_S = 75e-6
# DeepSpeed ZeRO-3 handles the gradients of its partition on every micro-step (reduce-scatter buckets, copies into
# the fp32 partition): fitted on the Qwen full-parameter rows (1.8B on 1 GPU, 7B on 2, jointly with the terms above: 0.06 s per billion
# trainable parameters held per GPU, per micro-batch, on A100; frozen LoRA bases add nothing).
Z3_GRAD_S_PER_GPARAM = 0.06
# DeepSpeed ZeRO-3 fetches ahead only stage3_prefetch_bucket_size parameters: Hugging Face's "auto" sets it to
# 0.9 x hidden^2 (transformers integrations/deepspeed.py), a small share of a decoder layer (~7 % for Llama-7B
# or 70B), so most of each layer's gather waits in line; FSDP's backward prefetch fetches the whole next unit.
# LLaMA-Factory's DeepSpeed configs (and the bundle's) set overlap_comm false: gradient reductions do not overlap.
DS_PREFETCH_HIDDEN_SQ = 0.9
# torch.compile fuses the normalisation, activation and rotary work between the GEMMs that eager PyTorch runs as
# separate kernels; HFU_MAX was fitted on eager runs. Fitted on the fitted rows that compile (the torchtune README's
# RTX 4090 rows: full, LoRA and QLoRA run at 1.43x the eager estimate, geometric mean, where the same card's eager
# LoRA row runs at 1.13x: 1.43 / 1.13 = 1.26; the 2024-05 table's QLoRA-with-compile against LoRA-without pair on one
# 4090: 1.29). PyTorch 2.0's announcement measured 1.51x in AMP training over 163 models, most smaller and more
# elementwise-bound than an LLM's GEMMs.
COMPILE_SPEEDUP = 1.25
OFFLOAD_SLOWDOWN = {"none": 1.0, "optimizer": 1.5, "all": 3.0}  # estimates: PCIe-bound CPU Adam / param swaps
NON_TRANSFORMER_MFU = 0.30  # estimate for CNN / diffusion UNet training (convolutions, data loading)
IMAGES_PER_VCPU_S = 150.0  # estimate: JPEG decode + random-resized-crop per CPU core (why DALI decodes on GPU)


@dataclass(frozen=True)
class Cluster:
    """Where the job runs: GPUs per node, nodes, the links between them, the host's vCPUs."""

    gpus_per_node: int = 1
    nodes: int = 1
    rdma: bool = True
    network_gbps: float | None = None
    vcpus: int | None = None


def hfu_max(gpu: GpuSpec, calibration: float = 1.0) -> float:
    key = "hopper_light" if gpu.arch == "hopper" and gpu.dense_16bit_tflops < 300 else gpu.arch
    return HFU_MAX[key] * calibration * power_share(gpu)


# A rated peak shared by the SKUs of one die, and the board power of the SKU that holds it (A100 / A800 SXM4)
POWER_REFERENCE_W = {("ampere", 312.0): 400.0}


def power_share(gpu: GpuSpec) -> float:
    """Sustained share of the rated peak for a SKU given less power than its die's reference (DVFS_EXPONENT)."""
    ref = POWER_REFERENCE_W.get((gpu.arch, float(gpu.dense_16bit_tflops)))
    return 1.0 if ref is None else min(1.0, (gpu.tdp_w / ref) ** DVFS_EXPONENT)


def dequant_s_per_gparam(gpu: GpuSpec) -> float:
    """NF4 dequantisation seconds per billion quantised parameters per pass (see QLORA_DEQUANT_S_PER_GPARAM)."""
    memory_part = DEQUANT_BYTES_PER_PARAM / A100_BW_GB_S  # seconds per 1e9 params on A100
    return QLORA_DEQUANT_S_PER_GPARAM - memory_part + DEQUANT_BYTES_PER_PARAM / gpu.mem_bw_gb_s


def gemm_half_rows(gpu: GpuSpec) -> float:
    ridge = gpu.dense_16bit_tflops * 1e12 / (gpu.mem_bw_gb_s * 1e9)
    return GEMM_HALF_TOKENS * ridge / A100_RIDGE


def _gemm_eff(rows: float, half: float = GEMM_HALF_TOKENS) -> float:
    return rows / (rows + half) if rows > 0 else 0.0


def link_of(gpu: GpuSpec, cl: Cluster) -> Interconnect:
    return interconnect(gpu, cl.nodes, cl.rdma)


def link_gb_s(gpu: GpuSpec, cl: Cluster) -> float:
    """Bus bandwidth per GPU of the slowest link a ring crosses (GB/s)."""
    return bus_gb_s(gpu, link_of(gpu, cl), cl.gpus_per_node, cl.network_gbps)


def comm_overlap(m: ModelSpec, setup: TrainSetup, link: Interconnect | None = None) -> float:
    """Share of the communication hidden behind compute (COMM_OVERLAP, the link's LINK_OVERLAP,
    DS_PREFETCH_HIDDEN_SQ)."""
    cap = COMM_OVERLAP if link is None else LINK_OVERLAP[link]
    if setup.sharding != "deepspeed" or setup.zero_stage == 0 or setup.model_parallel > 1:
        return cap  # torch DDP / FSDP / Megatron overlap their collectives with the backward
    if setup.zero_stage < 3:
        return 0.0
    if m.moe is not None and setup.expert_loop:
        # DeepSpeed ZeRO-3 prefetches along the module order it traced in the first step and drops the trace when
        # a step runs modules in another order (partitioned_param_coordinator.py, "Invalidate trace cache"):
        # looped experts run in the order the router picks, so every fetch waits in line
        return 0.0
    c = count_params(m)
    layer = (c.total - c.embedding - c.lm_head) / max(1, m.num_layers or 1)
    return min(cap, DS_PREFETCH_HIDDEN_SQ * (m.hidden_size or 0) ** 2 / max(1.0, layer))


def comm_bytes_per_micro(m: ModelSpec, setup: TrainSetup, trainable: float) -> float:
    """Bytes each GPU moves per micro-batch. ZeRO-3 / FSDP gather every parameter (MoE: every expert) twice: for
    the forward, and for the backward, whose recomputed forward runs just before it on the same gathered layer.
    ZeRO-2 / FSDP reduce-scatter the BF16 gradients every micro-step; DDP, ZeRO-0/1 and Megatron all-reduce them
    once per optimizer step (no_sync / the accumulation boundary): 1 / grad_accum of it per micro-batch. Tensor
    and pipeline parallelism leave each GPU 1 / model_parallel of the parameters."""
    n = max(1, setup.n_gpus)
    if n == 1:
        return 0.0
    mp = max(1, setup.model_parallel)
    if setup.zero_stage < 2:
        return 2.0 * 2.0 * trainable / mp / max(1, setup.grad_accum)  # all-reduce moves twice a reduce-scatter
    grads = 2.0 * trainable / mp
    if setup.zero_stage >= 3 and (setup.offload != "all" or setup.sharding != "deepspeed"):
        return 2 * 2.0 * count_params(m).total / mp + grads
    return grads


def _node_time(m: ModelSpec, gpu: GpuSpec, setup: TrainSetup, trainable_fraction: float, cl: Cluster,
               gpu_fraction: float, calibration: float) -> tuple[float, float, float]:
    """(tokens/s per GPU, executed FLOPs per token, communication efficiency)."""
    tokens_mb = float(setup.micro_batch * setup.seq_len)
    peak = gpu.dense_16bit_tflops * 1e12 * gpu_fraction * hfu_max(gpu, calibration)
    flops = flops_per_token(m, setup, trainable_fraction)
    share = expert_flops_share(m)
    half = gemm_half_rows(gpu)
    if share:
        e = m.moe
        assert e is not None
        # rows per expert GEMM: the micro-batch's routed copies over the experts; under expert parallelism each
        # GPU's experts take the copies of all ep GPUs' tokens (grouped GEMM sizes, Megatron's EP)
        expert_rows = tokens_mb * e.top_k / e.num_experts * max(1, setup.expert_parallel)
        dense_part = flops * (1 - share) / _gemm_eff(tokens_mb, half)
        t_gpu = tokens_mb * (dense_part + flops * share / _gemm_eff(expert_rows, half)) / peak
    else:
        t_gpu = tokens_mb * flops / (peak * _gemm_eff(tokens_mb, half))
    t_gpu /= 1.0 - setup.pipeline_bubble
    if setup.compiled:
        t_gpu /= COMPILE_SPEEDUP
    if setup.method == "qlora":
        passes = 3 if setup.recomputes_layers else 2
        t_gpu += dequant_s_per_gparam(gpu) * count_params(m).linear / 1e9 * passes
    t_gpu += expert_loop_s(m, setup)  # transformers' eager MoE: host-bound, serialised by its syncs
    trainable = trainable_fraction * count_params(m).total
    link = link_of(gpu, cl)
    t_comm = comm_bytes_per_micro(m, setup, trainable) * (setup.n_gpus - 1) / setup.n_gpus / (
        link_gb_s(gpu, cl) * 1e9) if setup.n_gpus > 1 else 0.0
    if setup.n_gpus > 1 and setup.zero_stage >= 3:
        tensors = sum(x.count for x in count_params(m).linears)
        ranks = max(1, setup.n_gpus // max(1, setup.model_parallel))  # the data-parallel group a gather spans
        t_comm += (GATHER_LATENCY_S + extra_ring_latency_s(link, ranks)) * tensors * 2
    if setup.zero_stage >= 3 and setup.offload == "none":
        t_gpu += Z3_GRAD_S_PER_GPARAM * trainable / max(1, setup.n_gpus) / 1e9 * A100_BW_GB_S / gpu.mem_bw_gb_s
    # expert-parallel dispatch and combine sit between the router and the experts: on the critical path
    ep_link = link if setup.expert_parallel > cl.gpus_per_node else interconnect(gpu)
    t_a2a = all_to_all_bytes(m, setup) / (bus_gb_s(gpu, ep_link, cl.gpus_per_node, cl.network_gbps) * 1e9)
    t_micro = t_gpu + t_comm - comm_overlap(m, setup, link) * min(t_gpu, t_comm) + t_a2a + STEP_OVERHEAD_S
    return tokens_mb / t_micro, flops, (t_gpu + STEP_OVERHEAD_S) / t_micro


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
    cluster: Cluster | None = None,
    calibration: float = 1.0,
) -> TimeEstimate:
    """Hours for `tokens` (transformers) or `samples` (CNN / diffusion) on `total_gpus` GPUs.

    `scaling` multiplies the rate (an outside discount; 1 by default); `calibration` rescales HFU_MAX (a user's
    measured row for this GPU)."""
    cl = cluster or Cluster(gpus_per_node=total_gpus, nodes=1)
    err = expected_error("throughput", setup, m, gpus=total_gpus)
    return replace(_training_time(m, gpu, setup, tokens, total_gpus, scaling, trainable_fraction, gpu_fraction,
                                  samples, cl, calibration), expected_error=err)


def _training_time(m: ModelSpec, gpu: GpuSpec, setup: TrainSetup, tokens: float, total_gpus: int, scaling: float,
                   trainable_fraction: float, gpu_fraction: float, samples: float, cl: Cluster,
                   calibration: float) -> TimeEstimate:
    slow = OFFLOAD_SLOWDOWN[setup.offload]
    peak = gpu.dense_16bit_tflops * 1e12 * gpu_fraction
    if m.kind in ("cnn", "diffusion"):
        per_sample = 3 * (m.gflops_per_sample or 0.0) * 1e9 * (4 / 3 if setup.grad_ckpt else 1.0)
        if setup.method in ("lora", "qlora", "freeze"):
            per_sample *= 2 / 3
        rate = total_gpus * peak * NON_TRANSFORMER_MFU * scaling / per_sample if per_sample else 0.0
        mfu = MfuPrior(NON_TRANSFORMER_MFU, "estimate for convolutional / diffusion training")
        notes: tuple[str, ...] = ()
        if m.kind == "cnn" and cl.vcpus:
            cap = cl.vcpus * cl.nodes * IMAGES_PER_VCPU_S
            if cap < rate:
                notes = (f"data loading caps the rate at {cap:,.0f} images/s ({cl.vcpus} vCPUs x "
                         f"{IMAGES_PER_VCPU_S:g} images/s each, estimate)",)
                rate = cap
        rate /= slow
        return _estimate(per_sample * samples, per_sample, per_sample, samples, rate, mfu, scaling, slow, notes)
    model_flops = model_flops_per_token(m, setup, trainable_fraction)
    per_gpu, executed, comm_eff = _node_time(m, gpu, setup, trainable_fraction, cl, gpu_fraction, calibration)
    rate = steady = per_gpu * total_gpus * scaling / slow
    src = (f"node model: HFU {hfu_max(gpu, calibration):.2f} on large GEMMs for {gpu.arch}, "
           f"{setup.micro_batch * setup.seq_len} tokens per micro-batch, communication efficiency {comm_eff:.2f}")
    if total_gpus >= CLUSTER_SCALE_GPUS:  # 3D-parallel clusters: never above the published at-scale MFU
        prior = cluster_mfu(gpu, m)
        cap = total_gpus * peak * prior.value * scaling / model_flops / slow
        if cap < rate:
            rate, src = cap, f"capped at the published cluster-scale MFU: {prior.source}"
    achieved = rate * model_flops / (total_gpus * peak) if total_gpus and peak else 0.0
    return _estimate(executed * tokens, executed, model_flops, tokens, rate, MfuPrior(round(achieved, 4), src),
                     scaling * comm_eff, slow, (), steady)


def _estimate(flops: float, per_token: float, model_per_token: float, units: float, rate: float, mfu: MfuPrior,
              scaling: float, slow: float, notes: tuple[str, ...], steady: float | None = None) -> TimeEstimate:
    seconds = units / rate if rate > 0 else math.inf
    return TimeEstimate(flops_total=flops, flops_per_token=per_token, tokens_total=units,
                        throughput_tokens_per_s=rate, hours=seconds / 3600, mfu=mfu, scaling_efficiency=scaling,
                        notes=notes, model_flops_per_token=model_per_token, offload_slowdown=slow,
                        steady_tokens_per_s=rate if steady is None else steady)
