"""Each engine's memory policy, as the engine itself computes it: the KV pool, its capacity in tokens, the
concurrency it allows at `max_model_len`, and whether the engine starts.

- vLLM V1 (vllm/v1/worker/gpu_worker.py `determine_available_memory`, v0.8-v0.11): KV bytes =
  total x gpu_memory_utilization - (weights + PyTorch peak of the profile run + non-PyTorch increase). The
  pool is cut into 16-token blocks per layer (vllm/v1/core/kv_cache_utils.py `get_num_blocks`); start-up fails
  when the pool is empty ("No available memory for the cache blocks") or cannot hold one sequence of
  max_model_len ("To serve at least one request with the models's max seq len ..."). Defaults
  (vllm/engine/arg_utils.py `get_batch_defaults`): utilization 0.9; max_num_batched_tokens 8192 and
  max_num_seqs 1024 for the API server on GPUs of >= 70 GiB except A100, else 2048 and 256. CUDA graphs are
  captured after the pool is allocated, in the memory utilization leaves free.
- SGLang (python/sglang/srt/model_executor/model_runner.py `profile_max_num_token`): KV bytes =
  free memory after loading - free memory at start x (1 - mem_fraction_static), i.e. mem_fraction_static of the
  memory free at start holds weights and pool. Default mem_fraction_static (server_args.py, v0.5
  `_handle_gpu_memory_settings`): (nvidia-smi MiB - reserved) / nvidia-smi MiB with reserved = 512 +
  1.5 x max(chunked_prefill_size, 2048) + 2 x cuda_graph_max_bs + 1024 x tp / 8 MiB, at least 10 GiB above
  60 GiB cards. It starts with any positive pool and caps a request's length at the pool (scheduler
  `max_req_input_len`).
- TensorRT-LLM (KvCacheConfig.free_gpu_memory_fraction, default 0.9): that share of the memory free after the
  weights and the activation workspace are allocated; 32-token blocks; a pool shorter than max_seq_len caps the
  attention window instead of failing.
- LMDeploy TurboMind (cache_max_entry_count, default 0.8): that share of the memory free after the weights
  (and its runtime buffers) are allocated; 64-token blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.activation import forward_peak_gib, logits_gib, sampler_peak_gib
from service.sizing.serving.device import context_gib, cuda_total_gib, nvsmi_total_mib
from service.sizing.serving.kv import estimate_kv
from service.sizing.serving.types import GIB, Engine, EngineMemory, KvEstimate, ServingSetup
from service.sizing.serving.weights import estimate_weights

DEFAULT_CONTEXT = 4096  # a model row without max_position_embeddings
# vLLM's PyTorch-external increase during the profile run (cuBLAS / attention workspaces; the CUDA context and
# NCCL buffers come before its baseline snapshot in V1). Fitted with the sampler term (activation.py).
VLLM_NON_TORCH_GIB = 0.15
# Memory SGLang loses between its two free-memory readings besides the weights (allocator slack, workspaces).
SGLANG_LOAD_OVERHEAD_GIB = 0.1


@dataclass(frozen=True)
class EngineDefaults:
    mem_fraction: float
    block_size_tokens: int
    max_num_seqs: int
    max_num_batched_tokens: int


def engine_defaults(engine: Engine, gpu: GpuSpec, tp: int) -> EngineDefaults:
    """The engine's own defaults on this GPU (see the module docstring for the sources)."""
    if engine == "vllm":
        big = cuda_total_gib(gpu) >= 70 and not gpu.id.startswith("A100")
        return EngineDefaults(0.9, 16, 1024 if big else 256, 8192 if big else 2048)
    if engine == "sglang":
        chunk, graph_bs = _sglang_buckets(nvsmi_total_mib(gpu), tp)
        mib = nvsmi_total_mib(gpu)
        reserved = 512 + 1.5 * max(chunk, 2048) + 2 * graph_bs + 1024 * tp / 8
        if mib > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
        return EngineDefaults(round((mib - reserved) / mib, 3), 1, 4096, chunk)
    if engine == "trtllm":
        return EngineDefaults(0.9, 32, 2048, 8192)
    return EngineDefaults(0.8, 64, 256, 8192)  # lmdeploy


