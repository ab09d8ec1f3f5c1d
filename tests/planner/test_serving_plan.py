"""The serving planner: sizing per instance, 24x7 costs, yuan per million output tokens, ranking, validation."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from service.catalog.loader import Catalog, load_catalog
from service.documents.serving_bundle import serving_bundle
from service.errors import InvalidInputError, UnknownModelError
from service.planner.costing import HOURS_PER_MONTH
from service.planner.serving_plan import plan_serving
from service.planner.serving_types import ServingOption
from service.serving_workload import ServingWorkload, parse_serving_workload

TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(Path(__file__).resolve().parents[2] / "knowledge")


def _plan(catalog: Catalog, **fields: object):  # type: ignore[no-untyped-def]
    return plan_serving(ServingWorkload.model_validate(fields), catalog, TODAY)


def test_customer_service_on_l20(catalog: Catalog) -> None:
    # "上线Qwen2.5-14B的客服 32k上下文 高峰40并发 要几张L20"
    p = _plan(catalog, model="Qwen2.5-14B", gpu="L20", max_model_len=32768, input_tokens=2000, output_tokens=300,
              concurrency=40)
    assert p.candidates and {c.gpu for c in p.candidates} == {"L20"}
    pick = p.candidates[0]
    s = pick.sizing
    assert s.starts and s.meets_limits and s.max_model_len == 32768
    assert s.replicas * s.gpus_per_replica <= pick.total_gpus  # every sized replica has GPUs paid for
    assert s.concurrency * s.replicas == pytest.approx(40)
    assert "--tensor-parallel-size" in pick.launch.vllm and "--max-model-len 32768" in pick.launch.vllm
    assert "--context-length 32768" in pick.launch.sglang
    assert p.picks[pick.cloud] == pick.instance_type


def test_cost_per_million_tokens_is_hourly_cost_over_hourly_tokens(catalog: Catalog) -> None:
    p = _plan(catalog, model="Qwen2.5-7B", gpu="A10", input_tokens=1000, output_tokens=200, concurrency=8)
    c = next(c for c in p.candidates if c.cost_per_month_cny is not None)
    assert c.cost_per_hour_cny == pytest.approx(c.cost_per_month_cny / HOURS_PER_MONTH, abs=0.01)
    per_hour_tokens = c.sizing.output_tokens_per_s * 3600 / 1e6
    assert c.cny_per_million_output_tokens == pytest.approx(c.cost_per_hour_cny / per_hour_tokens, rel=0.01)
    assert c.billing in c.monthly_cny_by_billing and c.price is not None and c.price.source


def test_a_rate_target_takes_more_gpus_than_memory_alone(catalog: Catalog) -> None:
    # "serve Llama-3.1-70B at ~15 QPS, 2k in / 400 out, how many H800s"
    idle = _plan(catalog, model="Llama-3.1-70B", gpu="H800", max_model_len=8192)
    busy = _plan(catalog, model="Llama-3.1-70B", gpu="H800", max_model_len=8192, input_tokens=2000,
                 output_tokens=400, request_rate=15)
    assert idle.candidates and busy.candidates
    assert busy.candidates[0].sizing.total_gpus > idle.candidates[0].sizing.total_gpus
    assert busy.candidates[0].sizing.output_tokens_per_s == pytest.approx(15 * 400, rel=0.01)


@pytest.mark.parametrize("objective", ["cheapest", "fastest", "balanced"])
def test_objectives_order_the_options(catalog: Catalog, objective: str) -> None:
    p = _plan(catalog, model="Qwen2.5-7B", input_tokens=1000, output_tokens=200, concurrency=16,
              objective=objective, clouds=["tencent"])
    def dear(c: ServingOption) -> bool:
        return any(n.code == "dear" for n in c.warnings)

    ok = [c for c in p.candidates if c.sizing.meets_limits and c.cost_per_month_cny is not None and not dear(c)]
    assert len(ok) > 2
    if objective == "cheapest":
        costs = [c.cost_per_month_cny for c in ok]
        assert costs == sorted(costs)  # type: ignore[type-var]
    if objective == "fastest":
        ttfts = [c.sizing.ttft_ms for c in p.candidates if c.sizing.meets_limits and not dear(c)]
        assert ttfts == sorted(ttfts)  # type: ignore[type-var]
    flagged = [c for c in p.candidates if dear(c)]
    assert p.candidates[len(p.candidates) - len(flagged):] == flagged  # the dear ones last, never picked
    assert not {c.instance_type for c in flagged} & set(p.picks.values())


def test_budget_verdict_and_slices(catalog: Catalog) -> None:
    p = _plan(catalog, model="Qwen2.5-7B", budget_cny=6000, clouds=["tencent"])
    priced = [c for c in p.candidates if c.cost_per_month_cny is not None]
    assert all(c.within_budget == (c.cost_per_month_cny <= 6000) for c in priced)  # type: ignore[operator]
    assert any("vGPU slice" in r["reason"] for r in p.rejected)


def test_a_gpu_the_engine_cannot_run_is_rejected_with_its_reason(catalog: Catalog) -> None:
    # vLLM's int4 kernels need compute capability 7.5: V100 (7.0) instances are rejected, not sized
    p = _plan(catalog, model="Qwen2.5-14B", weights="int4", gpu="V100")
    assert not p.candidates and p.infeasible
    assert all("compute capability" in r["reason"] for r in p.rejected)


def test_cuda_graph_room_lowers_the_utilization_in_the_command(catalog: Catalog) -> None:
    # Llama-3.1-70B over 8 V100 32GB: vLLM's 0.9 leaves 3.2 GiB, the context takes 0.75 and the capture ~2.7;
    # the plan lowers --gpu-memory-utilization as an operator would
    p = _plan(catalog, model="Llama-3.1-70B", gpu="V100", gpus=8, max_model_len=8192)
    assert p.candidates
    s = p.candidates[0].sizing
    assert s.mem_fraction < 0.9 and f"--gpu-memory-utilization {s.mem_fraction:g}" in p.candidates[0].launch.vllm


@pytest.mark.parametrize(("fields", "field"), [
    ({"model": "Qwen2.5-7B", "concurrency": 4, "request_rate": 2}, "not both"),  # both load measures
    ({"model": "Qwen2.5-7B", "concurrency": -1}, "concurrency"),  # negative
    ({"model": "Qwen2.5-7B", "input_tokens": 4000, "output_tokens": 200, "max_model_len": 2048}, "max_model_len"),
    ({"concurrency": 4}, "give a model"),  # neither model nor params_b
    ({"model": "Qwen2.5-7B", "mem_fraction": 1.5}, "mem_fraction"),  # above 1
    ({"model": "Qwen2.5-7B", "weights": "int3"}, "weights"),  # not a dtype
])
def test_bad_workloads_name_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        ServingWorkload.model_validate(fields)
    with pytest.raises(InvalidInputError, match=field):
        parse_serving_workload(fields)


def test_unknown_model_gets_suggestions(catalog: Catalog) -> None:
    # a name that states no size: refused with the closest names
    with pytest.raises(InvalidInputError, match="Did you mean"):
        parse_serving_workload({"model": "Qwen9-chat"}, catalog.models)
    with pytest.raises(UnknownModelError):
        _plan(catalog, model="Qwen9-chat")
    # a name that states its size: sized as an estimate, the closest names still offered
    assert parse_serving_workload({"model": "Qwen9-7B"}, catalog.models).model == "Qwen9-7B"
    plan = _plan(catalog, model="Qwen9-7B")
    assert plan.model.estimated and "estimated" in plan.assumptions[0] and "Did you mean" in plan.assumptions[0]


def test_a_non_llm_is_refused(catalog: Catalog) -> None:
    with pytest.raises(InvalidInputError, match="not a generative LLM"):
        _plan(catalog, model="ResNet-50")


def test_launch_bundle_files(catalog: Catalog) -> None:
    p = _plan(catalog, model="Qwen2.5-7B", gpu="A10", input_tokens=1000, output_tokens=200, concurrency=8)
    b = serving_bundle(p, lang="en")
    assert set(b.files) == {"serve_vllm.sh", "serve_sglang.sh", "bench.sh", "README.md"}
    assert b.files["serve_vllm.sh"].startswith("#!/usr/bin/env bash") and "vllm serve" in b.files["serve_vllm.sh"]
    assert "--random-input-len 1000" in b.files["bench.sh"] and "--max-concurrency 8" in b.files["bench.sh"]


def test_deepseek_r1_is_served_in_the_fp8_it_ships_in(catalog: Catalog) -> None:
    from service.planner.serving_inference import inference

    r = inference(ServingWorkload(model="DeepSeek-R1", gpu="H20", gpus=8), catalog)
    assert r.weights == "fp8" and any("FP8" in a for a in r.assumptions)
    assert r.weights_gib_per_gpu < 96  # 671B at one byte over 8 cards; BF16 (~157 GiB per card) would not start
    bf16 = inference(ServingWorkload(model="DeepSeek-R1", gpu="H20", gpus=8, weights="bf16"), catalog)
    assert bf16.weights == "bf16" and not bf16.starts  # asked for: kept


def test_a_model_no_node_holds_spans_nodes_as_pipeline_stages(catalog: Catalog) -> None:
    from service.planner.serving_inference import inference

    # 1.3 TB of BF16 weights: no 8 x A100 80G node holds them; 4 nodes of 8 (TP8 x PP4) do, ~42 GiB a card
    r = inference(ServingWorkload(model="DeepSeek-R1", gpu="A100-80G", weights="bf16"), catalog)
    assert r.sizing is not None and (r.tensor_parallel, r.pipeline_parallel) == (8, 4) and r.gpus == 32
    assert r.launch is not None and "--pipeline-parallel-size 4" in r.launch.vllm and "Ray" in r.launch.replicas_note
    two = inference(ServingWorkload(model="DeepSeek-R1", gpu="H20", gpus=16), catalog)  # 2 nodes x 8, FP8
    assert (two.tensor_parallel, two.pipeline_parallel) == (8, 2) and two.starts
    assert two.weights_gib_per_gpu < inference(ServingWorkload(model="DeepSeek-R1", gpu="H20", gpus=8),
                                                catalog).weights_gib_per_gpu / 1.8


def test_more_than_four_nodes_says_how_many_gpus_the_weights_fill(catalog: Catalog) -> None:
    from service.planner.serving_inference import inference

    r = inference(ServingWorkload(model="Llama-3.1-405B", gpu="A10", weights="bf16"), catalog)
    assert r.sizing is None and r.min_gpus_for_weights is not None
    total = r.weights_gib_per_gpu * r.gpus  # sized on one card: the whole weights
    # the weights over each card's budget (its memory x the engine's fraction): more than 32 A10s
    assert 32 <= math.ceil(total / 24) <= r.min_gpus_for_weights <= math.ceil(total / (21 * r.mem_fraction))
    pinned = inference(ServingWorkload(model="Llama-3.1-405B", gpu="A10", gpus=8, weights="bf16"), catalog)
    assert pinned.min_gpus_for_weights is None and not pinned.starts  # a count was given: that count is answered


@pytest.mark.parametrize(("model", "stated", "weights"), [
    ("Qwen2.5-7B-Instruct-AWQ", None, "int4"),  # the release's suffix says its weights
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", None, "int8"),
    ("Qwen2.5-7B-Instruct-AWQ", "bf16", "bf16"),  # weights stated win over the name
    ("Qwen2.5-7B-Instruct", None, "bf16"),  # no suffix: the dtype the model ships in
])
def test_a_quantised_release_name_sets_the_weights(catalog: Catalog, model: str, stated: str | None,
                                                   weights: str) -> None:
    from service.planner.serving_size import released_weights, resolve_serving_model

    w = ServingWorkload(model=model, weights=stated)
    spec, _ = resolve_serving_model(w, catalog.models)
    assert spec.id == "Qwen2.5-7B"
    after, notes = released_weights(w, spec)
    assert after.weights == weights
    assert bool(notes) == (stated is None and weights != "bf16")
