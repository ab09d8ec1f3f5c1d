"""Serving as it runs: a pinned GPU count is one deployment (requests beyond it queue, its throughput is what its
pool runs); replicas only come from a plan for a target. Plans size the stated load: the context the requests
need, FP8 / INT4 variants, every cloud answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.planner.serving_inference import inference
from service.planner.serving_plan import plan_serving
from service.serving_workload import ServingWorkload

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(KNOWLEDGE)


def test_regression_a_pinned_gpu_is_one_deployment_not_two_replicas(catalog: Catalog) -> None:
    # `inference --gpus 1 --concurrency 320` answered for 2 replicas (2 GPUs) before
    r = inference(ServingWorkload(model="Qwen2.5-7B", gpu="A100-40G-SXM", gpus=1, concurrency=320), catalog)
    assert r.replicas == 1 and r.gpus == 1 and r.sizing is not None and r.sizing.total_gpus == 1
    assert r.saturated and r.sizing.concurrency == pytest.approx(r.sizing.max_concurrency_at_load)
    held = inference(ServingWorkload(model="Qwen2.5-7B", gpu="A100-40G-SXM", gpus=1,
                                     concurrency=r.sizing.max_concurrency_at_load), catalog)
    # the 64 users the pool does not hold wait for a slot: their wait is in the TTFT; throughput is the pool's
    assert r.ttft_ms is not None and held.ttft_ms is not None and r.ttft_ms > 5 * held.ttft_ms
    assert r.output_tokens_per_s == pytest.approx(held.output_tokens_per_s, rel=0.02)
    assert any("pinned" in a for a in r.assumptions) and r.engine_assumed.startswith("vLLM")


def test_a_rate_above_a_pinned_deployment_queues(catalog: Catalog) -> None:
    r = inference(ServingWorkload(model="Qwen2.5-7B", gpu="A10", gpus=1, input_tokens=2000, output_tokens=400,
                                  request_rate=20), catalog)
    assert r.replicas == 1 and r.saturated and r.ttft_ms is not None and r.ttft_ms > 10_000
    assert r.output_tokens_per_s is not None and r.output_tokens_per_s < 20 * 400  # what the pool runs
    assert any("queue grows" in n for n in r.notes)


def test_a_target_without_a_pinned_count_still_adds_replicas(catalog: Catalog) -> None:
    r = inference(ServingWorkload(model="Qwen2.5-7B", gpu="A100-40G-SXM", concurrency=320), catalog)
    assert r.replicas == 2 and not r.saturated


def test_regression_a_plan_launches_the_context_the_load_needs(catalog: Catalog) -> None:
    # 70B at 15 QPS was sized with the full 131k context
    p = plan_serving(ServingWorkload(model="Llama-3.1-70B", input_tokens=2000, output_tokens=400, request_rate=15),
                     catalog)
    assert {c.sizing.max_model_len for c in p.candidates} == {4096}  # 2,400 rounded up
    assert any("what these requests need" in a for a in p.assumptions)
    assert p.engine_assumed == "vLLM 0.10+ (V1 engine) defaults"
    asked = plan_serving(ServingWorkload(model="Llama-3.1-70B", input_tokens=2000, output_tokens=400,
                                         request_rate=15, max_model_len=32768, clouds=["tencent"]), catalog)
    assert {c.sizing.max_model_len for c in asked.candidates} == {32768}


def test_both_clouds_are_answered_and_fp8_int4_are_offered(catalog: Catalog) -> None:
    p = plan_serving(ServingWorkload(model="Llama-3.1-70B", input_tokens=2000, output_tokens=400, request_rate=15),
                     catalog)
    assert set(p.picks) | set(p.no_fit) == {"tencent", "jdcloud"}
    assert "jdcloud" in p.no_fit and "V100" in p.no_fit["jdcloud"] and "京东云" in p.no_fit_zh["jdcloud"]
    dtypes = {v.weights for v in p.variants}
    assert dtypes == {"fp8", "int4"}
    for v in p.variants:
        if v.weights == "fp8":  # offered on a card without FP8 only as what it is: W8A16 Marlin
            assert v.weight_only == (not next(g for g in catalog.gpus if g.id == v.gpu).supports_fp8)
    stated = plan_serving(ServingWorkload(model="Llama-3.1-70B", weights="fp8", request_rate=15), catalog)
    assert stated.variants == []  # FP8 was asked for
