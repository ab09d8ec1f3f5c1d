"""Engine memory policies: the pool each engine computes, its capacity, and the start-up verdict."""

from __future__ import annotations

import pytest

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.activation import forward_peak_gib, logits_gib
from service.sizing.serving.device import context_gib, cuda_total_gib
from service.sizing.serving.engines import engine_defaults, engine_memory
from service.sizing.serving.kv import estimate_kv
from service.sizing.serving.types import GIB, ServingSetup
from service.sizing.serving.versions import vllm_regime
from service.sizing.serving.vllm_policy import FORWARD_FACTOR
from service.sizing.serving.weights import estimate_weights


def test_vllm_pool_is_utilization_times_total_less_weights_peak_and_non_torch(
        catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Llama-3-8B"], gpus["A100-80G-SXM"]
    r = engine_memory(m, g, ServingSetup(max_model_len=8192))
    # current release (V1): the forward of 2048 batched tokens (A100 default) + fp32 logits of 256 requests
    peak = FORWARD_FACTOR * forward_peak_gib(m, 1, 2048) + logits_gib(m, 256)
    non_torch = vllm_regime(None).non_torch_gib
    expected = 0.9 * cuda_total_gib(g) - estimate_weights(m).weights_gib_per_gpu - peak - non_torch
    assert r.kv_cache_gib == pytest.approx(expected)
    # capacity in whole 16-token blocks of 128 KiB per token
    assert r.kv_capacity_tokens == int(expected * GIB // (131_072 * 16)) * 16
    assert r.max_concurrency == pytest.approx(r.kv_capacity_tokens / 8192)
    assert r.starts


@pytest.mark.parametrize(("gpu", "seqs", "tokens"), [
    ("H100-SXM", 1024, 8192),  # >= 70 GiB and not an A100: the large defaults
    ("H20", 1024, 8192),
    ("A100-80G-SXM", 256, 2048),  # A100 excluded by name (vLLM PR #17885)
    ("A800-80G-SXM", 1024, 8192),  # the A800's device name does not contain "a100"
    ("L20", 256, 2048),  # under 70 GiB
])
def test_vllm_batch_defaults_by_gpu(gpus: dict[str, GpuSpec], gpu: str, seqs: int, tokens: int) -> None:
    d = engine_defaults("vllm", gpus[gpu], 1)
    assert (d.mem_fraction, d.block_size_tokens, d.max_num_seqs, d.max_num_batched_tokens) == (0.9, 16, seqs, tokens)


@pytest.mark.parametrize(("gpu", "tp", "fraction"), [
    # (MiB - reserved) / MiB, reserved = 512 + 1.5 x max(chunk, 2048) + 2 x graph_bs + 1024 x tp / 8
    ("A10", 1, round((23028 - (512 + 1.5 * 2048 + 2 * 24 + 128)) / 23028, 3)),  # 24 GB class: chunk 2048, bs 24
    ("L20", 1, round((46068 - (512 + 1.5 * 4096 + 2 * 32 + 128)) / 46068, 3)),  # 48 GB class: chunk 4096, bs 32
    ("H100-SXM", 1, round((81559 - (512 + 1.5 * 8192 + 2 * 256 + 128)) / 81559, 3)),  # 80 GB: chunk 8192, bs 256
    ("H100-SXM", 8, round((81559 - (512 + 1.5 * 8192 + 2 * 512 + 1024)) / 81559, 3)),  # tp >= 4: bs 512
    ("H20", 1, round((97871 - (512 + 1.5 * 8192 + 2 * 256 + 128)) / 97871, 3)),  # 96 GB: same bucket as 80 GB
])
def test_sglang_default_mem_fraction_static(gpus: dict[str, GpuSpec], gpu: str, tp: int, fraction: float) -> None:
    assert engine_defaults("sglang", gpus[gpu], tp).mem_fraction == fraction


def test_sglang_pool_is_fraction_of_free_memory_less_weights(catalog_models: dict[str, ModelSpec],
                                                             gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Qwen2.5-7B"], gpus["H100-SXM"]
    r = engine_memory(m, g, ServingSetup(engine="sglang", mem_fraction=0.85, max_model_len=32768))
    free = cuda_total_gib(g) - context_gib(1)
    assert r.kv_cache_gib == pytest.approx(0.85 * free - estimate_weights(m).weights_gib_per_gpu - r.other_gib)
    assert r.kv_capacity_tokens == int(r.kv_cache_gib * GIB // estimate_kv(m).bytes_per_token_per_gpu)


@pytest.mark.parametrize(("engine", "fraction"), [("trtllm", 0.9), ("lmdeploy", 0.8)])
def test_free_memory_engines_take_a_share_of_what_is_free(catalog_models: dict[str, ModelSpec],
                                                           gpus: dict[str, GpuSpec], engine: str,
                                                           fraction: float) -> None:
    m, g = catalog_models["Llama-3-8B"], gpus["L40S"]
    r = engine_memory(m, g, ServingSetup(engine=engine, max_model_len=8192))  # type: ignore[arg-type]
    free = cuda_total_gib(g) - context_gib(1) - r.weights_gib - r.activation_peak_gib
    assert r.mem_fraction == fraction and r.kv_cache_gib == pytest.approx(free * fraction)


def test_vllm_refuses_a_context_the_pool_cannot_hold(catalog_models: dict[str, ModelSpec],
                                                     gpus: dict[str, GpuSpec]) -> None:
    # Llama-3.1-8B's default 131,072-token context on a 24 GB A10: ~4 GiB of KV holds ~30k tokens
    r = engine_memory(catalog_models["Llama-3.1-8B"], gpus["A10"], ServingSetup())
    assert r.max_model_len == 131_072 and not r.starts
    assert "--max-model-len" in r.starts_reason and 0 < r.max_model_len_fits < 131_072
    shorter = engine_memory(catalog_models["Llama-3.1-8B"], gpus["A10"],
                            ServingSetup(max_model_len=r.max_model_len_fits))
    assert shorter.starts


def test_weights_larger_than_the_gpu_do_not_load(catalog_models: dict[str, ModelSpec],
                                                 gpus: dict[str, GpuSpec]) -> None:
    r = engine_memory(catalog_models["Llama-3.1-70B"], gpus["H100-SXM"], ServingSetup(max_model_len=4096))
    assert not r.starts and "out of memory while loading" in r.starts_reason


def test_no_pool_left_is_its_own_reason(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    # Qwen2.5-14B bf16 (27.5 GiB) on a 44 GiB L20 at utilization 0.6: 26.6 GiB budget, below the weights
    r = engine_memory(catalog_models["Qwen2.5-14B"], gpus["L20"], ServingSetup(mem_fraction=0.6, max_model_len=4096))
    assert not r.starts and "no memory left for the KV cache" in r.starts_reason


def test_sglang_starts_on_a_short_pool_and_says_so(catalog_models: dict[str, ModelSpec],
                                                   gpus: dict[str, GpuSpec]) -> None:
    # SGLang caps a request at the pool instead of refusing to start (scheduler max_req_input_len)
    r = engine_memory(catalog_models["Llama-3.1-8B"], gpus["A10"], ServingSetup(engine="sglang"))
    assert r.starts and r.max_model_len_fits < r.max_model_len and any("cut or refused" in n for n in r.notes)


def test_hybrid_window_model_counts_sequences_of_max_model_len(gpus: dict[str, GpuSpec]) -> None:
    from tests.sizing.specs import decoder

    full = decoder(num_layers=4, max_position_embeddings=8192)
    hybrid = decoder(num_layers=4, max_position_embeddings=8192, sliding_window=512, sliding_window_layers=3)
    a = engine_memory(full, gpus["T4"], ServingSetup(max_model_len=8192))
    b = engine_memory(hybrid, gpus["T4"], ServingSetup(max_model_len=8192))
    # a windowed layer keeps window - 1 + one batch (T4: 2048 tokens) = 2559 tokens -> 160 blocks + 1 = 2576 tokens,
    # so a sequence costs 8192 + 3 x 2576 layer-tokens instead of 4 x 8192 (vLLM SlidingWindowSpec)
    assert b.max_concurrency / a.max_concurrency == pytest.approx(4 * 8192 / (8192 + 3 * 2576), rel=0.01)
    assert b.kv_capacity_tokens == a.kv_capacity_tokens  # the logged token count is per token on every layer


def test_linear_attention_state_is_held_per_sequence_in_the_pool(gpus: dict[str, GpuSpec]) -> None:
    # A hybrid spec: one DeltaNet layer with a large state (64 value heads x 64 x 64 x 2 B = 512 KiB, no conv) next
    # to one softmax layer of 128 B per token. Concurrency at max_model_len 4096 = pool / (4096 x 128 B + state).
    from tests.sizing.specs import decoder

    m = decoder(linear_attn={"kind": "gated_deltanet", "layers": 1, "num_key_heads": 64, "num_value_heads": 64,
                             "key_head_dim": 64, "value_head_dim": 64})
    r = engine_memory(m, gpus["A10"], ServingSetup(max_model_len=4096))
    per_seq = 4096 * 128 + 64 * 64 * 64 * 2
    assert r.max_concurrency == pytest.approx(r.kv_cache_gib * GIB / per_seq)
    assert r.max_model_len_fits == 4096 and r.starts
