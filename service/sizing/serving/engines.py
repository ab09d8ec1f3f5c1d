"""Each engine's memory policy, as the engine itself computes it: the KV pool, its capacity in tokens, the
concurrency it allows at `max_model_len`, and whether the engine starts.

- vLLM: vllm_policy.py (release by release). Start-up fails when the weights do not load, when the pool is
  empty ("No available memory for the cache blocks"), when it cannot hold one sequence of max_model_len
  ("The model's max seq len ... is larger than the maximum number of tokens that can be stored in KV cache"),
  or when the CUDA-graph capture runs out of the memory utilization leaves. Defaults
  (vllm/engine/arg_utils.py `get_batch_defaults`): utilization 0.9; max_num_batched_tokens 8192 and
  max_num_seqs 1024 for the API server on GPUs of >= 70 GiB except A100, else 2048 and 256.
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
  (and its runtime buffers) are allocated, of the total before 0.2.1; 64-token blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving import layout
from service.sizing.serving.activation import forward_peak_gib, logits_gib, vision_profile_gib
from service.sizing.serving.device import (
    context_gib,
    cuda_total_gib,
    graph_name,
    nccl_rank_gib,
    nvsmi_total_mib,
    oom_error,
)
from service.sizing.serving.kv import estimate_kv
from service.sizing.serving.support import NAMES, fp8_weight_only, unsupported_both
from service.sizing.serving.types import GIB, Engine, EngineMemory, KvEstimate, ServingSetup
from service.sizing.serving.versions import lmdeploy_share_of_total, vllm_regime
from service.sizing.serving.vllm_policy import profile
from service.sizing.serving.weights import estimate_weights

DEFAULT_CONTEXT = 4096  # a model row without max_position_embeddings
# Memory SGLang loses between its two free-memory readings besides the weights (allocator slack, workspaces).
SGLANG_LOAD_OVERHEAD_GIB = 0.1


@dataclass(frozen=True)
class EngineDefaults:
    mem_fraction: float
    block_size_tokens: int
    max_num_seqs: int
    max_num_batched_tokens: int


def engine_defaults(engine: Engine, gpu: GpuSpec, tp: int, version: str | None = None) -> EngineDefaults:
    """The engine's own defaults on this GPU and release (see the module docstring for the sources)."""
    if engine == "vllm" and not vllm_regime(version).v1:
        return EngineDefaults(0.9, 16, 256, 2048)  # V0: 256 sequences; the token budget follows max_model_len
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


def default_context(m: ModelSpec) -> int:
    """The max_model_len an engine takes when none is given (the served config's context)."""
    return m.served_context_len or m.max_position_embeddings or DEFAULT_CONTEXT


def kv_layout(m: ModelSpec, setup: ServingSetup) -> KvEstimate:
    """The KV layout the engine release uses (vLLM before 0.7.1 had no MLA latent cache)."""
    latent = setup.engine != "vllm" or vllm_regime(setup.engine_version).mla_latent_cache
    return estimate_kv(m, setup.kv_dtype, setup.tp, latent, setup.pp)


def _seq_layer_tokens(kv: KvEstimate, tokens: int, block: int, batched: int) -> float:
    """Layer-tokens one sequence of `tokens` holds: full layers whole, windowed layers their window plus one
    batch of new tokens (block-rounded, + 1 block)."""
    full = math.ceil(tokens / block) * block
    if kv.window_tokens is None:
        return float(kv.full_layers * full + kv.window_layers * full)
    window = min(tokens, kv.window_tokens - 1 + batched)
    window_blocks = (math.ceil(window / block) + 1) * block
    return float(kv.full_layers * full + kv.window_layers * min(full, window_blocks))


