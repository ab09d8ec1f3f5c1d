"""Weights per GPU and KV bytes per token, worked out by hand on tiny specs and on published architectures."""

from __future__ import annotations

import pytest

from service.catalog.schema import ModelSpec
from service.sizing.serving.kv import attention_kind, estimate_kv
from service.sizing.serving.types import GIB
from service.sizing.serving.weights import estimate_weights, quantised_bytes_per_param
from tests.sizing.specs import decoder, moe_decoder

# tiny decoder (tests/sizing/specs.py): linears 61,440 (q 4096, k 2048, v 2048, o 4096, MLP 18,432 per layer x 2);
# embedding and lm_head 1000 x 64 = 64,000 each (vocab padded to 1024 -> 65,536); norms 320.
LINEAR, EMB_PADDED, NORMS = 61_440, 65_536, 320


@pytest.mark.parametrize(("dtype", "per_param"), [
    ("bf16", 2.0),  # 16-bit
    ("fp16", 2.0),
    ("int4", 0.5 + 2.5 / 128),  # 4-bit + fp16 scale + 4-bit zero per group of 128
    ("fp8", 1.0 + 4.0 / 64),  # 1 B + one fp32 scale per output channel (d_in 64)
    ("int8", 1.0 + 4.0 / 64),
])
def test_bytes_per_quantised_weight(dtype: str, per_param: float) -> None:
    assert quantised_bytes_per_param(dtype, 64) == pytest.approx(per_param)  # type: ignore[arg-type]


def test_tiny_decoder_bf16_tp1_is_every_parameter_at_two_bytes() -> None:
    w = estimate_weights(decoder(), "bf16", 1)
    assert w.weights_gib_per_gpu * GIB == pytest.approx(2 * (LINEAR + 2 * EMB_PADDED + NORMS))
    assert w.expert_gib_per_gpu == 0


def test_tp2_splits_linears_and_vocab_but_not_norms() -> None:
    # 2 KV heads over 2 GPUs: one each, so K/V split evenly too
    w = estimate_weights(decoder(), "bf16", 2)
    assert w.weights_gib_per_gpu * GIB == pytest.approx(2 * (LINEAR / 2 + EMB_PADDED + NORMS))


def test_kv_heads_are_replicated_past_tp_equal_kv_heads() -> None:
    # tp 4 > 2 KV heads: each GPU keeps one whole head (half of K and V), not a quarter
    w = estimate_weights(decoder(), "bf16", 4)
    kv_proj = 2 * 2048 * 2  # k and v, 2 layers
    rest = LINEAR - kv_proj
    expected = 2 * (rest / 4 + kv_proj / 2 + 2 * EMB_PADDED / 4 + NORMS)
    assert w.weights_gib_per_gpu * GIB == pytest.approx(expected)
    assert any("replicated" in n for n in w.notes)


def test_int4_keeps_embeddings_and_head_16_bit() -> None:
    w = estimate_weights(decoder(), "int4", 1)
    assert w.quantised_gib_per_gpu * GIB == pytest.approx(LINEAR * (0.5 + 2.5 / 128))
    assert w.unquantised_gib_per_gpu * GIB == pytest.approx(2 * (2 * EMB_PADDED + NORMS))


def test_moe_keeps_every_expert_resident_and_reads_top_k() -> None:
    # moe_decoder: 4 experts of 3 x 64 x 32 = 6,144 per layer each, 2 layers -> 49,152 expert params; top-2 of 4
    w = estimate_weights(moe_decoder(), "bf16", 1)
    assert w.expert_gib_per_gpu * GIB == pytest.approx(2 * 49_152)
    # a batch-1 decode reads half the experts, and not the input embedding (a gather)
    assert (w.weights_gib_per_gpu - w.active_read_gib_per_gpu) * GIB == pytest.approx(2 * 49_152 / 2 + 2 * EMB_PADDED)


@pytest.mark.parametrize(("overrides", "kind", "bytes_per_token"), [
    ({}, "gqa", 2 * 2 * 2 * 16 * 2),  # K+V x 2 KV heads x head_dim 16 x 2 layers x 2 B = 256
    ({"num_kv_heads": 4}, "mha", 2 * 4 * 16 * 2 * 2),  # MHA: 4 KV heads
    ({"num_kv_heads": 1}, "mqa", 2 * 1 * 16 * 2 * 2),  # MQA: 1 KV head
])
def test_kv_bytes_per_token_by_attention_kind(overrides: dict[str, int], kind: str, bytes_per_token: int) -> None:
    m = decoder(**overrides)
    kv = estimate_kv(m)
    assert attention_kind(m) == kind
    assert kv.bytes_per_token_per_gpu == bytes_per_token


