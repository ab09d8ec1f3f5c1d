"""Engine releases whose memory accounting differs, and what changed in each. None = the current release.

vLLM (the file each behaviour is read from):
- V0 engine, before 0.8 (vllm/worker/worker.py `determine_num_available_blocks`): the profile run is one
  batch of `max_num_batched_tokens` = max(max_model_len, 2048) tokens, so the activation peak grows with the
  context; from 0.5.1 contexts above 32k turn chunked prefill on (vllm/engine/arg_utils.py) and profile a
  512-token budget (2048 from 0.7). Its non-PyTorch term includes the CUDA context.
- MLA models cache the latent vector only from 0.7.1 (vllm/attention/backends/mla); earlier releases cached
  full per-head K and V (K of qk_nope + qk_rope = 192 wide, V padded to the same).
- V1 engine, the default from 0.8 (vllm/v1/worker/gpu_worker.py): profiles `max_num_batched_tokens` tokens plus
  a dummy sampler run over `max_num_seqs` requests (sorted for top-k/top-p before FlashInfer sampling, 0.10). Up to 0.9 its non-PyTorch term includes the CUDA
  context; from 0.10 the baseline snapshot is taken after it (and after NCCL), leaving ~0.1 GiB.
- The hybrid KV-cache manager (vllm/v1/core/kv_cache_utils.py, 0.10) sizes sliding-window layers by their
  window; earlier releases gave every layer full-length blocks.
LMDeploy TurboMind: before 0.2.1 `cache_max_entry_count` is a share of the GPU's total memory; from 0.2.1 a share
of the memory free after the weights are loaded (docs/en/get_started, "the meaning changed in v0.2.1").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.sizing.serving.types import Engine

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")
CURRENT = (99, 0, 0)


def parse_version(text: str | None) -> tuple[int, int, int]:
    """'0.6.4' -> (0, 6, 4); 'v0.10.1.1' -> (0, 10, 1); None or unreadable -> the current release."""
    if not text:
        return CURRENT
    m = _VERSION.search(text)
    if m is None:
        return CURRENT
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclass(frozen=True)
class VllmRegime:
    v1: bool
    mla_latent_cache: bool
    window_aware: bool
    chunked_over_32k: bool  # V0: contexts above 32k profile the chunked-prefill budget
    chunked_budget: int  # V0's default chunked-prefill budget
    non_torch_gib: float  # the PyTorch-external memory the policy subtracts (one GPU)
    context_inside_budget: bool  # the CUDA context is part of what utilization covers
    sampler_bytes_per_logit: int  # V1's dummy sampler run: bytes per (request x vocabulary entry)


def vllm_regime(version: str | None) -> VllmRegime:
    v = parse_version(version)
    v1 = v >= (0, 8, 0)
    new_snapshot = v >= (0, 10, 0)
    return VllmRegime(
        v1=v1,
        mla_latent_cache=v >= (0, 7, 1),
        window_aware=new_snapshot,
        chunked_over_32k=v >= (0, 5, 1),
        chunked_budget=2048 if v >= (0, 7, 0) else 512,
        # measured: 0.35 GiB (RTX 3090, 0.6.4), 0.25 (RTX 4090 TP2, V0 2025), 0.43 (A100 TP4, 0.8.3), ~0.1 from 0.10
        non_torch_gib=0.1 if new_snapshot else 0.35,
        context_inside_budget=not new_snapshot,
        # fp32 logits (4 B) when top-k/top-p run in FlashInfer's sampling kernels (0.10 on); before, a torch sort
        # of the fp32 logits (values 4 + int64 indices 8 + softmax 4): 16. Fitted: Qwen3-30B-A3B on 4 x A10 at
        # 0.8.5 (vllm#17469) and Qwen2-7B on A100 at 0.10.1.1.
        sampler_bytes_per_logit=4 if new_snapshot else 16,
    )


def lmdeploy_share_of_total(version: str | None) -> bool:
    return parse_version(version) < (0, 2, 1)


def describe(engine: Engine, version: str | None) -> str:
    return f"{engine} {version}" if version else f"{engine} (current release)"


def engine_label(engine: Engine, version: str | None = None, runtime: str = "cuda") -> tuple[str, str]:
    """The release whose defaults and memory accounting an answer assumes, in English and Chinese: every serving
    answer names it ('vLLM 0.10+ (V1 engine) defaults')."""
    if engine == "vllm":
        if version:
            v1 = vllm_regime(version).v1
            en = zh = f"vLLM {version} ({'V1' if v1 else 'V0'} engine)"
            zh = f"vLLM {version}（{'V1' if v1 else 'V0'} 引擎）"
        else:
            en, zh = "vLLM 0.10+ (V1 engine) defaults", "vLLM 0.10 及以后（V1 引擎）的默认设置"
        if runtime == "npu":
            en, zh = f"vllm-ascend on CANN ({en})", f"vllm-ascend（CANN 上的 {zh}）"
        return en, zh
    if engine == "sglang":
        v = version or "0.5"
        return f"SGLang {v} defaults", f"SGLang {v} 的默认设置"
    if engine == "lmdeploy":
        v = version or "0.2.1+"
        return f"LMDeploy TurboMind {v} defaults", f"LMDeploy TurboMind {v} 的默认设置"
    v = f" {version}" if version else ""
    return (f"TensorRT-LLM{v} (KvCacheConfig defaults)", f"TensorRT-LLM{v}（KvCacheConfig 默认设置）")
