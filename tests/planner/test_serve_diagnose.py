"""Diagnosing a server: each setup sized as its engine runs it, the verdict against what the post saw, the
engine's cause and the one flag that fixes it, re-sized to show it works."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.planner.questions.serve_diagnose import ServeCase, ServeSetupIn, apply_fix, serve_diagnose

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(KNOWLEDGE)


def _case(model: str, asked: str, *setups: ServeSetupIn) -> ServeCase:
    return ServeCase(model=model, asked=asked, setups=list(setups))  # type: ignore[arg-type]


def test_regression_lmdeploy_memory_growth_is_served_not_a_lora_job(catalog: Catalog) -> None:
    # 'lmdeploy tp=4 llama2-70B 显存缓慢增长 OOM' was answered as a LoRA fine-tune needing 139 GiB per GPU
    d = serve_diagnose(catalog, _case("Llama-2-70B", "growth", ServeSetupIn(engine="lmdeploy", gpu="A100-80G-SXM",
                                                                           gpus=4, tp=4, outcome="oom")))
    f = d.setups[0]
    assert f.starts and 30 < f.weights_gib_per_gpu < 35  # 70B BF16 over 4 cards, not 139 GiB of training state
    assert d.expected and d.cause == "lmdeploy_runtime" and d.fix == "--cache-max-entry-count 0.5"
    assert d.engine_assumed.startswith("LMDeploy")


def test_hf_runs_vllm_does_not_because_vllm_reserves_for_max_model_len(catalog: Catalog) -> None:
    d = serve_diagnose(catalog, _case("Llama-3.1-8B", "oom", ServeSetupIn(engine="hf", gpu="RTX-4090", outcome="worked"),
                                      ServeSetupIn(engine="vllm", gpu="RTX-4090", outcome="oom")))
    hf, vllm = d.setups
    assert hf.starts and not vllm.starts and "estimated maximum model length" in vllm.reason
    assert d.expected and d.cause == "prealloc_max_len" and d.fix == "--max-model-len 32768"
    assert d.fixed is not None and d.fixed.starts and d.fixed.max_model_len == 32768


def test_tp6_is_refused_and_the_fix_uses_the_same_six_cards(catalog: Catalog) -> None:
    d = serve_diagnose(catalog, _case("Llama-3-70B", "oom", ServeSetupIn(gpu="V100-32G-SXM2", gpus=6, tp=6,
                                                                        outcome="oom")))
    assert d.expected and d.cause == "layout" and d.fix == "--tensor-parallel-size 2 --pipeline-parallel-size 3"
    assert d.fixed is not None and d.fixed.starts and d.fixed.gpus == 6


def test_an_oom_the_engine_does_not_predict_is_not_expected(catalog: Catalog) -> None:
    d = serve_diagnose(catalog, _case("Qwen2.5-72B", "oom",
                                      ServeSetupIn(gpu="A100-80G-SXM", gpus=4, tp=4, outcome="worked"),
                                      ServeSetupIn(gpu="A100-80G-SXM", gpus=8, tp=8, outcome="oom")))
    assert all(f.starts for f in d.setups) and d.expected is False and d.cause == "starts_here"
    assert "graphs_per_rank" in d.causes  # the wider TP holds more per-rank buffers


@pytest.mark.parametrize(("seen", "expected", "cause"), [
    (45.0, True, "bandwidth_bound"),  # near one request's decode rate on a 4090
    (9.0, False, "slower_than_estimate"),  # a fifth of it: not the card's doing
    (900.0, True, "aggregate"),  # many requests together
])
def test_is_this_speed_normal(catalog: Catalog, seen: float, expected: bool, cause: str) -> None:
    d = serve_diagnose(catalog, _case("Qwen2.5-7B", "slow", ServeSetupIn(gpu="RTX-4090", tokens_per_s=seen)))
    assert d.expected is expected and d.cause == cause
    assert d.setups[0].tokens_per_s_single is not None and 30 < d.setups[0].tokens_per_s_single < 80


def test_fp8_on_a100_runs_weight_only(catalog: Catalog) -> None:
    d = serve_diagnose(catalog, _case("Qwen2.5-32B", "why_runs", ServeSetupIn(gpu="A100-80G-SXM", weights="fp8")))
    assert d.expected and d.cause == "fp8_weight_only" and d.setups[0].weight_only_fp8
    h800 = serve_diagnose(catalog, _case("Qwen2.5-32B", "why_runs", ServeSetupIn(gpu="H800-SXM", weights="fp8")))
    assert h800.cause == "fp8_native"


def test_tp8_against_tp4(catalog: Catalog) -> None:
    d = serve_diagnose(catalog, _case("Llama-3-70B", "compare", ServeSetupIn(gpu="H800-SXM", gpus=8, tp=8),
                                      ServeSetupIn(gpu="H800-SXM", gpus=4, tp=4)))
    assert d.faster == 0 and d.cause == "tp_splits_reads" and (d.ratio or 0) > 1


def test_ollama_too_long_a_context_spills_to_the_cpu(catalog: Catalog) -> None:
    # Qwen2.5-32B Q4 on a 4090: fits at num_ctx 4096; at 32768 the KV cache pushes layers to the CPU
    fits = serve_diagnose(catalog, _case("Qwen2.5-32B", "slow", ServeSetupIn(engine="ollama", gpu="RTX-4090",
                                                                           tokens_per_s=3)))
    assert fits.setups[0].gpu_share == 1.0 and fits.expected is False and fits.cause == "ollama_cpu_split"
    spill = serve_diagnose(catalog, _case("Qwen2.5-32B", "slow", ServeSetupIn(engine="ollama", gpu="RTX-4090",
                                                                            max_model_len=32768, tokens_per_s=3)))
    assert (spill.setups[0].gpu_share or 1) < 1 and spill.expected and spill.cause == "ollama_offload"
    assert spill.fix == "num_ctx 4096" and (spill.setups[0].tokens_per_s_single or 99) < 15


@pytest.mark.parametrize(("fix", "field", "value"), [
    ("--max-model-len 16384", "max_model_len", 16384),
    ("--gpu-memory-utilization 0.95", "mem_fraction", 0.95),
    ("--cache-max-entry-count 0.5", "mem_fraction", 0.5),
    ("--tensor-parallel-size 2 --pipeline-parallel-size 3", "gpus", 6),
    ("--quantization fp8", "weights", "fp8"),
    ("--enforce-eager", "enforce_eager", True),
])
def test_a_fix_is_applied_to_the_setup(fix: str, field: str, value: object) -> None:
    assert getattr(apply_fix(ServeSetupIn(gpu="A10"), fix), field) == value


@pytest.mark.parametrize(("engine", "cause", "flag"), [
    ("tgi", "tgi_runtime", "--cuda-memory-fraction 0.9"),
    ("trtllm", "trtllm_runtime", "free_gpu_memory_fraction=0.85"),
    ("vllm", "vllm_runtime", "--gpu-memory-utilization 0.85"),
])
def test_an_oom_while_serving_names_the_engines_own_flag(catalog: Catalog, engine: str, cause: str, flag: str) -> None:
    # Regression: a TGI / TensorRT-LLM server that starts and then OOMs was told vLLM's '--gpu-memory-utilization'
    d = serve_diagnose(catalog, _case("Llama-2-13B", "oom", ServeSetupIn(engine=engine, gpu="A100-80G-SXM", gpus=2,
                                                                        tp=2, outcome="oom")))
    assert d.setups[0].starts and d.cause == "starts_here" and d.causes[0] == cause and d.fix == flag
    if engine == "tgi":  # sized with vLLM's policy, said as TGI's stand-in
        assert "TGI" in d.engine_assumed and "tgi," not in d.engine_assumed
