"""Parameter counts from an architecture: totals, per-layer linear shapes (for LoRA), FLOPs-relevant sizes."""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.schema import ModelSpec


@dataclass(frozen=True)
class Linear:
    name: str
    d_in: int
    d_out: int
    count: int  # how many of these per model (layers x experts)


@dataclass(frozen=True)
class ParamCounts:
    total: float  # all parameters
    embedding: float  # input embedding (+ positions)
    lm_head: float  # untied output projection (0 when tied or encoder)
    linear: float  # parameters in the layers' linear weights (what QLoRA quantises)
    active: float  # parameters touched per token (MoE: top-k experts only)
    largest_layer: float  # largest single tensor, for ZeRO-3's gather buffer
    linears: tuple[Linear, ...]


def head_dim(m: ModelSpec) -> int:
    assert m.hidden_size is not None and m.num_heads is not None
    return m.head_dim or m.hidden_size // m.num_heads


def linear_layers(m: ModelSpec) -> int:
    """Layers with linear attention (a fixed state, no KV cache): Qwen3-Next / Qwen3.5 gated DeltaNet, MiniMax-01
    lightning attention."""
    return m.linear_attn.layers if m.linear_attn is not None else 0


def softmax_layers(m: ModelSpec) -> int:
    """Layers with softmax attention (full or sliding-window): every layer but the linear-attention ones."""
    return (m.num_layers or 0) - linear_layers(m)


def moe_layers(m: ModelSpec) -> int:
    """Layers that hold the routed experts: all but the leading dense ones, every k-th only (Llama-4 Maverick,
    Qwen-MoE decoder_sparse_step), minus Qwen-MoE's mlp_only_layers."""
    return m.moe.sparse_layers(m.num_layers or 0) if m.moe is not None else 0


def shared_expert_width(m: ModelSpec) -> int:
    """Width of the always-on shared expert(s) of an MoE layer, fused: Qwen2-MoE's
    shared_expert_intermediate_size, or DeepSeek's n_shared_experts x moe_intermediate_size."""
    if m.moe is None:
        return 0
    e = m.moe
    return e.shared_expert_intermediate_size or e.shared_experts * e.moe_intermediate_size


def _attention_linears(m: ModelSpec) -> list[Linear]:
    h, heads, layers = m.hidden_size or 0, m.num_heads or 0, softmax_layers(m)
    out = _linear_attention_linears(m)
    if m.mla is not None:
        a = m.mla
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        query = ([Linear("q_a_proj", h, a.q_lora_rank, layers), Linear("q_b_proj", a.q_lora_rank, heads * qk, layers)]
                 if a.q_lora_rank else [Linear("q_proj", h, heads * qk, layers)])  # V2-Lite: no query latent
        if a.index_n_heads:  # DSA lightning indexer (DeepSeek-V3.2, GLM-5): wq_b, wk, weights_proj
            query += [Linear("indexer_wq_b", a.q_lora_rank or h, a.index_n_heads * a.index_head_dim, layers),
                      Linear("indexer_wk", h, a.index_head_dim, layers),
                      Linear("indexer_weights_proj", h, a.index_n_heads, layers)]
        return out + [
            *query,
            Linear("kv_a_proj_with_mqa", h, a.kv_lora_rank + a.qk_rope_head_dim, layers),
            Linear("kv_b_proj", a.kv_lora_rank, heads * (a.qk_nope_head_dim + a.v_head_dim), layers),
            Linear("o_proj", heads * a.v_head_dim, h, layers),
        ]
    hd = head_dim(m)
    kv = m.num_kv_heads or heads
    gate = 2 if m.attn_output_gate else 1  # Qwen3-Next: q_proj yields the query and its output gate
    return out + [
        Linear("q_proj", h, heads * hd * gate, layers),
        Linear("k_proj", h, kv * hd, layers),
        Linear("v_proj", h, kv * hd, layers),
        Linear("o_proj", heads * hd, h, layers),
    ]


