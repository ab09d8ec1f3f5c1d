"""Layer layouts beyond 'every layer alike': MoE on some layers only, shared experts, linear-attention layers,
the gated query and the DSA indexer. Counts worked by hand on the tiny specs of tests/sizing/specs.py."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from service.sizing.params import count_params, flops_matmul_params, linear_layers, moe_layers, softmax_layers
from tests.sizing.specs import decoder, moe_decoder

MOE: dict[str, Any] = {"num_experts": 4, "top_k": 2, "moe_intermediate_size": 32}
DELTANET: dict[str, Any] = {"kind": "gated_deltanet", "layers": 1, "num_key_heads": 2, "num_value_heads": 4,
                            "key_head_dim": 8, "value_head_dim": 8, "conv_kernel": 4}
LIGHTNING: dict[str, Any] = {"kind": "lightning", "layers": 1, "num_key_heads": 4, "num_value_heads": 4,
                             "key_head_dim": 16, "value_head_dim": 16}


@pytest.mark.parametrize(
    ("moe", "sparse", "total", "active"),
    [
        # every layer MoE (moe_decoder): 202,560 total, top-2 of 4 leaves 2 x 2 x 6,144 idle
        (MOE, 2, 202_560, 177_984),
        # Llama-4 Maverick interleave_moe_layer_step 2: layer 0 dense SwiGLU (18,432), layer 1 experts + router:
        # 2 x 12,288 + 18,432 + 24,576 + 256 + 128,000 + 320 = 196,160; one MoE layer, two idle experts
        ({**MOE, "layer_step": 2}, 1, 196_160, 196_160 - 2 * 6_144),
        # Qwen-MoE mlp_only_layers [1]: layer 1 dense, layer 0 MoE, the same count
        ({**MOE, "dense_layers": [1]}, 1, 196_160, 196_160 - 2 * 6_144),
        # DeepSeek shared expert of moe_intermediate_size: + 3 x 64 x 32 = 6,144 per MoE layer, always active
        ({**MOE, "shared_experts": 1}, 2, 202_560 + 2 * 6_144, 177_984 + 2 * 6_144),
        # Qwen2-MoE shared expert of its own width 48: + 3 x 64 x 48 = 9,216 per MoE layer
        ({**MOE, "shared_experts": 1, "shared_expert_intermediate_size": 48}, 2, 202_560 + 2 * 9_216,
         177_984 + 2 * 9_216),
    ],
)
def test_moe_layer_layouts(moe: dict[str, Any], sparse: int, total: int, active: int) -> None:
    m = moe_decoder(moe=moe)
    c = count_params(m)
    assert moe_layers(m) == sparse
    assert (c.total, c.active) == (total, active)


def test_flops_count_top_k_experts_on_moe_layers_only() -> None:
    # layer_step 2: layer 0 dense (12,288 + 18,432), layer 1 attention + 2 experts (12,288) + router (256),
    # + 2 x vocab x hidden = 128,000
    m = moe_decoder(moe={**MOE, "layer_step": 2})
    assert flops_matmul_params(m) == 2 * 12_288 + 18_432 + 12_288 + 256 + 128_000


def test_moe_with_no_sparse_layer_is_refused() -> None:
    with pytest.raises(ValidationError, match="no layer holds the experts"):
        moe_decoder(moe={**MOE, "layer_step": 3})  # 2 layers: (i + 1) % 3 is never 0


def test_gated_deltanet_layer_counts_its_projections_and_conv() -> None:
    # Layer 0 linear: key width 2 x 8 = 16, value width 4 x 8 = 32; in_proj_qkvz 64 x (2 x 16 + 2 x 32) = 6,144,
    # in_proj_ba 64 x 8 = 512, out_proj 32 x 64 = 2,048; conv (2 x 16 + 32) x 4 = 256, A_log + dt_bias 8, norm 8.
    # Layer 1 softmax attention 12,288. MLPs 2 x 18,432, embedding + head 128,000, norms 320.
    m = decoder(linear_attn=DELTANET)
    assert (linear_layers(m), softmax_layers(m)) == (1, 1)
    assert count_params(m).total == 8_704 + 272 + 12_288 + 36_864 + 128_000 + 320


def test_lightning_layer_counts_qkv_gate_and_out() -> None:
    # qkv 64 x 192 = 12,288, output_gate 64 x 64 = 4,096, out_proj 64 x 64 = 4,096, norm 64
    m = decoder(linear_attn=LIGHTNING)
    assert count_params(m).total == 20_480 + 64 + 12_288 + 36_864 + 128_000 + 320


def test_attention_output_gate_doubles_the_query_projection() -> None:
    # q_proj 64 -> 2 x 64 on each softmax layer: + 4,096 x 2 layers; with one DeltaNet layer, + 4,096 once
    assert count_params(decoder(attn_output_gate=True)).total == 189_760 + 2 * 4_096
    assert count_params(decoder(attn_output_gate=True, linear_attn=DELTANET)).total == \
        count_params(decoder(linear_attn=DELTANET)).total + 4_096


def test_dsa_indexer_adds_its_projections() -> None:
    # per layer: wq_b 32 x (2 x 8) = 512, wk 64 x 8 = 512, weights_proj 64 x 2 = 128, k_norm 2 x 8 = 16 -> 1,168
    mla = {"q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8}
    plain = count_params(decoder(mla=mla)).total
    assert count_params(decoder(mla={**mla, "index_n_heads": 2, "index_head_dim": 8})).total == plain + 2 * 1_168


def test_linear_and_window_layers_cannot_exceed_the_model() -> None:
    with pytest.raises(ValidationError, match="more than num_layers"):
        decoder(linear_attn={**DELTANET, "layers": 2}, sliding_window=16, sliding_window_layers=1)
