"""Golden figures from engine start-up logs (each row cites its thread and the tolerance of issue 21), and
regression tests that name the bug they guard against."""

from __future__ import annotations

import pytest

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.engines import engine_memory
from service.sizing.serving.types import ServingSetup
from service.sizing.serving.weights import estimate_weights

GOLDEN = [
    # vllm#10517 (vLLM 0.6.4, RTX 3090, util 0.9, len 20000): "Loading model weights took 14.9888 GB",
    # "# GPU blocks: 1952" x 16 = 31,232 tokens; weights +-5 %, KV +-10 %
    ("Llama-3.1-8B", "RTX-3090", ServingSetup(mem_fraction=0.9, max_model_len=20000, engine_version="0.6.4"),
     14.9888, 31_232),
    # dennislee vLLM 0.10.1.1 logs (A100 80GB, util 0.25, len 16384): "Model loading took 14.2488 GiB",
    # "GPU KV cache size: 93,872 tokens"
    ("Qwen2-7B", "A100-80G-SXM", ServingSetup(mem_fraction=0.25, max_model_len=16384, engine_version="0.10.1.1"),
     14.2488, 93_872),
    # the same logs, TP2 at util 0.25: "Model loading took 7.1217 GiB", "GPU KV cache size: 450,192 tokens"
    ("Qwen2-7B", "A100-80G-SXM", ServingSetup(tp=2, mem_fraction=0.25, max_model_len=16384,
                                              engine_version="0.10.1.1"), 7.1217, 450_192),
    # gpt-oss-120b, MXFP4, TP4, util 0.8 (0.10.1.1): "Model loading took 17.2217 GiB", "2,640,144 tokens"
    ("gpt-oss-120b", "A100-80G-SXM", ServingSetup(weights="mxfp4", tp=4, mem_fraction=0.8, max_model_len=16384,
                                                  engine_version="0.10.1.1"), 17.2217, 2_640_144),
]


@pytest.mark.parametrize(("model", "gpu", "setup", "weights_gib", "kv_tokens"), GOLDEN)
def test_published_start_up_figures(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec], model: str,
                                    gpu: str, setup: ServingSetup, weights_gib: float, kv_tokens: int) -> None:
    m = catalog_models[model]
    assert estimate_weights(m, setup.weights, setup.tp).weights_gib_per_gpu == pytest.approx(weights_gib, rel=0.05)
    r = engine_memory(m, gpus[gpu], setup)
    assert r.starts and r.kv_capacity_tokens == pytest.approx(kv_tokens, rel=0.10)


@pytest.mark.parametrize(("length", "starts"), [
    (20_000, True),  # "20k - OK"
    (29_000, False),  # "29k - BAD": V0 profiles the whole 29k-token batch, leaving 23,648 KV tokens
    (35_000, True),  # "35k - OK": above 32k chunked prefill profiles 512 tokens, so the pool grows again
])
def test_regression_v0_profile_grows_with_the_context(catalog_models: dict[str, ModelSpec],
                                                      gpus: dict[str, GpuSpec], length: int, starts: bool) -> None:
    # Bug guarded: a V1-only policy called 29k on an RTX 3090 a start (vllm#10517, vLLM 0.6.4 at util 0.9).
    setup = ServingSetup(mem_fraction=0.9, max_model_len=length, engine_version="0.6.4")
    assert engine_memory(catalog_models["Llama-3.1-8B"], gpus["RTX-3090"], setup).starts is starts


def test_regression_qwen25_served_context_is_the_instruct_one(catalog_models: dict[str, ModelSpec],
                                                              gpus: dict[str, GpuSpec]) -> None:
    # Bug guarded: Qwen2.5's base config (131,072 tokens) was taken as vLLM's default max_model_len, so
    # Qwen2.5-14B-Instruct on one L20 was said not to start; the Instruct config serves 32,768.
    r = engine_memory(catalog_models["Qwen2.5-14B"], gpus["L20"], ServingSetup())
    assert r.max_model_len == 32768 and r.starts


def test_regression_mla_without_latent_cache_in_old_vllm(catalog_models: dict[str, ModelSpec],
                                                         gpus: dict[str, GpuSpec]) -> None:
    # Bug guarded: DeepSeek-Coder-V2 at 64k on 8 x H100 with vLLM 0.5.4 was said to start with MLA's 576-wide
    # latent cache; 0.5.4 cached full K/V and ran out of blocks (vllm PR 4650 thread, run with --enforce-eager).
    m, g = catalog_models["DeepSeek-Coder-V2"], gpus["H100-SXM"]
    args = {"tp": 8, "mem_fraction": 0.95, "max_model_len": 64000, "enforce_eager": True}
    old = engine_memory(m, g, ServingSetup(**args, engine_version="0.5.4"))  # type: ignore[arg-type]
    new = engine_memory(m, g, ServingSetup(**args))  # type: ignore[arg-type]
    assert not old.starts and new.starts


def test_regression_cuda_graph_capture_after_the_pool(catalog_models: dict[str, ModelSpec],
                                                      gpus: dict[str, GpuSpec]) -> None:
    # Bug guarded: Qwen3-30B-A3B on 4 x A10 (vLLM 0.8.5) sizes its pool, then runs out of memory capturing
    # CUDA graphs (vllm#17469); with --enforce-eager it starts.
    m, g = catalog_models["Qwen3-30B-A3B"], gpus["A10"]
    graphs = engine_memory(m, g, ServingSetup(tp=4, max_model_len=8192, engine_version="0.8.5"))
    eager = engine_memory(m, g, ServingSetup(tp=4, max_model_len=8192, engine_version="0.8.5", enforce_eager=True))
    assert not graphs.starts and "CUDA-graph" in graphs.starts_reason and eager.starts
