"""The time of one engine step on one replica: a decode step of B sequences, or a prompt's prefill.

A decode step reads every weight the batch touches (dense layers whole; MoE experts as the batch's tokens
route, 1 - (1 - k/E)^B of them per layer) and the KV of every sequence, and computes 2 FLOPs per active
parameter and token plus the attention over the context: it is bound by memory bandwidth at small batch and by
compute at large batch (roofline). A prefill computes the same per prompt token plus the causal attention
(n^2 / 2 query-key pairs) and is compute-bound beyond a few hundred tokens. Tensor parallelism adds two
all-reduces of the hidden state per layer (attention and MLP outputs), ring all-reduce over NVLink or PCIe.
Each step also pays a fixed scheduling / sampling / launch overhead on the CPU side.

Pipeline parallelism (a replica over several nodes, TP inside each): every GPU holds its stage's layers; vLLM
keeps one micro-batch per stage in flight, so a step over B sequences costs pp stage-steps of B / pp sequences
plus a hop between nodes per stage boundary: a token still passes every layer, so PP adds memory, not speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.params import count_params
from service.sizing.serving.engines import kv_layout
from service.sizing.serving.types import GIB, Bound, ServingSetup
from service.sizing.serving.weights import attention_dims_per_gpu, estimate_weights, stage_fraction


@dataclass(frozen=True)
class Efficiency:
    """Achieved fractions of the datasheet and fixed costs. Fitted on the load rows of evals/serving_runs.yaml
    (the serving section of docs/validation.md gives the fit and its held-out error)."""

    bandwidth: float = 0.80  # of mem_bw_gb_s, streaming weights in decode
    kv_bandwidth: float = 0.70  # of mem_bw_gb_s, paged-attention reads of the KV cache (gathers by block)
    prefill_compute: float = 0.55  # of the tensor-core peak, prefill GEMMs
    decode_compute: float = 0.35  # of the peak, decode GEMMs at large batch
    step_overhead_ms: float = 1.0  # per engine step: scheduling, sampling
    layer_overhead_ms: float = 0.03  # per layer and step: kernel launches and small ops (CUDA graphs on)
    moe_layer_factor: float = 4.0  # MoE layers: routing, top-k, expert alignment and grouped GEMM launches
    eager_layer_ms: float = 0.6  # per layer and step without CUDA graphs (--enforce-eager): Python + launches
    per_seq_overhead_ms: float = 0.01  # per sequence in the step (input preparation, detokenisation)
    nvlink_latency_us: float = 10.0  # per all-reduce
    pcie_latency_us: float = 30.0
    link_efficiency: float = 0.6  # of the link's one-way bandwidth, ring all-reduce


EFFICIENCY = Efficiency()
# Achieved decode throughput does not grow in step with the datasheet peak: decode GEMMs have a few hundred rows
# at most, and with attention and the epilogues they hit memory and launch limits long before the tensor cores do,
# so a card with a larger peak reaches a smaller share of it (prefill GEMMs, thousands of rows, keep theirs). A
# saturating share, eff(peak) = eff x (1 + A100/K) / (1 + peak/K), keeps the fitted A100 efficiency. K was fitted
# on the fitted Hopper load rows (SGLang's benchmark_vllm_060, Llama-3.1-70B on 4 x H100, 5000 prompts at once:
# +18 % / +15 % before, +1 % / -1 % after): compute-bound decode on an H100 SXM (989 TFLOPS) runs ~2.3x an A100
# (312), not the peaks' 3.2x, and a whole burst ~1.9x (memory-bound steps follow the bandwidth, 1.64x); a card
# with a small peak (H20 148, L20 120) keeps a larger share than an A100.
A100_TFLOPS = 312.0
SATURATION_TFLOPS = 1500.0


def compute_share(peak_tflops_: float) -> float:
    """The factor on the fitted (A100) compute efficiencies for a card of this peak."""
    return (1 + A100_TFLOPS / SATURATION_TFLOPS) / (1 + peak_tflops_ / SATURATION_TFLOPS)
_INT8_TOPS_FACTOR = {"turing": 2.0, "ampere": 2.0, "ada": 2.0, "hopper": 2.0, "blackwell": 2.0}


def peak_tflops(gpu: GpuSpec, weights: str) -> float:
    """Tensor-core peak for the GEMMs of this weight dtype: fp8 W8A8 on FP8 GPUs, int8 W8A8 at the int8 rate,
    weight-only int4 (AWQ/GPTQ Marlin) and fp8 on pre-Ada GPUs dequantise to 16-bit."""
    if weights == "fp8" and gpu.fp8_tflops is not None:
        return gpu.fp8_tflops
    if weights == "int8":
        return gpu.dense_16bit_tflops * _INT8_TOPS_FACTOR.get(gpu.arch, 1.0)
    return gpu.dense_16bit_tflops


@dataclass(frozen=True)
class StepModel:
    """Everything a step-time query needs, computed once per (model, GPU, setup)."""

    nonexpert_read_bytes: float
    expert_bytes: float
    experts: int
    top_k: int
    flops_params: float  # active parameters per GPU that multiply each token (excludes the embedding gather)
    q_dim: float
    layers: int
    hidden: int
    tp: int
    kv_layer_bytes: float
    kv_full_layers: int
    kv_window_layers: int
    kv_window: int | None
    moe: bool
    eager: bool
    bw_bytes_per_s: float
    peak_flops: float
    link_bytes_per_s: float
    link_latency_s: float
    eff: Efficiency
    kv_state_bytes: float = 0.0  # linear-attention state of one sequence, read and written every step
    attn_layers: int | None = None  # softmax-attention layers (None: every layer)
    pp: int = 1
    hop_s: float = 0.0  # one pipeline-stage boundary: the hidden states of a micro-batch between nodes
    decode_share: float = 1.0  # the card's share of the fitted decode-GEMM efficiency (compute_share)

    def kv_read_bytes(self, context: float) -> float:
        window = context if self.kv_window is None else min(context, self.kv_window)
        return (self.kv_layer_bytes * (self.kv_full_layers * context + self.kv_window_layers * window)
                + self.kv_state_bytes)

    @property
    def context_layers(self) -> int:
        """Layers whose attention cost grows with the context (linear-attention layers' does not)."""
        return self.layers if self.attn_layers is None else self.attn_layers

    def weights_read_bytes(self, batch: float) -> float:
        if not self.experts:
            return self.nonexpert_read_bytes
        touched: float = 1.0 - (1.0 - self.top_k / self.experts) ** max(1.0, batch)
        return self.nonexpert_read_bytes + self.expert_bytes * touched

    def comm_s(self, tokens: float) -> float:
        if self.tp <= 1:
            return 0.0
        size = tokens * self.hidden * 2 * 2 * (self.tp - 1) / self.tp  # ring all-reduce moves 2(n-1)/n of it
        return 2 * self.layers * (self.link_latency_s + size / self.link_bytes_per_s)

    def token_flops(self, context: float) -> float:
        return 2 * self.flops_params + 4 * context * self.q_dim * self.context_layers

    def decode_s(self, batch: float, context: float, prefill_tokens: float = 0.0,
                 prompt_tokens: float = 0.0) -> tuple[float, Bound]:
        """One step decoding `batch` sequences at mean context `context`, carrying `prefill_tokens` tokens of
        prompts `prompt_tokens` long (chunked prefill): the prompt compute overlaps the decode's memory time.
        Pipeline stages: pp stage-steps of batch / pp (module docstring)."""
        if self.pp > 1:
            t, bound = self._stage_s(batch / self.pp, context, prefill_tokens / self.pp, prompt_tokens)
            return self.pp * t + (self.pp - 1) * self.hop_s, bound
        return self._stage_s(batch, context, prefill_tokens, prompt_tokens)

    def _stage_s(self, batch: float, context: float, prefill_tokens: float,
                 prompt_tokens: float) -> tuple[float, Bound]:
        e = self.eff
        mem = (self.weights_read_bytes(batch + prefill_tokens) / (self.bw_bytes_per_s * e.bandwidth)
               + batch * self.kv_read_bytes(context) / (self.bw_bytes_per_s * e.kv_bandwidth))
        cmp = batch * self.token_flops(context) / (self.peak_flops * e.decode_compute * self.decode_share)
        cmp += prefill_tokens * self.prompt_token_flops(prompt_tokens) / (self.peak_flops * e.prefill_compute)
        return (max(mem, cmp) + self.comm_s(batch + prefill_tokens) + self.overhead_s(batch),
                "memory" if mem >= cmp else "compute")

    def overhead_s(self, batch: float) -> float:
        """Fixed cost of one step: the scheduler and sampler, per-layer launches (more for MoE, far more without
        CUDA graphs) and per-sequence input preparation."""
        e = self.eff
        per_layer = e.layer_overhead_ms * (e.moe_layer_factor if self.moe else 1.0)
        if self.eager:
            per_layer += e.eager_layer_ms
        return (e.step_overhead_ms + per_layer * self.layers + e.per_seq_overhead_ms * batch) / 1000

    def prompt_token_flops(self, prompt_tokens: float) -> float:
        """FLOPs per prompt token, the causal attention averaged over the prompt (n / 2 keys per query)."""
        return 2 * self.flops_params + 2 * prompt_tokens * self.q_dim * self.context_layers

    def prefill_compute_s(self, tokens: float, prompt_tokens: float | None = None) -> float:
        """The compute of `tokens` prompt tokens from prompts `prompt_tokens` long (default: one prompt)."""
        flops = tokens * self.prompt_token_flops(tokens if prompt_tokens is None else prompt_tokens)
        stage = flops / (self.peak_flops * self.eff.prefill_compute) + self.comm_s(tokens)
        return self.pp * stage + (self.pp - 1) * self.hop_s

    def prefill_s(self, tokens: float, chunk: int, prompt_tokens: float | None = None) -> float:
        """`tokens` prompt tokens alone on the replica (prompts `prompt_tokens` long, default one prompt), in
        chunks of `chunk` tokens that each read the weights once."""
        chunks = max(1, math.ceil(tokens / max(1, chunk)))
        read = chunks * self.weights_read_bytes(min(tokens, chunk)) / (self.bw_bytes_per_s * self.eff.bandwidth)
        return max(self.prefill_compute_s(tokens, prompt_tokens), self.pp * read) + chunks * self.overhead_s(0)


# Between the nodes of a multi-node replica: RDMA-class links (Tencent HCC, JD's RDMA clusters); a plain VPC is
# slower, which a pipeline stage barely feels (one micro-batch's hidden states per hop).
INTER_NODE_BYTES_PER_S = 12.5e9
INTER_NODE_LATENCY_S = 30e-6


def step_model(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup, eff: Efficiency = EFFICIENCY) -> StepModel:
    w = estimate_weights(m, setup.weights, setup.tp, setup.pp)
    kv = kv_layout(m, setup)
    c = count_params(m)
    tp = max(1, setup.tp)
    nonexpert = (w.active_read_gib_per_gpu * GIB - _active_expert_bytes(w.expert_gib_per_gpu * GIB, m))
    q_dim, _ = attention_dims_per_gpu(m, tp)
    nvlink = gpu.nvlink_gb_s > 0 and tp <= 8
    link = (gpu.nvlink_gb_s / 2 if nvlink else 32.0 * 2 ** (gpu.pcie_gen - 4)) * 1e9  # one-way GB/s
    eff_link = link * eff.link_efficiency
    return StepModel(
        nonexpert_read_bytes=nonexpert,
        expert_bytes=w.expert_gib_per_gpu * GIB,
        experts=m.moe.num_experts if m.moe is not None else 0,
        top_k=m.moe.top_k if m.moe is not None else 0,
        flops_params=max(0.0, c.active - c.embedding) / tp * stage_fraction(m, setup.pp),
        q_dim=q_dim,
        layers=-(-(m.num_layers or 0) // max(1, setup.pp)),
        hidden=m.hidden_size or 0,
        tp=tp,
        kv_layer_bytes=kv.bytes_per_token_layer,
        kv_full_layers=kv.full_layers,
        kv_window_layers=kv.window_layers,
        kv_window=kv.window_tokens,
        moe=m.moe is not None,
        eager=setup.enforce_eager,
        bw_bytes_per_s=gpu.mem_bw_gb_s * 1e9,
        peak_flops=peak_tflops(gpu, setup.weights) * 1e12,
        decode_share=compute_share(peak_tflops(gpu, setup.weights)),
        link_bytes_per_s=eff_link,
        link_latency_s=(eff.nvlink_latency_us if nvlink else eff.pcie_latency_us) / 1e6,
        eff=eff,
        kv_state_bytes=kv.state_bytes_per_seq,
        attn_layers=kv.full_layers + kv.window_layers,
        pp=max(1, setup.pp),
        hop_s=INTER_NODE_LATENCY_S + (m.hidden_size or 0) * 2 * 256 / INTER_NODE_BYTES_PER_S,
    )


def _active_expert_bytes(expert_bytes: float, m: ModelSpec) -> float:
    if m.moe is None:
        return 0.0
    return expert_bytes * m.moe.top_k / m.moe.num_experts
