"""Frozen value types of the serving engine. Units are in the names (`_gib` = 2**30 bytes, `_ms`, `_per_s`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

WeightsDtype = Literal["bf16", "fp16", "fp8", "int8", "int4", "mxfp4"]
KvDtype = Literal["auto", "bf16", "fp16", "fp8"]
Engine = Literal["vllm", "sglang", "trtllm", "lmdeploy"]
AttentionKind = Literal["mha", "gqa", "mqa", "mla"]
Bound = Literal["memory", "compute"]

ENGINES: tuple[Engine, ...] = ("vllm", "sglang", "trtllm", "lmdeploy")
GIB = 1024**3


@dataclass(frozen=True)
class ServingSetup:
    """How one replica is launched: engine, weight and KV dtypes, tensor-parallel degree, the engine's memory
    setting and limits. None means the engine's own default (see engines.py)."""

    engine: Engine = "vllm"
    weights: WeightsDtype = "bf16"
    kv_dtype: KvDtype = "auto"
    tp: int = 1
    pp: int = 1  # pipeline stages (nodes of a multi-node replica; vLLM --pipeline-parallel-size)
    mem_fraction: float | None = None  # vLLM gpu_memory_utilization, SGLang mem_fraction_static, ...
    max_model_len: int | None = None  # None: the model's context length
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    engine_version: str | None = None  # e.g. "0.6.4": older releases account memory differently (versions.py)
    enforce_eager: bool = False  # no CUDA graphs (vLLM --enforce-eager): no capture memory, slower steps
    # The user saw this server answer (a measured speed, an OOM mid-run): a start-up refusal that rests on what the
    # post does not state (a TP layout, graph room, a context) did not happen; a kernel the card lacks still counts
    seen_running: bool = False

    @property
    def gpus(self) -> int:
        return self.tp * self.pp


@dataclass(frozen=True)
class WeightsEstimate:
    """Weights resident on one GPU of a replica."""

    weights_gib_per_gpu: float
    quantised_gib_per_gpu: float  # the linear layers in the chosen dtype (with scales and zero points)
    unquantised_gib_per_gpu: float  # embeddings, lm_head, norms, routers, vision tower: kept 16-bit
    params_per_gpu: float
    # Bytes one decode step reads per GPU at batch 1: dense layers whole, MoE only the experts a token uses.
    active_read_gib_per_gpu: float
    expert_gib_per_gpu: float  # MoE: all routed experts resident on this GPU (0 for dense models)
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class KvEstimate:
    """KV cache per token. Full-attention layers keep every token; sliding-window layers at most the window;
    linear-attention layers (and nothing else) a fixed state per sequence, whatever its length."""

    attention: AttentionKind
    dtype_bytes: int
    kv_heads_per_gpu: int  # MLA: the single latent "head" (replicated on every GPU)
    bytes_per_token_layer: float  # one layer, one GPU
    full_layers: int
    window_layers: int
    window_tokens: int | None
    linear_layers: int = 0
    state_bytes_per_seq: float = 0.0  # the linear layers' recurrent and conv state of one sequence, one GPU

    @property
    def bytes_per_token_per_gpu(self) -> float:
        """A token's KV on one GPU while it is inside every window (the figure engines log)."""
        return self.bytes_per_token_layer * (self.full_layers + self.window_layers)

    def bytes_for_sequence(self, tokens: int) -> float:
        """One sequence of `tokens` on one GPU: windowed layers keep only the last `window_tokens`, linear
        layers their fixed state."""
        window = tokens if self.window_tokens is None else min(tokens, self.window_tokens)
        return (self.bytes_per_token_layer * (self.full_layers * tokens + self.window_layers * window)
                + self.state_bytes_per_seq)


@dataclass(frozen=True)
class EngineMemory:
    """One GPU of a replica under an engine's memory policy: the KV pool, the concurrency it allows and whether
    the engine starts at `max_model_len`."""

    engine: Engine
    mem_fraction: float
    device_total_gib: float  # what CUDA reports as total on this GPU
    weights_gib: float
    activation_peak_gib: float  # the profiled forward / sampler peak the engine sets aside
    other_gib: float  # CUDA context, NCCL, cuBLAS workspaces: what the policy subtracts besides
    kv_cache_gib: float
    kv_capacity_tokens: int
    block_size_tokens: int
    max_model_len: int
    max_concurrency: float  # sequences of max_model_len the pool holds at once
    starts: bool
    starts_reason: str
    max_model_len_fits: int  # the longest context the pool holds for one sequence
    notes: tuple[str, ...] = field(default=())
    graph_gib: float = 0.0  # vLLM: CUDA-graph capture memory, outside the pool
    graph_room_gib: float = 0.0  # what the memory setting leaves for it
    vision_gib: float = 0.0  # vision-language: the encoder's profile run, inside activation_peak_gib
    sampler_gib: float = 0.0  # the dummy sampler run's logits, inside activation_peak_gib
    fix: str = ""  # the flag that makes it start, when it does not
    starts_reason_zh: str = ""  # starts_reason in Chinese (the engine's own error text quoted in backticks)

    @property
    def graph_capture_fails(self) -> bool:
        return self.graph_gib > self.graph_room_gib


@dataclass(frozen=True)
class LoadPoint:
    """Tokens per request and the offered load: a closed loop of `concurrency` users or `request_rate` req/s."""

    input_tokens: int
    output_tokens: int
    concurrency: float | None = None
    request_rate_per_s: float | None = None


@dataclass(frozen=True)
class Performance:
    """One replica at a load point."""

    concurrency: float  # sequences in flight (after the KV pool and max_num_seqs caps)
    request_rate_per_s: float  # requests completed per second
    output_tokens_per_s: float
    ttft_ms: float | None  # None: the offered rate exceeds what the replica serves (the queue grows)
    tpot_ms: float
    decode_step_ms: float
    prefill_ms: float  # one request's prompt, alone on the replica
    decode_bound: Bound
    max_concurrency: float  # what the replica holds at these lengths (KV pool, max_num_seqs)
    saturated: bool  # the offered load is above what the replica can hold or serve
    notes: tuple[str, ...] = field(default=())
