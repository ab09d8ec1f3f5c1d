"""KV-cache bytes per token from the architecture, per GPU of a tensor-parallel replica.

- MHA / GQA / MQA: K and V, `num_kv_heads x head_dim` each, per layer. Under tensor parallelism each rank keeps
  its share of the KV heads, at least one (vLLM `ModelConfig.get_num_kv_heads`: max(1, kv_heads // tp); SGLang
  `get_num_kv_heads` the same), so MQA and small-GQA models replicate the cache past `tp = kv_heads`.
- MLA (DeepSeek-V2/V3): one latent vector of `kv_lora_rank + qk_rope_head_dim` (512 + 64) per layer, no
  separate V, replicated on every rank (vLLM `MLAAttentionSpec` with num_kv_heads 1; SGLang `MLATokenToKVPool`,
  cell size `(kv_lora_rank + qk_rope_head_dim) x layers x dtype`).
- Sliding-window layers (Mistral-7B-v0.1, Gemma-2 every other layer, Gemma-3 five in six) keep at most the
  window: a sequence costs `full_layers x tokens + window_layers x min(tokens, window)`.
- DSA (DeepSeek-V3.2, GLM-5): the lightning indexer caches one more key of `index_head_dim` per token and layer
  (counted here in the KV dtype; vLLM stores it as fp8 with a scale, so this errs a little high).
- Linear-attention layers (Qwen3-Next / Qwen3.5 gated DeltaNet, MiniMax-01 lightning) keep no per-token KV: a
  fixed state per sequence, split over the TP ranks by head: DeltaNet `value_heads x key_dim x value_dim` plus
  its conv window `(kernel - 1) x (2 key + value widths)`, lightning `heads x head_dim^2`; held in the model's
  16-bit dtype (the engines' default state dtype), whatever the KV dtype.
- KV dtype: auto = the model's 16-bit dtype (2 B); fp8 = 1 B (e4m3, per-tensor scale).
"""

from __future__ import annotations

from service.catalog.schema import ModelSpec
from service.sizing.params import head_dim, linear_layers
from service.sizing.serving.types import AttentionKind, KvDtype, KvEstimate


def kv_dtype_bytes(kv_dtype: KvDtype) -> int:
    return 1 if kv_dtype == "fp8" else 2


def attention_kind(m: ModelSpec) -> AttentionKind:
    if m.mla is not None:
        return "mla"
    kv, heads = m.num_kv_heads or m.num_heads, m.num_heads
    if kv == 1:
        return "mqa"
    return "mha" if kv == heads else "gqa"


def kv_heads_per_gpu(m: ModelSpec, tp: int) -> int:
    if m.mla is not None:
        return 1
    kv = m.num_kv_heads or m.num_heads or 1
    return max(1, kv // max(1, tp))


def estimate_kv(m: ModelSpec, kv_dtype: KvDtype = "auto", tp: int = 1, mla_latent: bool = True,
                pp: int = 1) -> KvEstimate:
    """KV bytes per token per GPU, split into full-attention and sliding-window layers. `mla_latent=False`:
    an engine without the MLA latent cache (vLLM before 0.7.1) keeps per-head K and V, V padded to K's width.
    `pp` pipeline stages: each GPU caches its stage's layers (the largest stage's share)."""
    if m.kind != "decoder" or not m.num_layers:
        raise ValueError(f"{m.name} is not a decoder LLM: it has no KV cache to serve from")
    dtype = kv_dtype_bytes(kv_dtype)
    heads = kv_heads_per_gpu(m, tp)
    if m.mla is not None and not mla_latent:
        heads = max(1, (m.num_heads or 1) // max(1, tp))
        per_layer = float(2 * heads * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) * dtype)
    elif m.mla is not None:
        index = m.mla.index_head_dim if m.mla.index_n_heads else 0
        per_layer = float((m.mla.kv_lora_rank + m.mla.qk_rope_head_dim + index) * dtype)
    else:
        per_layer = float(2 * heads * head_dim(m) * dtype)
    linear = linear_layers(m)
    layers = m.num_layers - linear
    window_layers = 0
    if m.sliding_window is not None:
        window_layers = layers if m.sliding_window_layers is None else m.sliding_window_layers
    full_layers = layers - window_layers
    if pp > 1:
        full_layers, window_layers = -(-full_layers // pp), -(-window_layers // pp)
    return KvEstimate(
        attention=attention_kind(m),
        dtype_bytes=dtype,
        kv_heads_per_gpu=heads,
        bytes_per_token_layer=per_layer,
        full_layers=full_layers,
        window_layers=window_layers,
        window_tokens=m.sliding_window,
        linear_layers=linear,
        state_bytes_per_seq=linear_state_bytes(m, tp),
    )


STATE_DTYPE_BYTES = 2  # the engines' default state dtype: the model's 16-bit dtype


def linear_state_bytes(m: ModelSpec, tp: int = 1) -> float:
    """The linear-attention layers' state of one sequence on one GPU of a `tp` replica (module docstring)."""
    a = m.linear_attn
    if a is None:
        return 0.0
    if a.kind == "gated_deltanet":
        conv = max(0, a.conv_kernel - 1) * (2 * a.num_key_heads * a.key_head_dim + a.num_value_heads * a.value_head_dim)
        per_layer = a.num_value_heads * a.key_head_dim * a.value_head_dim + conv
    else:
        per_layer = a.num_value_heads * a.key_head_dim * a.value_head_dim
    return float(a.layers * per_layer * STATE_DTYPE_BYTES) / max(1, tp)
