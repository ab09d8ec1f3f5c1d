"""The transient memory an engine measures (or reserves) before it sizes the KV pool.

vLLM V1 profiles one dummy forward of `max_num_batched_tokens` tokens and one dummy sampler run over
`min(max_num_seqs, max_num_batched_tokens)` requests (vllm/v1/worker/gpu_model_runner.py `profile_run` and
`_dummy_sampler_run`), and subtracts the PyTorch peak it saw (vllm/v1/worker/gpu_worker.py
`determine_available_memory`). The forward's peak is one layer's intermediates on top of the residual stream:
the residual, the normed input and the output buffer (3 x hidden) beside the QKV output and the attention output,
or the MLP's gate/up output and its activation (MoE: the fused-MoE caches for `top_k` copies of each token).
Checked on vLLM 0.6.4's printed peaks for Llama-3.1-8B at 20k and 29k tokens (2.07 and 2.99 GiB over the weights;
this gives 2.12 and 3.05); the sampler holds the dummy requests' logits over the whole vocabulary.
TensorRT-LLM and LMDeploy allocate the same buffers for their token budget before sizing the pool.

Vision-language models: the profile run first encodes the largest image the processor allows (vLLM V1
`profile_run`: "Encoder cache will be initialized with a budget of N tokens, and profiled with 1 image items of
the maximum feature size"; the encoder cache budget is max(max_num_batched_tokens, the item's tokens)). Its
peak is one encoder layer's intermediates over every patch (the ViT's linears are split over the TP ranks as the
LLM's are; attention runs in FlashAttention, no patches^2 term), and the encoder's outputs stay cached beside
the language model's own forward: that is why a VL model that loads may still leave no KV cache, and why
`--limit-mm-per-prompt` and a smaller `max_pixels` lower the peak.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.serving.types import GIB
from service.sizing.serving.weights import attention_dims_per_gpu

ACT_BYTES = 2  # 16-bit activations
def forward_peak_bytes_per_token(m: ModelSpec, tp: int) -> float:
    """Peak transient activation bytes per token of one forward pass on one GPU (16-bit)."""
    h = m.hidden_size or 0
    q, kv = attention_dims_per_gpu(m, tp)
    tp = max(1, tp)
    residual = 3 * h  # residual stream, normed input, the all-reduce / output buffer
    attn = q + 2 * kv + q  # QKV output, attention output
    if m.moe is not None:
        e = m.moe
        shared = e.shared_expert_intermediate_size or e.shared_experts * e.moe_intermediate_size
        mlp = e.top_k * (3 * e.moe_intermediate_size / tp + h) + 3 * shared / tp
    else:
        mlp = 3 * (m.intermediate_size or 0) / tp  # gate/up output (2 I) + activation output (I)
    return ACT_BYTES * (residual + max(attn, mlp))


def forward_peak_gib(m: ModelSpec, tp: int, tokens: int) -> float:
    return forward_peak_bytes_per_token(m, tp) * tokens / GIB


def logits_gib(m: ModelSpec, rows: int) -> float:
    """Logits of `rows` tokens over the whole vocabulary (gathered on every rank), fp32."""
    return rows * (m.vocab_size or 0) * 4 / GIB


def vision_profile_gib(m: ModelSpec, tp: int, batched_tokens: int) -> float:
    """The vision encoder's start-up profile on one GPU: one encoder layer over the largest item's patches, plus
    the encoder cache of the item's tokens at the language model's width (0 for text models, or a VL row
    without the encoder's shape)."""
    if not (m.vision_hidden_size and m.vision_max_patches):
        return 0.0
    h = m.vision_hidden_size
    inter = m.vision_intermediate_size or 4 * h
    tp = max(1, tp)
    layer = 3 * h + max(4 * h / tp, 3 * inter / tp)  # residual, normed input, output; QKV + out or the MLP
    cache_tokens = max(batched_tokens, m.vision_tokens_per_item or 0)
    return (m.vision_max_patches * layer + cache_tokens * (m.hidden_size or 0)) * ACT_BYTES / GIB