def _linear_attention_linears(m: ModelSpec) -> list[Linear]:
    """Qwen3-Next GatedDeltaNet: in_proj_qkvz (q, k, v and the output gate z), in_proj_ba (per-head beta and
    decay), out_proj. MiniMax-01 lightning attention: qkv_proj, output_gate, out_proj (transformers'
    Qwen3NextGatedDeltaNet, MiniMaxLightningAttention)."""
    a, h = m.linear_attn, m.hidden_size or 0
    if a is None:
        return []
    key, value = a.num_key_heads * a.key_head_dim, a.num_value_heads * a.value_head_dim
    if a.kind == "gated_deltanet":
        return [Linear("in_proj_qkvz", h, 2 * key + 2 * value, a.layers),
                Linear("in_proj_ba", h, 2 * a.num_value_heads, a.layers),
                Linear("linear_out_proj", value, h, a.layers)]
    return [Linear("qkv_proj", h, 2 * key + value, a.layers), Linear("output_gate", h, value, a.layers),
            Linear("linear_out_proj", value, h, a.layers)]


def _linear_attention_other(m: ModelSpec) -> int:
    """Non-matrix parameters of the linear-attention layers: DeltaNet's depthwise conv over q/k/v, A_log and
    dt_bias per value head, its gated norm; lightning's output norm."""
    a = m.linear_attn
    if a is None:
        return 0
    key, value = a.num_key_heads * a.key_head_dim, a.num_value_heads * a.value_head_dim
    if a.kind == "gated_deltanet":
        return a.layers * ((2 * key + value) * a.conv_kernel + 2 * a.num_value_heads + a.value_head_dim)
    return a.layers * value


def _mlp_linears(m: ModelSpec) -> list[Linear]:
    h, inter, layers = m.hidden_size or 0, m.intermediate_size or 0, m.num_layers or 0
    if m.mlp == "gelu":
        return [Linear("fc1", h, inter, layers), Linear("fc2", inter, h, layers)]
    if m.moe is None:
        return [Linear("gate_proj", h, inter, layers), Linear("up_proj", h, inter, layers),
                Linear("down_proj", inter, h, layers)]
    e = m.moe
    sparse = moe_layers(m)
    dense = layers - sparse
    experts = sparse * e.num_experts
    out = [
        Linear("expert_gate_proj", h, e.moe_intermediate_size, experts),
        Linear("expert_up_proj", h, e.moe_intermediate_size, experts),
        Linear("expert_down_proj", e.moe_intermediate_size, h, experts),
        Linear("router", h, e.num_experts, sparse),
    ]
    shared = shared_expert_width(m)
    if shared:
        out += [Linear("shared_gate_proj", h, shared, sparse), Linear("shared_up_proj", h, shared, sparse),
                Linear("shared_down_proj", shared, h, sparse)]
    if dense:
        out += [Linear("gate_proj", h, inter, dense), Linear("up_proj", h, inter, dense),
                Linear("down_proj", inter, h, dense)]
    return out


def _bias_and_norm_params(m: ModelSpec) -> float:
    h, layers = m.hidden_size or 0, m.num_layers or 0
    heads, kv = m.num_heads or 0, m.num_kv_heads or m.num_heads or 0
    per_attention = 0  # per softmax-attention layer
    if m.kind == "decoder":
        if m.qkv_bias and m.mla is None:
            per_attention += (heads + 2 * kv) * head_dim(m)
        if m.qk_norm:
            per_attention += 2 * head_dim(m)
        if m.mla is not None:
            per_attention += m.mla.q_lora_rank + m.mla.kv_lora_rank  # latent norms
            per_attention += 2 * m.mla.index_head_dim if m.mla.index_n_heads else 0  # indexer k_norm (LayerNorm)
        # two RMSNorms per layer and the final norm
        return 2 * h * layers + per_attention * softmax_layers(m) + _linear_attention_other(m) + h
    # encoders / ViT: LayerNorms (weight + bias) and biases on every linear
    inter = m.intermediate_size or 0
    per_layer = 2 * 2 * h + 3 * h + h + inter + h
    return per_layer * layers + 2 * h


