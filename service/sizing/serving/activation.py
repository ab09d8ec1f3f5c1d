"""The transient memory an engine measures (or reserves) before it sizes the KV pool.

vLLM V1 profiles one dummy forward of `max_num_batched_tokens` tokens and one dummy sampler run over
`min(max_num_seqs, max_num_batched_tokens)` requests (vllm/v1/worker/gpu_model_runner.py `profile_run` and
`_dummy_sampler_run`), and subtracts the PyTorch peak it saw (vllm/v1/worker/gpu_worker.py
`determine_available_memory`). The forward's peak is one layer's intermediates on top of the residual stream:
the QKV output, the attention output, the MLP's gate/up output and its activation (MoE: the fused-MoE caches
for `top_k` copies of each token); the sampler's peak is the logits of every dummy request over the whole
vocabulary in fp32, sorted for top-k/top-p (values and int64 indices) with their softmax and masks.
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.serving.types import GIB
from service.sizing.serving.weights import attention_dims_per_gpu

ACT_BYTES = 2  # 16-bit activations
# Bytes per (request x vocabulary entry) at the sampler's peak: bf16 logits 2, fp32 copy 4, sorted values 4,
# int64 sort indices 8, softmax 4, exponential noise 4, masks 1-2 (V1 sampler with top-k/top-p, the dummy run's
# settings). Fitted on the vLLM start-up rows of evals/serving_runs.yaml (see docs/validation-serving.md).
SAMPLER_BYTES_PER_LOGIT = 28.0


def forward_peak_bytes_per_token(m: ModelSpec, tp: int) -> float:
    """Peak transient activation bytes per token of one forward pass on one GPU (16-bit)."""
    h = m.hidden_size or 0
    q, kv = attention_dims_per_gpu(m, tp)
    tp = max(1, tp)
    residual = 2 * h  # hidden states + residual
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


def sampler_peak_gib(m: ModelSpec, requests: int) -> float:
    """The dummy sampler run: logits of `requests` rows over the whole vocabulary (gathered on every rank)."""
    return requests * (m.vocab_size or 0) * SAMPLER_BYTES_PER_LOGIT / GIB


def logits_gib(m: ModelSpec, rows: int) -> float:
    """Logits of `rows` tokens in fp32 (SGLang, LMDeploy and TensorRT-LLM keep no sampler sort buffers)."""
    return rows * (m.vocab_size or 0) * 4 / GIB
