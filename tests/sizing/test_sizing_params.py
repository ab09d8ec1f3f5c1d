"""Parameter counting and LoRA adapter sizes: hand-worked small cases, then published counts of real models."""

from __future__ import annotations

import pytest

from service.sizing.params import count_params, flops_matmul_params, lora_params
from tests.sizing.specs import decoder, moe_decoder


def test_tiny_decoder_counts_by_hand() -> None:
    # Worked in tests/sizing/specs.py: linears 61,440; embedding 64,000; lm_head 64,000; norms 320.
    c = count_params(decoder())
    assert c.linear == 61_440
    assert c.embedding == 64_000
    assert c.lm_head == 64_000
    assert c.total == 189_760
    assert c.active == c.total  # dense: every parameter is touched per token
    assert c.largest_layer == 64_000  # the embedding is the largest tensor


def test_tied_embeddings_drop_the_head() -> None:
    # Tied: lm_head shares the embedding matrix -> 189,760 - 64,000 = 125,760.
    c = count_params(decoder(tie_word_embeddings=True))
    assert c.lm_head == 0
    assert c.total == 125_760


def test_qkv_bias_and_qk_norm() -> None:
    # qkv bias: (4 + 2 x 2 KV heads) x 16 = 128 per layer -> +256; q/k norm: 2 x 16 per layer -> +64.
    assert count_params(decoder(qkv_bias=True)).total == 189_760 + 256
    assert count_params(decoder(qk_norm=True)).total == 189_760 + 64


def test_moe_total_and_active() -> None:
    # Worked in specs.moe_decoder: total 202,560; top-2 of 4 experts leaves 2 x 2 x 6,144 idle -> 177,984.
    c = count_params(moe_decoder())
    assert c.total == 202_560
    assert c.active == 177_984


def test_moe_first_k_dense_layers_stay_dense() -> None:
    # first_k_dense=1: layer 0 has the dense SwiGLU (18,432) and no router; layer 1 keeps 4 experts + router.
    # Total = 2 x 12,288 attention + 18,432 + 24,576 + 256 + 128,000 + 320 = 196,160.
    c = count_params(moe_decoder(moe={"num_experts": 4, "top_k": 2, "moe_intermediate_size": 32,
                                      "first_k_dense": 1}))
    assert c.total == 196_160
    assert c.active == 196_160 - 2 * 6_144  # one MoE layer, two idle experts


def test_lora_rank_r_adds_r_times_din_plus_dout_per_matrix() -> None:
    # r=4: q 4(64+64)=512, k 4(64+32)=384, v 384, o 512, gate/up/down 4(64+96)=640 each -> 3,712 per layer, x2.
    c = count_params(decoder())
    assert lora_params(c, 4) == 7_424
    assert lora_params(c, 8) == 2 * 7_424  # linear in the rank
    # q_proj and v_proj only: (512 + 384) x 2 layers.
    assert lora_params(c, 4, frozenset({"q_proj", "v_proj"})) == 1_792


def test_lora_skips_the_moe_router() -> None:
    # Per layer: attention 1,792 + 4 experts x 3 matrices x 4(64+32)=384 -> 6,400; x 2 = 12,800 (no router).
    assert lora_params(count_params(moe_decoder()), 4) == 12_800


def test_flops_params_count_embedding_and_head_even_when_tied() -> None:
    # verl's counter (sizing.md D7) counts vocab*hidden*2 for every decoder: 61,440 + 2 x 64,000.
    assert flops_matmul_params(decoder()) == 189_440
    assert flops_matmul_params(decoder(tie_word_embeddings=True)) == 189_440
    # MoE: top-2 of 4 experts' linears + router: 2 x (12,288 + 2 x 6,144 + 256) + 128,000.
    assert flops_matmul_params(moe_decoder()) == 2 * (12_288 + 12_288 + 256) + 128_000


@pytest.mark.parametrize(
    ("name", "expected", "rel"),
    [
        # Llama-2-7B: 6,738,415,616 parameters (sizing.md D3 cross-check, HF safetensors metadata); exact.
        ("Llama-2-7B", 6_738_415_616, 0),
        # Qwen2.5-7B: official "7.61B"; 7,615,616,512 counted from the config (sizing.md D1).
        ("Qwen2.5-7B", 7_615_616_512, 0),
        # InternLM2-7B: measured loaded-weights count 7,737,708,544 (sizing.md D, id 60519112762); exact.
        ("InternLM2-7B", 7_737_708_544, 0),
        # BERT-base-uncased: BertModel has 109,482,240 parameters (pooler included); exact.
        ("BERT-base", 109_482_240, 0),
        # torchvision vit_l_16: 304,326,632 parameters (ImageNet-1k head); exact.
        ("ViT-L-16", 304_326_632, 0),
        # Qwen3-30B-A3B: 30.53B calc / 30.5B published (sizing.md D2); 0.5 %.
        ("Qwen3-30B-A3B", 30.5e9, 0.005),
        # DeepSeek-V3: 671B total published (README; the 685B upload adds the 14B MTP module); 0.5 %.
        ("DeepSeek-V3", 671e9, 0.005),
        # Mixtral-8x7B: 46.7B total (sizing.md D3); 0.5 %.
        ("Mixtral-8x7B", 46.7e9, 0.005),
        # Llama-3.1-405B: 405.85B (sizing.md D3); 0.1 %.
        ("Llama-3.1-405B", 405.85e9, 0.001),
    ],
)
def test_published_parameter_counts(model, name: str, expected: float, rel: float) -> None:
    assert count_params(model(name)).total == pytest.approx(expected, rel=rel, abs=0.5)


@pytest.mark.parametrize(
    ("name", "active"),
    [
        ("Qwen3-30B-A3B", 3.35e9),  # "A3B": 3.35B active (sizing.md D2 calc); 1 %
        ("Mixtral-8x7B", 12.88e9),  # 12.88B active, 2 of 8 experts (sizing.md D3); 1 %
        ("DeepSeek-V3", 37e9),  # "37B activated" (DeepSeek-V3 README); 2 % (the count gives 37.55B)
    ],
)
def test_moe_active_parameters(model, name: str, active: float) -> None:
    assert count_params(model(name)).active == pytest.approx(active, rel=0.02)


@pytest.mark.parametrize(
    ("target_modules", "rank", "expected"),
    [
        # PEFT on Llama-2-7B, r=8, q_proj + v_proj: 2 x 8 x (4096 + 4096) x 32 layers = 4,194,304
        # ("trainable params: 4,194,304", the figure PEFT prints for this config).
        (frozenset({"q_proj", "v_proj"}), 8, 4_194_304),
        # r=8 on all seven linears: per layer 4 x 8 x 8192 + 3 x 8 x (4096 + 11008) = 624,640; x 32 = 19,988,480.
        (None, 8, 19_988_480),
        # r=64 all linears scales by 8: 159,907,840.
        (None, 64, 159_907_840),
    ],
)
def test_llama2_7b_lora_adapter_counts(model, target_modules, rank: int, expected: int) -> None:
    assert lora_params(count_params(model("Llama-2-7B")), rank, target_modules) == expected


def test_count_params_cache_tracks_identity() -> None:
    # Regression for the planner's count cache: a spec copied with new dimensions must be recounted.
    a = decoder()
    b = a.model_copy(update={"num_layers": 4})
    assert count_params(a).total == 189_760
    assert count_params(b).total == 189_760 + 2 * 30_720 + 2 * 128
    assert count_params(a).total == 189_760