def _embedding_params(m: ModelSpec) -> float:
    h = m.hidden_size or 0
    if m.kind == "vision_transformer":
        patch = 3 * 16 * 16 * h + h  # 16x16 patches, RGB
        return patch + h + (m.max_position_embeddings or 0) * h
    emb = (m.vocab_size or 0) * h
    if m.kind == "encoder":
        emb += (m.max_position_embeddings or 0) * h + 2 * h  # positions + token types
    return emb


def _head_params(m: ModelSpec) -> float:
    h = m.hidden_size or 0
    if m.kind == "decoder":
        return 0 if m.tie_word_embeddings else (m.vocab_size or 0) * h
    if m.kind == "encoder":
        return h * h + h  # pooler
    return h * 1000 + 1000  # ViT ImageNet-1k classifier


# count_params runs thousands of times per plan for one model: keyed by the spec's identity, holding the spec
# itself so that its id cannot be reused while cached (ModelSpec is frozen but not hashable: it has lists).
_COUNTS_CACHE: dict[int, tuple[ModelSpec, ParamCounts]] = {}
_COUNTS_CACHE_MAX = 256


def count_params(m: ModelSpec) -> ParamCounts:
    """Count parameters from dimensions; non-transformer models use their published count."""
    hit = _COUNTS_CACHE.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    counts = _count_params(m)
    if len(_COUNTS_CACHE) >= _COUNTS_CACHE_MAX:
        _COUNTS_CACHE.clear()  # rare; a single call, safe next to readers in other threads
    _COUNTS_CACHE[id(m)] = (m, counts)
    return counts


def _count_params(m: ModelSpec) -> ParamCounts:
    if m.kind in ("cnn", "diffusion"):
        total = m.params_published_b * 1e9
        return ParamCounts(total, 0, 0, total, total, total / 20, ())
    linears = tuple(_attention_linears(m) + _mlp_linears(m))
    linear = float(sum(x.d_in * x.d_out * x.count for x in linears))
    emb, head = float(_embedding_params(m)), float(_head_params(m))
    total = linear + emb + head + _bias_and_norm_params(m)
    active = total
    if m.moe is not None:
        e = m.moe
        per_expert = 3 * (m.hidden_size or 0) * e.moe_intermediate_size
        active = total - moe_layers(m) * (e.num_experts - e.top_k) * per_expert
    largest = max([emb, head] + [float(x.d_in * x.d_out) for x in linears])
    return ParamCounts(total, emb, head, linear, active, largest, linears)


def lora_params(counts: ParamCounts, rank: int, targets: frozenset[str] | None = None) -> float:
    """Adapter parameters r*(d_in+d_out) per adapted matrix; default targets: every linear layer."""
    return float(
        sum(
            rank * (x.d_in + x.d_out) * x.count
            for x in counts.linears
            if x.name != "router" and (targets is None or x.name in targets)
        )
    )


_FLOPS_CACHE: dict[int, tuple[ModelSpec, float]] = {}  # keyed like _COUNTS_CACHE: the planner asks per candidate


def flops_matmul_params(m: ModelSpec) -> float:
    """Parameters that take part in matmuls per token, as verl's FLOPs counter counts them
    (embedding and lm_head both counted; MoE: active experts only)."""
    hit = _FLOPS_CACHE.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    if len(_FLOPS_CACHE) >= _COUNTS_CACHE_MAX:
        _FLOPS_CACHE.clear()
    n = _flops_matmul_params(m)
    _FLOPS_CACHE[id(m)] = (m, n)
    return n


def _flops_matmul_params(m: ModelSpec) -> float:
    if m.kind in ("cnn", "diffusion"):
        return m.params_published_b * 1e9
    c = count_params(m)
    per_token_linear = 0.0
    for x in c.linears:
        n = x.d_in * x.d_out * x.count
        if m.moe is not None and x.name.startswith("expert_"):
            n = x.d_in * x.d_out * moe_layers(m) * m.moe.top_k
        per_token_linear += n
    vocab_side = 2 * (m.vocab_size or 0) * (m.hidden_size or 0) if m.kind == "decoder" else c.embedding + c.lm_head
    return per_token_linear + vocab_side
