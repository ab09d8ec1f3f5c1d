"""The checks each engine runs before and while it sizes memory, in the engine's own words with the flag that
fixes each: the layout (heads, KV heads, quantised group alignment), the start-up profile (vision encoder),
the release assumed, pipeline stages over nodes, weight-only FP8 and Ascend's own runtime."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving import layout
from service.sizing.serving.activation import vision_profile_gib
from service.sizing.serving.engines import engine_memory
from service.sizing.serving.kv import estimate_kv
from service.sizing.serving.support import fp8_weight_only, unsupported
from service.sizing.serving.types import ServingSetup
from service.sizing.serving.versions import engine_label
from service.sizing.serving.weights import estimate_weights
from tests.sizing.specs import decoder


@pytest.mark.parametrize(("fields", "tp", "code", "said"), [
    # 4 heads over 3 GPUs: vLLM's ModelConfig check, in its words (one KV head: replicated on all 3)
    ({"num_kv_heads": 1}, 3, "tp_heads",
     "Total number of attention heads (4) must be divisible by tensor parallel size (3)."),
    # 24 heads split over 3, but 8 KV heads do not: QKVParallelLinear's divide() asserts
    ({"num_heads": 24, "num_kv_heads": 8, "hidden_size": 96}, 3, "tp_kv_heads", "8 is not divisible by 3"),
    # 2 KV heads on 6 GPUs: each replicated 3 times, fine
    ({"num_heads": 12, "num_kv_heads": 2, "hidden_size": 96}, 6, None, None),
    ({"num_heads": 12, "num_kv_heads": 4, "hidden_size": 96}, 6, "tp_kv_heads", "6 is not divisible by 4"),
])
def test_layout_checks_speak_the_engines_words(fields: dict[str, object], tp: int, code: str | None,
                                               said: str | None) -> None:
    found = layout.problems(decoder(**fields), "vllm", "bf16", tp)
    assert [p.code for p in found] == ([code] if code else [])
    if said:
        assert found[0].message == said


def test_awq_input_per_gpu_must_be_a_multiple_of_the_group() -> None:
    # down_proj's 13,696 inputs (Qwen1.5-14B's MLP): 6,848 per GPU at TP2 is not a multiple of 128
    m = decoder(intermediate_size=13_696, hidden_size=128, num_heads=8, num_kv_heads=8)
    assert not layout.problems(m, "vllm", "int4", 1)
    found = layout.problems(m, "vllm", "int4", 2)
    assert [p.code for p in found] == ["quant_group"]
    assert found[0].message.startswith("The input size is not aligned with the quantized weight shape.")
    assert not layout.problems(m, "vllm", "bf16", 2)  # BF16 has no groups


def test_a_refused_layout_is_fixed_with_pipeline_stages_on_the_same_gpus(catalog_models: dict[str, ModelSpec],
                                                                         gpus: dict[str, GpuSpec]) -> None:
    # why 6 x V100 cannot run a 64-head model at TP6, and what runs on those 6 cards
    m = catalog_models["Llama-3-70B"]
    fixed = layout.with_fixes(m, "vllm", "bf16", 6)
    assert fixed[0].code == "tp_heads" and "(64)" in fixed[0].message and "(6)" in fixed[0].message
    assert fixed[0].fix == "--tensor-parallel-size 2 --pipeline-parallel-size 3"
    r = engine_memory(m, gpus["V100-32G-SXM2"], ServingSetup(tp=6, max_model_len=8192))
    assert not r.starts and "refuses TP6" in r.starts_reason and r.fix == fixed[0].fix
    ok = engine_memory(m, gpus["V100-32G-SXM2"], ServingSetup(tp=2, pp=3, max_model_len=8192))
    assert ok.starts


def test_pipeline_stages_split_the_layers_weights_and_kv() -> None:
    m = decoder(num_layers=8)
    one, two = estimate_weights(m, "bf16", 1, 1), estimate_weights(m, "bf16", 1, 2)
    # half the layers (and norms: 8 x 128 + 64) per stage; the embedding on the first stage, the lm_head on the
    # last (each 1,024 padded rows x 64): a stage keeps one of them
    layers, norms, head = 8 * 30_720 * 2, (8 * 128 + 64) * 2, 1024 * 64 * 2
    assert two.weights_gib_per_gpu == pytest.approx(one.weights_gib_per_gpu - (layers / 2 + norms / 2 + head) / 2**30,
                                                    rel=1e-9)
    assert estimate_kv(m, pp=2).bytes_per_token_per_gpu == estimate_kv(m).bytes_per_token_per_gpu / 2


def test_the_vision_encoder_is_profiled_at_start_up(catalog_models: dict[str, ModelSpec],
                                                    gpus: dict[str, GpuSpec]) -> None:
    vl, text = catalog_models["Qwen2.5-VL-7B"], catalog_models["Qwen2.5-7B"]
    assert vision_profile_gib(text, 1, 2048) == 0
    # one encoder layer over 65,536 patches: 3 x 1280 + 3 x 3420 wide, 16-bit, plus 16,384 cached tokens x 3584
    expected = (65_536 * (3 * 1280 + 3 * 3420) + 16_384 * 3584) * 2 / 2**30
    assert vision_profile_gib(vl, 1, 2048) == pytest.approx(expected)
    g = gpus["L20"]
    a, b = engine_memory(vl, g, ServingSetup(max_model_len=8192)), engine_memory(text, g, ServingSetup(max_model_len=8192))
    assert a.vision_gib == pytest.approx(expected) and b.vision_gib == 0
    assert a.activation_peak_gib - b.activation_peak_gib == pytest.approx(expected, rel=1e-6)


def test_fp8_on_a100_is_weight_only_and_v100_does_not_run_it(catalog_models: dict[str, ModelSpec],
                                                             gpus: dict[str, GpuSpec]) -> None:
    m = catalog_models["Qwen2.5-32B"]
    a100 = engine_memory(m, gpus["A100-80G-SXM"], ServingSetup(weights="fp8", max_model_len=8192))
    assert a100.starts and any("W8A16" in n and "Marlin" in n for n in a100.notes)
    assert fp8_weight_only(gpus["A100-80G-SXM"], "fp8") and not fp8_weight_only(gpus["H800-SXM"], "fp8")
    h800 = engine_memory(m, gpus["H800-SXM"], ServingSetup(weights="fp8", max_model_len=8192))
    assert not any("Marlin" in n for n in h800.notes)
    assert "compute capability 8.0" in str(unsupported("vllm", gpus["V100-32G-SXM2"], "fp8", "auto"))


def test_ascend_speaks_npu_and_has_no_fp8(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    npu = gpus["ASCEND-910B2"]
    m = catalog_models["Qwen2.5-72B"]
    r = engine_memory(m, npu, ServingSetup(max_model_len=8192))
    assert not r.starts and "NPU out of memory" in r.starts_reason and "CUDA" not in r.starts_reason
    assert "no FP8" in str(unsupported("vllm", npu, "fp8", "auto"))
    assert "NVIDIA GPUs only" in str(unsupported("trtllm", npu, "bf16", "auto"))
    assert engine_label("vllm", None, "npu")[0].startswith("vllm-ascend")


@pytest.mark.parametrize(("engine", "version", "words"), [
    ("vllm", None, "vLLM 0.10+ (V1 engine) defaults"),  # the current release
    ("vllm", "0.6.4", "vLLM 0.6.4 (V0 engine)"),
    ("sglang", None, "SGLang 0.5 defaults"),
    ("lmdeploy", None, "LMDeploy TurboMind 0.2.1+ defaults"),
])
def test_every_answer_names_the_release_it_assumes(engine: str, version: str | None, words: str) -> None:
    assert engine_label(engine, version)[0] == words  # type: ignore[arg-type]


@pytest.mark.parametrize(("setup", "words", "fix"), [
    # a pool that cannot hold one sequence: vLLM V1's message with the estimated maximum, and the flag
    (ServingSetup(max_model_len=131_072), "the estimated maximum model length is", "--max-model-len"),
    # the weights alone fill the card
    (ServingSetup(max_model_len=8192, weights="bf16"), None, None),
])
def test_start_up_messages_and_their_fix(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec],
                                         setup: ServingSetup, words: str | None, fix: str | None) -> None:
    m = catalog_models["Llama-3.1-8B"]
    r = engine_memory(m, gpus["RTX-4090"], setup)
    if words is None:
        assert r.starts and r.fix == ""
        return
    assert not r.starts and words in r.starts_reason and r.fix.startswith(str(fix))
    shorter = int(r.fix.split()[-1])
    assert engine_memory(m, gpus["RTX-4090"], replace(setup, max_model_len=shorter)).starts


def test_sglang_and_lmdeploy_fixes_name_their_own_flags(catalog_models: dict[str, ModelSpec],
                                                        gpus: dict[str, GpuSpec]) -> None:
    # 7B on a 4090 at mem_fraction_static 0.6: 0.6 x 23 GiB does not hold its 14.2 GiB of weights and a pool
    m = catalog_models["Qwen2.5-7B"]
    sg = engine_memory(m, gpus["RTX-4090"], ServingSetup(engine="sglang", mem_fraction=0.6, max_model_len=4096))
    assert not sg.starts and "Not enough memory. Please try to increase --mem-fraction-static." in sg.starts_reason
    assert sg.fix.startswith("--mem-fraction-static")
