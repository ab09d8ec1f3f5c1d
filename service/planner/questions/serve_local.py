"""Servers the serving engine does not size itself, as they use memory: Hugging Face transformers (`generate`
on one process) and Ollama / llama.cpp (GGUF).

- transformers allocates as it goes: the weights, then the KV cache of the requests actually running (no pool
  set aside, no max-length profile), so a model that loads and answers a short prompt 'runs' where a server
  that reserves `gpu_memory_utilization` and a pool for max_model_len does not. Decoding is eager PyTorch: one
  request reads every weight per token, plus Python overhead per layer.
- Ollama (llama.cpp) loads a GGUF (Q4_K_M ~ 4.85 bits a weight, sized here as int4 group-128) and a 16-bit KV
  cache of `num_ctx` tokens per parallel slot. Its default context follows the card's memory (docs/context-
  length.mdx: < 24 GiB 4k, 24-48 GiB 32k, >= 48 GiB 256k; 2048 before v0.6). What does not fit stays in host
  memory as layers run on the CPU (`ollama ps` shows the split under PROCESSOR), and a token then costs the CPU
  layers' bytes over the host's memory bandwidth: a few tokens a second.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.device import CUDA_CONTEXT_GIB, cuda_total_gib
from service.sizing.serving.kv import estimate_kv
from service.sizing.serving.types import GIB, WeightsDtype
from service.sizing.serving.weights import estimate_weights

HOST_BW_GB_S = 50.0  # a server's DDR4/DDR5 bandwidth as llama.cpp's CPU layers see it
GPU_BW_SHARE = 0.7  # of the datasheet bandwidth a llama.cpp / eager decode achieves
EAGER_LAYER_S = 0.0004  # transformers generate: Python and kernel launches per layer and token
OLLAMA_OVERHEAD_GIB = 0.8  # the CUDA context, llama.cpp's compute buffers


def ollama_default_ctx(gpu: GpuSpec) -> int:
    """Ollama's default num_ctx by the card's memory (docs/context-length.mdx)."""
    total = cuda_total_gib(gpu)
    return 4096 if total < 24 else 32768 if total < 48 else 262144


@dataclass(frozen=True)
class LocalRun:
    engine: str  # hf | ollama
    weights: WeightsDtype
    context: int  # num_ctx (Ollama) or the request's tokens (transformers)
    weights_gib: float
    kv_gib: float
    gpu_share: float  # of the weights on the GPU (1.0: none on the CPU)
    fits: bool
    tokens_per_s: float  # one request's decode rate


def local_run(m: ModelSpec, gpu: GpuSpec, engine: str, weights: WeightsDtype | None, context: int | None,
              request_tokens: int) -> LocalRun:
    """One request on one card under transformers ('hf') or Ollama ('ollama')."""
    total = cuda_total_gib(gpu)
    if engine == "ollama":
        dtype: WeightsDtype = weights if weights in ("int4", "int8", "fp16", "bf16") else "int4"
        ctx = context or ollama_default_ctx(gpu)
    else:
        dtype = weights if weights in ("bf16", "fp16", "int8", "int4") else "bf16"
        ctx = request_tokens
    w = estimate_weights(m, dtype)
    kv = estimate_kv(m, "auto").bytes_for_sequence(ctx) / GIB
    room = total - CUDA_CONTEXT_GIB - (OLLAMA_OVERHEAD_GIB if engine == "ollama" else 1.0) - kv
    share = max(0.0, min(1.0, room / w.weights_gib_per_gpu)) if w.weights_gib_per_gpu else 1.0
    fits = share >= 1.0
    if engine != "ollama" and not fits:
        return LocalRun(engine, dtype, ctx, w.weights_gib_per_gpu, kv, share, False, 0.0)
    read = w.active_read_gib_per_gpu * GIB
    on_gpu = read * share / (gpu.mem_bw_gb_s * 1e9 * GPU_BW_SHARE)
    on_cpu = read * (1 - share) / (HOST_BW_GB_S * 1e9)
    overhead = EAGER_LAYER_S * (m.num_layers or 0) if engine == "hf" else 0.002
    return LocalRun(engine, dtype, ctx, w.weights_gib_per_gpu, kv, share, fits, 1.0 / (on_gpu + on_cpu + overhead))