def _fits_len(kv: KvEstimate, pool_bytes: float, block: int, batched: int, limit: int) -> int:
    """The longest single sequence the pool holds (bisection)."""
    def fits(n: int) -> bool:
        need = _seq_layer_tokens(kv, n, block, batched) * kv.bytes_per_token_layer + kv.state_bytes_per_seq
        return need <= pool_bytes

    if pool_bytes <= 0:
        return 0
    if fits(limit):
        return limit
    lo, hi = 0, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def engine_memory(m: ModelSpec, gpu: GpuSpec, setup: ServingSetup) -> EngineMemory:
    """One GPU of a replica under `setup.engine`'s policy (module docstring)."""
    d = engine_defaults(setup.engine, gpu, setup.tp, setup.engine_version)
    frac = setup.mem_fraction if setup.mem_fraction is not None else d.mem_fraction
    max_len = setup.max_model_len or default_context(m)
    seqs = setup.max_num_seqs or d.max_num_seqs
    batched = setup.max_num_batched_tokens or d.max_num_batched_tokens
    w = estimate_weights(m, setup.weights, setup.tp, setup.pp)
    total = cuda_total_gib(gpu)
    ctx = context_gib(setup.gpus)
    notes: list[str] = []
    graph_gib = graph_room = vision = sampler = 0.0
    window_aware = True
    kv = kv_layout(m, setup)
    if setup.engine == "vllm":
        regime = vllm_regime(setup.engine_version)
        window_aware = regime.window_aware
        p = profile(m, regime, setup.tp, max_len, seqs, setup.max_num_batched_tokens, d.max_num_batched_tokens,
                    total, frac, ctx, setup.enforce_eager, setup.pp, nccl_rank_gib(gpu, setup.gpus))
        act, other, batched = p.activation_gib, p.non_torch_gib, p.batched_tokens
        graph_gib, graph_room, vision, sampler = p.graph_gib, p.graph_headroom_gib, p.vision_gib, p.sampler_gib
        pool = total * frac - w.weights_gib_per_gpu - act - other
    elif setup.engine == "sglang":
        act, other = 0.0, SGLANG_LOAD_OVERHEAD_GIB  # activations are reserved inside 1 - mem_fraction_static
        pool = frac * (total - ctx) - w.weights_gib_per_gpu - other
    else:  # trtllm, lmdeploy: a share of what is free after weights and runtime buffers
        vision = vision_profile_gib(m, setup.tp, batched)
        sampler = logits_gib(m, min(seqs, batched))
        act = forward_peak_gib(m, setup.tp, batched) + sampler + vision
        other = ctx
        free = total - ctx - w.weights_gib_per_gpu - act
        share_of_total = setup.engine == "lmdeploy" and lmdeploy_share_of_total(setup.engine_version)
        pool = min(total * frac, free) if share_of_total else free * frac
    block = d.block_size_tokens
    pool_bytes = max(0.0, pool) * GIB
    capacity = int(pool_bytes // (kv.bytes_per_token_per_gpu * block)) * block
    if (window_aware and kv.window_layers) or kv.state_bytes_per_seq:
        # windowed layers hold their window, linear-attention layers a fixed state per sequence
        per_seq = _seq_layer_tokens(kv, max_len, block, batched) * kv.bytes_per_token_layer + kv.state_bytes_per_seq
        concurrency = pool_bytes / per_seq
        fits = _fits_len(kv, pool_bytes, block, batched, max_len)
    else:  # every layer holds every token
        concurrency = capacity / max_len
        fits = min(max_len, capacity)
    need_gib = _seq_layer_tokens(kv, max_len, block, batched) * kv.bytes_per_token_layer / GIB
    v = _Verdict(setup, gpu, w.weights_gib_per_gpu, total - ctx, pool, fits, max_len, frac, need_gib,
                 vllm_regime(setup.engine_version).v1, capacity)
    starts, reason, reason_zh, fix = v.verdict()
    blocked = unsupported_both(setup.engine, gpu, setup.weights, setup.kv_dtype)
    if blocked:
        starts, (reason, reason_zh), fix = False, blocked, ""
    bad_layout = layout.with_fixes(m, setup.engine, setup.weights, setup.tp, setup.pp)
    if bad_layout:
        p0 = bad_layout[0]
        shape = f"TP{setup.tp}{f' x PP{setup.pp}' if setup.pp > 1 else ''}"
        starts, reason, fix = False, f"{NAMES[setup.engine]} refuses {shape}: \"{p0.message}\"", p0.fix
        reason_zh = f"{NAMES[setup.engine]} 不接受 {shape}：`{p0.message}`"
    if starts and graph_gib > graph_room:
        starts = False
        reason = (f"the KV pool is sized, then {graph_name(gpu)} capture needs ~{graph_gib:.1f} GiB where "
                  f"{max(0.0, graph_room):.1f} GiB is left at --gpu-memory-utilization {frac:g}: "
                  f"{oom_error(gpu)} while capturing; lower the utilization a little or pass --enforce-eager")
        reason_zh = (f"KV 缓存池分配之后，{graph_name(gpu)} 捕获还需要约 {graph_gib:.1f} GiB，而 "
                     f"--gpu-memory-utilization {frac:g} 下只剩 {max(0.0, graph_room):.1f} GiB：捕获时报 "
                     f"`{oom_error(gpu)}`；请略调低显存占用比例，或加 --enforce-eager")
        fix = "--enforce-eager"
    if setup.seen_running and not starts and not blocked and capacity > 0 and w.weights_gib_per_gpu < total - ctx:
        # they saw it answer: what refuses it here is a setting or a checkpoint the post does not state (a shorter
        # --max-model-len, --enforce-eager, a padded quantised checkpoint), not their server. A kernel the card
        # lacks stays a fact about the card: it ran some other way (a fallback), never natively
        starts, reason, reason_zh, fix = True, "", "", ""
    if setup.engine in ("sglang", "trtllm", "lmdeploy") and 0 < fits < max_len:
        notes.append(f"the pool holds {fits:,} tokens, under max_model_len {max_len:,}: longer requests are "
                     "cut or refused")
    if fp8_weight_only(gpu, setup.weights) and setup.engine in ("vllm", "sglang"):
        notes.append(f"{gpu.name} has no FP8 tensor cores: FP8 weights run weight-only (W8A16, the Marlin kernel) "
                     "- half the memory of BF16, not its speed")
    return EngineMemory(
        engine=setup.engine, mem_fraction=frac, device_total_gib=total, weights_gib=w.weights_gib_per_gpu,
        activation_peak_gib=act, other_gib=other, kv_cache_gib=max(0.0, pool), kv_capacity_tokens=max(0, capacity),
        block_size_tokens=block, max_model_len=max_len, max_concurrency=max(0.0, concurrency), starts=starts,
        starts_reason=reason, starts_reason_zh=reason_zh, max_model_len_fits=fits, notes=tuple(notes) + w.notes, graph_gib=graph_gib,
        graph_room_gib=graph_room, vision_gib=vision, sampler_gib=sampler, fix=fix,
    )


_FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static",
         "trtllm": "free_gpu_memory_fraction", "lmdeploy": "--cache-max-entry-count"}
