"""vLLM's memory policy, release by release (versions.py says what changed when).

KV bytes per GPU = total x gpu_memory_utilization - weights - the profile run's PyTorch peak - the non-PyTorch
increase (V1: vllm/v1/worker/gpu_worker.py `determine_available_memory`; V0: vllm/worker/worker.py
`determine_num_available_blocks`, the same sum). The pool is cut into 16-token blocks
(vllm/v1/core/kv_cache_utils.py `get_num_blocks`) and logged as "GPU KV cache size: N tokens" (V0: "# GPU blocks"
x 16): the pool over a token's bytes on every layer. Concurrency at max_model_len counts a sliding-window
layer's blocks as its window plus one batch of new tokens (`SlidingWindowSpec.max_memory_usage_bytes`:
window - 1 + max_num_batched_tokens tokens, + 1 block), from 0.10.

CUDA graphs are captured after the pool is allocated, in the memory `1 - utilization` leaves (less the CUDA
context from 0.10, when it no longer counts inside the budget). Capture memory grows with the layers, with
the custom all-reduce buffers registered per TP rank, and with MoE kernels: 0.018 GiB per layer x
(1 + 0.3 x log2(tp)) x 1.75 for MoE, fitted on the captures the rows print (Qwen2-7B 0.50 GiB at TP1 and
0.65 at TP2, gpt-oss-120b 1.88 GiB at TP4) and checked against the Qwen3-30B-A3B capture that runs out of
2.2 GiB on four A10s (vllm#17469).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.catalog.schema import ModelSpec
from service.sizing.serving.activation import forward_peak_gib, logits_gib, vision_profile_gib
from service.sizing.serving.versions import VllmRegime

FORWARD_FACTOR = 1.0  # measured peak / modelled forward intermediates (activation.py: V0 runs at 20k, 29k tokens)
V0_LOGIT_BYTES = 2  # V0 profiles the 16-bit logits of one token per dummy sequence
GRAPH_GIB_PER_LAYER = 0.018
GRAPH_TP_GROWTH = 0.3  # per doubling of tp
GRAPH_MOE_FACTOR = 1.75
V0_MAX_NUM_SEQS = 256


@dataclass(frozen=True)
class VllmProfile:
    activation_gib: float
    non_torch_gib: float
    batched_tokens: int  # the profile run's token count
    graph_gib: float  # CUDA-graph capture memory (0 with enforce_eager)
    graph_headroom_gib: float  # what the capture may use
    vision_gib: float = 0.0  # the vision encoder's share of the activation peak
    sampler_gib: float = 0.0  # the dummy sampler run's share


def profile(m: ModelSpec, regime: VllmRegime, tp: int, max_len: int, seqs: int, batched: int | None,
            default_batched: int, total_gib: float, util: float, ctx_gib: float, eager: bool,
            pp: int = 1, nccl_gib: float = 0.15) -> VllmProfile:
    """The profile run's peak and the CUDA-graph budget for one GPU of a TP-`tp` x PP-`pp` replica (the
    vision encoder and the sampler run on the first and the last stage; the figure is the larger GPU's)."""
    if regime.v1:
        tokens = batched or default_batched
        sampler = logits_gib(m, min(seqs, tokens)) * (regime.sampler_bytes_per_logit / 4)
    else:
        chunked = regime.chunked_over_32k and max_len > 32768
        tokens = batched or (regime.chunked_budget if chunked else max(max_len, 2048))
        sampler = logits_gib(m, min(seqs or V0_MAX_NUM_SEQS, tokens)) * (V0_LOGIT_BYTES / 4)
    vision = vision_profile_gib(m, tp, tokens)
    forward = FORWARD_FACTOR * forward_peak_gib(m, tp, tokens)
    act = forward + (max(sampler, vision) if pp > 1 else sampler + vision)
    # under TP / PP the NCCL buffers connected during the profile run count too (V1 from 0.10: the CUDA context
    # and communicator init are in the baseline snapshot, the runtime-connected buffers are not)
    non_torch = regime.non_torch_gib + (nccl_gib if tp * pp > 1 and not regime.context_inside_budget else 0.0)
    graph = 0.0 if eager else graph_gib(m, tp, pp)
    headroom = total_gib * (1 - util) - (0.0 if regime.context_inside_budget else ctx_gib)
    return VllmProfile(act, non_torch, tokens, graph, headroom, vision, sampler)


def graph_gib(m: ModelSpec, tp: int, pp: int = 1) -> float:
    moe = GRAPH_MOE_FACTOR if m.moe is not None else 1.0
    layers = -(-(m.num_layers or 0) // max(1, pp))
    return GRAPH_GIB_PER_LAYER * layers * (1 + GRAPH_TP_GROWTH * math.log2(max(1, tp))) * moe
