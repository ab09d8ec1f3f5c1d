"""Tiny synthetic architectures whose counts are worked out by hand in the tests' comments."""

from __future__ import annotations

from datetime import date
from typing import Any

from service.catalog.schema import ModelSpec


def decoder(**overrides: Any) -> ModelSpec:
    """A 2-layer GQA SwiGLU decoder: L=2, h=64, 4 heads of 16, 2 KV heads, I=96, V=1000, untied, no biases.

    Linears per layer: q 64x64 = 4096, k 64x32 = 2048, v 2048, o 4096, gate/up/down 64x96 = 6144 each
    -> 30,720; x 2 layers = 61,440. Embedding 1000x64 = 64,000; lm_head 64,000 (untied).
    Norms: 2 RMSNorms x 64 x 2 layers + final 64 = 320. Total 189,760.
    """
    fields: dict[str, Any] = dict(
        id="tiny", name="Tiny", family="test", kind="decoder", num_layers=2, hidden_size=64, num_heads=4,
        num_kv_heads=2, intermediate_size=96, vocab_size=1000, max_position_embeddings=4096,
        tie_word_embeddings=False, params_published_b=189_760 / 1e9, source="hand-built test spec",
        as_of=date(2026, 1, 1),
    )
    fields.update(overrides)
    return ModelSpec(**fields)


def moe_decoder(**overrides: Any) -> ModelSpec:
    """`decoder()` with every MLP replaced by 4 experts of I=32, top-2, no shared expert.

    Per layer: attention 12,288; experts 4 x 3 x 64 x 32 = 24,576; router 64 x 4 = 256 -> 37,120; x 2 = 74,240.
    Total = 74,240 + 128,000 (embedding + head) + 320 (norms) = 202,560.
    Active: each layer uses 2 of 4 experts -> 2 layers x 2 idle experts x 6,144 = 24,576 fewer -> 177,984.
    """
    fields: dict[str, Any] = dict(
        moe={"num_experts": 4, "top_k": 2, "moe_intermediate_size": 32, "shared_experts": 0, "first_k_dense": 0},
    )
    fields.update(overrides)
    return decoder(**fields)


def gpt_like(layers: int = 2, hidden: int = 64, heads: int = 4, vocab: int = 1000) -> ModelSpec:
    """GPT-style block (multi-head attention, GeLU MLP of 4h): the shape Korthikanti et al. count."""
    return decoder(num_layers=layers, hidden_size=hidden, num_heads=heads, num_kv_heads=heads,
                   intermediate_size=4 * hidden, vocab_size=vocab, mlp="gelu")
