"""config.json -> ModelSpec fields on small synthetic configs: one case per config key the converter reads."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.hf_config import ConfigUnsupported, convert, released_dtype, vision_params
from service.errors import InvalidInputError

BASE: dict[str, Any] = {"model_type": "llama", "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 1000,
                        "max_position_embeddings": 4096, "tie_word_embeddings": False}


def fields(**over: Any) -> dict[str, Any]:
    return convert({**BASE, **over}).fields


def test_plain_decoder_maps_the_core_keys() -> None:
    f = fields(head_dim=32, attention_bias=True)
    assert (f["num_layers"], f["hidden_size"], f["num_heads"], f["num_kv_heads"], f["intermediate_size"],
            f["vocab_size"], f["max_position_embeddings"]) == (8, 64, 4, 2, 96, 1000, 4096)
    assert f["head_dim"] == 32 and f["qkv_bias"] is True and f["tie_word_embeddings"] is False
    assert "head_dim" not in fields(head_dim=16)  # hidden / heads: not stored
    assert "moe" not in f and "mla" not in f and "linear_attn" not in f


def test_nested_text_config_inherits_the_top_level() -> None:
    # Llama-4 / Gemma-3 / Qwen-VL: the language model under text_config, tie_word_embeddings at the top
    cfg = {"model_type": "llama4", "tie_word_embeddings": True,
           "text_config": {k: v for k, v in BASE.items() if k != "tie_word_embeddings"} | {"model_type": "llama4_text"},
           "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "intermediate_size": 64, "patch_size": 4}}
    f = convert(cfg).fields
    assert f["num_layers"] == 8 and f["tie_word_embeddings"] is True
    assert f["vision_params_b"] > 0


def test_internvl_llm_config() -> None:
    cfg = {"model_type": "internvl_chat", "llm_config": {**BASE, "model_type": "internlm2", "bias": False},
           "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "intermediate_size": 64}}
    assert convert(cfg).fields["num_layers"] == 8


@pytest.mark.parametrize(("over", "moe"), [
    # Mixtral: num_local_experts, the expert width is intermediate_size
    ({"num_local_experts": 8, "num_experts_per_tok": 2}, {"num_experts": 8, "top_k": 2, "moe_intermediate_size": 96}),
    # DeepSeek: routed + shared experts, leading dense layers
    ({"n_routed_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 32, "n_shared_experts": 2,
      "first_k_dense_replace": 1, "moe_layer_freq": 1},
     {"num_experts": 16, "top_k": 4, "moe_intermediate_size": 32, "shared_experts": 2, "first_k_dense": 1}),
    # Qwen2-MoE: one shared expert of its own width, MoE every 2nd layer, layer 7 dense (mlp_only_layers)
    ({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 128,
      "decoder_sparse_step": 2, "mlp_only_layers": [7]},
     {"num_experts": 4, "top_k": 2, "moe_intermediate_size": 32, "shared_experts": 1,
      "shared_expert_intermediate_size": 128, "layer_step": 2, "dense_layers": [7]}),
    # Llama-4 Maverick: interleave_moe_layer_step, dense layers of intermediate_size_mlp, one shared expert
    ({"model_type": "llama4_text", "num_local_experts": 8, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
      "intermediate_size_mlp": 192},
     {"num_experts": 8, "top_k": 1, "moe_intermediate_size": 96, "shared_experts": 1, "layer_step": 2}),
    # ERNIE-4.5: moe_* keys, MoE from layer 1
    ({"moe_num_experts": 8, "moe_k": 2, "moe_intermediate_size": 32, "moe_num_shared_experts": 1,
      "moe_layer_start_index": 1, "moe_layer_interval": 1},
     {"num_experts": 8, "top_k": 2, "moe_intermediate_size": 32, "shared_experts": 1, "first_k_dense": 1}),
])
def test_moe_layouts(over: dict[str, Any], moe: dict[str, Any]) -> None:
    f = fields(**over)
    assert f["moe"] == moe
    if "intermediate_size_mlp" in over:
        assert f["intermediate_size"] == 192  # the dense layers' width


def test_mla_with_and_without_the_query_latent_and_the_dsa_indexer() -> None:
    mla = {"kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8}
    assert fields(**mla, q_lora_rank=None)["mla"]["q_lora_rank"] == 0  # V2-Lite
    f = fields(**mla, q_lora_rank=32, index_n_heads=2, index_head_dim=8, head_dim=64, attention_bias=True)
    assert f["mla"] == {**mla, "q_lora_rank": 32, "index_n_heads": 2, "index_head_dim": 8}
    assert "head_dim" not in f and f["qkv_bias"] is False  # MLA has its own head widths and no q/k/v bias


@pytest.mark.parametrize(("over", "window", "layers"), [
    ({"sliding_window": 512, "layer_types": ["sliding_attention"] * 6 + ["full_attention"] * 2}, 512, 6),
    ({"sliding_window": 512, "sliding_window_pattern": 4}, 512, 6),  # Gemma-3 / Cohere2: every 4th global
    ({"model_type": "gemma2", "sliding_window": 512}, 512, 4),  # Gemma-2: every other layer
    ({"sliding_window": 512}, 512, None),  # Mistral-7B-v0.1: every layer
])
def test_sliding_windows(over: dict[str, Any], window: int, layers: int | None) -> None:
    f = fields(**over)
    assert f["sliding_window"] == window and f.get("sliding_window_layers") == layers


@pytest.mark.parametrize("over", [
    {"sliding_window": 512, "use_sliding_window": False},  # Qwen2: set but off
    {"sliding_window": 8192},  # as long as the context: no window
])
def test_windows_that_change_nothing_are_dropped(over: dict[str, Any]) -> None:
    assert "sliding_window" not in fields(**over)


DELTANET = {"linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
            "linear_value_head_dim": 8, "linear_conv_kernel_dim": 4}


@pytest.mark.parametrize("over", [
    {**DELTANET, "layer_types": ["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3
     + ["full_attention"]},
    {**DELTANET, "full_attention_interval": 4},  # Qwen3-Next without layer_types
])
def test_gated_deltanet_every_fourth_layer_full(over: dict[str, Any]) -> None:
    f = fields(model_type="qwen3_next", **over)
    assert f["linear_attn"] == {"kind": "gated_deltanet", "layers": 6, "num_key_heads": 2, "num_value_heads": 4,
                                "key_head_dim": 8, "value_head_dim": 8, "conv_kernel": 4}
    assert f["attn_output_gate"] is True  # Qwen3-Next gates its attention output


def test_minimax_lightning_from_attn_type_list() -> None:
    # MiniMax-01: 0 = lightning (linear), 1 = softmax; every 8th layer softmax
    f = fields(model_type="minimax", head_dim=16, attn_type_list=[0] * 7 + [1])
    assert f["linear_attn"] == {"kind": "lightning", "layers": 7, "num_key_heads": 4, "num_value_heads": 4,
                                "key_head_dim": 16, "value_head_dim": 16}
    assert "linear_attn" not in fields(attn_type_list=[1] * 8)  # MiniMax-M2: all softmax


@pytest.mark.parametrize(("q", "dtype"), [
    ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "fp8"),  # DeepSeek-V3, Kimi-K2
    ({"quant_method": "awq", "bits": 4, "group_size": 128}, "int4"),
    ({"quant_method": "gptq", "bits": 4}, "int4"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int"}}}},
     "int4"),  # Kimi-K2-Thinking
    ({"quant_method": "mxfp4"}, "mxfp4"),  # gpt-oss
])
def test_quantization_config_sets_the_released_dtype(q: dict[str, Any], dtype: str) -> None:
    assert released_dtype({"quantization_config": q}) == dtype
    assert fields(quantization_config=q)["released_dtype"] == dtype


def test_no_quantization_is_16_bit_and_int8_is_refused() -> None:
    assert released_dtype({}) is None and "released_dtype" not in fields()
    with pytest.raises(ConfigUnsupported):
        released_dtype({"quantization_config": {"quant_method": "bitsandbytes", "bits": 8}})


def test_chatglm_keys() -> None:
    cfg = {"model_type": "chatglm", "num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
           "multi_query_attention": True, "multi_query_group_num": 2, "kv_channels": 16, "ffn_hidden_size": 96,
           "padded_vocab_size": 1024, "seq_length": 8192, "add_qkv_bias": True, "tie_word_embeddings": False}
    f = convert(cfg).fields
    assert (f["num_layers"], f["num_kv_heads"], f["intermediate_size"], f["vocab_size"],
            f["max_position_embeddings"], f["qkv_bias"]) == (4, 2, 96, 1024, 8192, True)


def test_defaults_that_the_config_leaves_out_are_said() -> None:
    c = convert({k: v for k, v in BASE.items() if k != "tie_word_embeddings"} | {"model_type": "gemma2"})
    assert c.fields["tie_word_embeddings"] is True  # Gemma ties its embeddings
    assert any("tie_word_embeddings not in the config" in n for n in c.notes)
    assert convert({**BASE, "model_type": "qwen2"}).fields["qkv_bias"] is True  # Qwen2: bias without a key
    assert convert({**BASE, "model_type": "qwen3"}).fields["qk_norm"] is True


@pytest.mark.parametrize("key", ["linear_attn_config", "hybrid_override_pattern", "compress_ratios"])
def test_architectures_the_schema_cannot_hold_are_refused(key: str) -> None:
    with pytest.raises(ConfigUnsupported, match=key):
        fields(**{key: [1]})


def test_missing_dims_are_named() -> None:
    with pytest.raises(InvalidInputError, match="num_hidden_layers"):
        convert({"hidden_size": 64})


def test_vision_params_count_blocks_patch_and_projector() -> None:
    # h 8, 1 block, GELU MLP of 16: attention 4 x 64 + 4 x 8 = 288, MLP 2 x 8 x 16 + 16 + 8 = 280, norms 32 -> 600;
    # patch 3 x 2 x 2 x 8 = 96; projector 8 x 10 (no merge) = 80 -> 776
    v = {"hidden_size": 8, "num_hidden_layers": 1, "intermediate_size": 16, "patch_size": 2}
    assert vision_params(v, text_hidden=10) == 776


def test_float4_groups_of_16_are_nvfp4_and_refused() -> None:
    # NVIDIA's NVFP4 copies (e2m1, groups of 16): not a dtype the catalog holds; groups of 32 are MXFP4
    nv = {"quant_method": "compressed-tensors",
          "config_groups": {"g": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}
    with pytest.raises(ConfigUnsupported, match="not a weight dtype"):
        released_dtype({"quantization_config": nv})
    mx = {"config_groups": {"g": {"weights": {"num_bits": 4, "type": "float", "group_size": 32}}}}
    assert released_dtype({"quantization_config": mx}) == "mxfp4"


@pytest.mark.parametrize(("act", "mlp"), [("silu", "swiglu"), ("gelu_new", "gelu"), ("relu", "gelu")])
def test_activation_picks_the_mlp_shape(act: str, mlp: str) -> None:
    # Regression: OPT's ReLU MLP (two matrices) was read as a gated SwiGLU (three): OPT-175B counted 232B
    assert fields(hidden_act=act)["mlp"] == mlp