def _sglang_buckets(mib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by nvidia-smi memory (server_args.py, v0.5)."""
    if mib < 20 * 1024:
        return 2048, 8
    if mib < 35 * 1024:
        return 2048, 24 if tp < 4 else 80
    if mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def _fits_len(kv: KvEstimate, pool_bytes: float, block: int, limit: int) -> int:
    """The longest single sequence the pool holds (bisection over the window-aware sequence bytes)."""
    if pool_bytes <= 0:
        return 0
    lo, hi = 0, max(limit, 1)
    if _seq_bytes(kv, hi, block) <= pool_bytes:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _seq_bytes(kv, mid, block) <= pool_bytes else (lo, mid)
    return lo


def _seq_bytes(kv: KvEstimate, tokens: int, block: int) -> float:
    return kv.bytes_for_sequence(math.ceil(tokens / block) * block)


def engine_memory(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup) -> EngineMemory:
    """One GPU of a replica under `setup.engine`'s policy (module docstring)."""
    d = engine_defaults(setup.engine, gpu, setup.tp)
    frac = setup.mem_fraction if setup.mem_fraction is not None else d.mem_fraction
    max_len = setup.max_model_len or m.max_position_embeddings or DEFAULT_CONTEXT
    seqs = setup.max_num_seqs or d.max_num_seqs
    tokens = setup.max_num_batched_tokens or d.max_num_batched_tokens
    w = estimate_weights(m, setup.weights, setup.tp)
    kv = estimate_kv(m, setup.kv_dtype, setup.tp)
    total = cuda_total_gib(gpu)
    ctx = context_gib(setup.tp)
    notes: list[str] = []
    if setup.engine == "vllm":
        act = forward_peak_gib(m, setup.tp, tokens) + sampler_peak_gib(m, min(seqs, tokens))
        other = VLLM_NON_TORCH_GIB
        pool = total * frac - w.weights_gib_per_gpu - act - other
    elif setup.engine == "sglang":
        act = 0.0  # reserved inside (1 - mem_fraction_static), not measured
        other = SGLANG_LOAD_OVERHEAD_GIB
        pool = frac * (total - ctx) - w.weights_gib_per_gpu - other
    else:  # trtllm, lmdeploy: a share of what is free after weights and runtime buffers
        act = forward_peak_gib(m, setup.tp, tokens) + logits_gib(m, min(seqs, tokens))
        other = ctx
        pool = (total - ctx - w.weights_gib_per_gpu - act) * frac
    block = d.block_size_tokens
    per_token = kv.bytes_per_token_per_gpu
    pool_bytes = max(0.0, pool) * GIB
    if kv.window_layers and kv.window_tokens is not None and kv.window_tokens < max_len:
        # window-aware capacity: sequences of max_model_len, reported as tokens of such sequences (vLLM >= 0.10)
        concurrency = pool_bytes / _seq_bytes(kv, max_len, block)
        capacity = int(concurrency * max_len)
    else:
        capacity = int(pool_bytes // (per_token * block)) * block
        concurrency = capacity / max_len
    fits = _fits_len(kv, pool_bytes, block, max_len)
    starts, reason = _verdict(setup.engine, m, w.weights_gib_per_gpu, total - ctx, pool, fits, max_len, frac)
    if setup.engine in ("sglang", "trtllm", "lmdeploy") and 0 < fits < max_len:
        notes.append(f"the pool holds {fits:,} tokens, under max_model_len {max_len:,}: longer requests are "
                     "cut or refused")
    return EngineMemory(
        engine=setup.engine, mem_fraction=frac, device_total_gib=total, weights_gib=w.weights_gib_per_gpu,
        activation_peak_gib=act, other_gib=other, kv_cache_gib=max(0.0, pool), kv_capacity_tokens=max(0, capacity),
        block_size_tokens=block, max_model_len=max_len, max_concurrency=max(0.0, concurrency), starts=starts,
        starts_reason=reason, max_model_len_fits=fits, notes=tuple(notes) + w.notes,
    )


_FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static",
         "trtllm": "free_gpu_memory_fraction", "lmdeploy": "--cache-max-entry-count"}


def _verdict(engine: Engine, m: ModelSpec, weights_gib: float, usable_gib: float, pool_gib: float, fits: int,
             max_len: int, frac: float) -> tuple[bool, str]:
    flag = _FLAG[engine]
    if weights_gib >= usable_gib:
        return False, (f"weights need {weights_gib:.1f} GiB per GPU, more than the {usable_gib:.1f} GiB free: CUDA "
                       "out of memory while loading; use more GPUs (tensor parallel) or a smaller weight dtype")
    if pool_gib <= 0:
        return False, (f"no memory left for the KV cache at {flag} {frac:g} (weights {weights_gib:.1f} GiB and the "
                       f"profiled peak fill it): raise {flag}, add GPUs or quantise")
    if engine == "vllm" and fits < max_len:
        return False, (f"the KV pool ({pool_gib:.2f} GiB) holds {fits:,} tokens, less than one sequence of "
                       f"max_model_len {max_len:,}: vLLM refuses to start; set --max-model-len {fits:,} or less, "
                       f"raise {flag}, or add GPUs")
    return True, f"starts: {pool_gib:.2f} GiB KV pool per GPU after {weights_gib:.2f} GiB of weights"