CONTEXT_ROUND = 1024  # a suggested --max-model-len is rounded down to this


@dataclass(frozen=True)
class _Verdict:
    """Whether the engine starts, in its own words, and the one flag that makes it start."""

    setup: ServingSetup
    gpu: GpuSpec
    weights_gib: float
    usable_gib: float
    pool_gib: float
    fits: int
    max_len: int
    frac: float
    need_gib: float  # one sequence of max_len
    v1: bool
    capacity: int

    def verdict(self) -> tuple[bool, str, str, str]:
        """(starts, why in English, why in Chinese, the flag that makes it start); the engine's own error text is
        quoted as it prints it (in backticks in the Chinese)."""
        engine, flag, frac = self.setup.engine, _FLAG[self.setup.engine], self.frac
        if self.weights_gib >= self.usable_gib:
            oom = oom_error(self.gpu)
            return False, (f"weights need {self.weights_gib:.1f} GiB per GPU, more than the {self.usable_gib:.1f} GiB "
                           f"free: {oom} while loading; use more GPUs (tensor parallel) or a "
                           "smaller weight dtype"), (
                f"每卡权重需要 {self.weights_gib:.1f} GiB，超过可用的 {self.usable_gib:.1f} GiB：加载时报 `{oom}`；"
                "请增加每副本的卡数（张量并行）或换更小的权重精度"), self._more_gpus()
        if self.pool_gib <= 0:
            if engine == "sglang":
                said = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
            elif engine == "vllm":
                said = ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                        "initializing the engine.")
            else:
                said = f"no memory left for the KV cache at {flag} {frac:g}"
            quoted = f"报 `{said.replace('`', '')}`；" if engine in ("sglang", "vllm") else ""
            return False, (f"no memory left for the KV cache at {flag} {frac:g} (weights {self.weights_gib:.1f} GiB "
                           f"and the profiled peak fill it): \"{said}\" Raise {flag}, add GPUs or quantise"), (
                f"{flag} {frac:g} 下没有留给 KV 缓存的显存（权重 {self.weights_gib:.1f} GiB 和启动时的峰值已占满）："
                f"{quoted}请调高 {flag}、加卡或量化"), self._raise_fraction()
        if engine == "vllm" and self.fits < self.max_len:
            # the longest power of two the pool holds (what people set: 16384, 32768), or what it holds
            shorter = 1 << (self.fits.bit_length() - 1) if self.fits >= CONTEXT_ROUND else self.fits
            if self.v1:
                said = (f"To serve at least one request with the models's max seq len ({self.max_len}), "
                        f"({self.need_gib:.2f} GiB KV cache is needed, which is larger than the available KV cache "
                        f"memory ({self.pool_gib:.2f} GiB). Based on the available memory, the estimated maximum "
                        f"model length is {self.fits}.")
            else:
                said = (f"The model's max seq len ({self.max_len}) is larger than the maximum number of tokens that "
                        f"can be stored in KV cache ({self.capacity}).")
            return False, (f"the KV pool ({self.pool_gib:.2f} GiB) holds {self.fits:,} tokens, less than one "
                           f"sequence of max_model_len {self.max_len:,}: vLLM refuses to start: \"{said}\" Set "
                           f"--max-model-len {shorter} or less, raise {flag}, or add GPUs"), (
                f"KV 缓存池（{self.pool_gib:.2f} GiB）只能放 {self.fits:,} tokens，不够一条 max_model_len "
                f"{self.max_len:,} 的序列：vLLM 拒绝启动（`{said}`）；请把 --max-model-len 设为 {shorter} 或更小、"
                f"调高 {flag}，或加卡"), f"--max-model-len {shorter}"
        return True, f"starts: {self.pool_gib:.2f} GiB KV pool per GPU after {self.weights_gib:.2f} GiB of weights", (
            f"能启动：每卡 {self.weights_gib:.2f} GiB 权重之后留给 KV 缓存 {self.pool_gib:.2f} GiB"), ""

    def _more_gpus(self) -> str:
        need = self.weights_gib * self.setup.gpus / max(0.1, self.usable_gib * 0.85)
        tp = next((t for t in (2, 4, 8) if t >= need and t > self.setup.tp), None)
        if tp is not None and self.setup.pp == 1:
            return f"--tensor-parallel-size {tp}"
        if need <= 32:  # nodes of 8 as pipeline stages
            pp = next(p for p in (2, 4) if 8 * p >= need)
            return f"--tensor-parallel-size 8 --pipeline-parallel-size {pp}"
        if self.setup.weights in ("bf16", "fp16") and (self.gpu.supports_fp8 or fp8_weight_only(self.gpu, "fp8")):
            return "--quantization fp8"
        return "--tensor-parallel-size 8 --pipeline-parallel-size 4"

    def _raise_fraction(self) -> str:
        needed = self.frac + (self.need_gib - self.pool_gib) / max(1.0, self.usable_gib)
        if self.setup.engine == "vllm" and self.frac < 0.95 and needed <= 0.95:
            return "--gpu-memory-utilization 0.95"
        if self.setup.engine == "sglang" and needed <= 0.95:
            return f"--mem-fraction-static {min(0.95, round(needed + 0.03, 2)):g}"
        if self.setup.engine == "lmdeploy":
            return "--cache-max-entry-count 0.9"
        return self._more_gpus()