def test_kv_fp8_halves_and_tp_shards_down_to_one_head() -> None:
    m = decoder()  # 2 KV heads
    assert estimate_kv(m, "fp8").bytes_per_token_per_gpu == 128
    assert estimate_kv(m, "auto", 2).bytes_per_token_per_gpu == 128  # one head per GPU
    assert estimate_kv(m, "auto", 4).bytes_per_token_per_gpu == 128  # still one head: replicated


def test_mla_latent_cache_is_kv_lora_rank_plus_rope_and_replicated() -> None:
    # DeepSeek-V3 shape on the tiny spec: (512 + 64) x 2 layers x 2 B = 2,304 B per token on every GPU
    m = decoder(mla={"q_lora_rank": 32, "kv_lora_rank": 512, "qk_nope_head_dim": 16, "qk_rope_head_dim": 64,
                     "v_head_dim": 16})
    assert estimate_kv(m).attention == "mla"
    assert estimate_kv(m).bytes_per_token_per_gpu == 2304
    assert estimate_kv(m, "auto", 8).bytes_per_token_per_gpu == 2304


def test_sliding_window_layers_keep_only_the_window() -> None:
    # one of 2 layers windowed at 100 tokens: a 1000-token sequence costs 1000 + 100 layer-tokens of 128 B
    kv = estimate_kv(decoder(sliding_window=100, sliding_window_layers=1))
    assert (kv.full_layers, kv.window_layers) == (1, 1)
    assert kv.bytes_for_sequence(1000) == 128 * (1000 + 100)
    assert kv.bytes_for_sequence(50) == 128 * (50 + 50)


def test_published_kv_sizes(catalog_models: dict[str, ModelSpec]) -> None:
    # Llama-3-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B (the "128 KiB per token" in vLLM's docs)
    # DeepSeek-V3: 61 layers x 576 x 2 B = 70,272 B per token
    assert estimate_kv(catalog_models["Llama-3-8B"]).bytes_per_token_per_gpu == 131_072
    assert estimate_kv(catalog_models["DeepSeek-V3"]).bytes_per_token_per_gpu == 70_272


def test_linear_attention_layers_keep_a_fixed_state_not_per_token_kv() -> None:
    # One DeltaNet layer of 2: only the softmax layer grows, 2 x 2 KV heads x 16 x 2 B = 128 B per token.
    # State: 4 value heads x 8 x 8 = 256 + conv (4 - 1) x (2 x 16 + 32) = 192 -> 448 elements x 2 B = 896 B.
    m = decoder(linear_attn={"kind": "gated_deltanet", "layers": 1, "num_key_heads": 2, "num_value_heads": 4,
                             "key_head_dim": 8, "value_head_dim": 8, "conv_kernel": 4})
    kv = estimate_kv(m)
    assert (kv.full_layers, kv.window_layers, kv.linear_layers) == (1, 0, 1)
    assert kv.bytes_per_token_per_gpu == 128
    assert kv.bytes_for_sequence(1000) == 128 * 1000 + 896
    assert kv.bytes_for_sequence(10) == 128 * 10 + 896  # the state does not shrink with the sequence
    # tp 2: one KV head per GPU, the state's heads split in two
    assert (estimate_kv(m, "auto", 2).bytes_per_token_per_gpu, estimate_kv(m, "auto", 2).state_bytes_per_seq) == \
        (64, 448)


def test_lightning_state_is_heads_times_head_dim_squared() -> None:
    # 4 heads x 16 x 16 x 2 B = 2,048 B per sequence, whatever its length
    m = decoder(linear_attn={"kind": "lightning", "layers": 1, "num_key_heads": 4, "num_value_heads": 4,
                             "key_head_dim": 16, "value_head_dim": 16})
    assert estimate_kv(m).state_bytes_per_seq == 2_048


def test_dsa_indexer_key_is_cached_per_token() -> None:
    # (kv_lora_rank 16 + rope 4 + indexer key 8) x 2 layers x 2 B = 112 B per token (80 without the indexer)
    mla = {"q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8}
    assert estimate_kv(decoder(mla=mla)).bytes_per_token_per_gpu == 80
    assert estimate_kv(decoder(mla={**mla, "index_n_heads": 2, "index_head_dim": 8})).bytes_per_token_per_gpu == 112
