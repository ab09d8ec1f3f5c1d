"""Throughput, latency and sizing: the roofline's regimes, queueing, and GPUs x replicas."""

from __future__ import annotations

import math

import pytest

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.perf import QUEUE_WINDOW_S, fluid_wait_s, performance
from service.sizing.serving.sizing import (
    OVERSIZE_FACTOR,
    ServingTarget,
    max_useful_replicas,
    size_deployment,
    valid_tp,
)
from service.sizing.serving.steps import step_model
from service.sizing.serving.types import GIB, LoadPoint, ServingSetup

SETUP = ServingSetup(max_model_len=8192)


def test_batch_one_decode_is_bound_by_reading_the_weights(catalog_models: dict[str, ModelSpec],
                                                          gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Llama-3-8B"], gpus["H100-SXM"]
    s = step_model(m, g, SETUP)
    step, bound = s.decode_s(1, 100)
    bw = g.mem_bw_gb_s * 1e9
    expected = (s.weights_read_bytes(1) / (bw * s.eff.bandwidth) + s.kv_read_bytes(100) / (bw * s.eff.kv_bandwidth)
                + s.overhead_s(1))
    assert bound == "memory" and step == pytest.approx(expected)
    assert s.weights_read_bytes(1) < 16.1 * GIB  # the lm_head is read, the input embedding is a gather


def test_large_batch_decode_turns_compute_bound(catalog_models: dict[str, ModelSpec],
                                                gpus: dict[str, GpuSpec]) -> None:
    s = step_model(catalog_models["Llama-3-8B"], gpus["L20"], SETUP)  # L20: 864 GB/s against 119.5 TFLOPS
    assert s.decode_s(512, 64)[1] == "compute"


def test_moe_batch_reads_more_experts_as_it_grows(catalog_models: dict[str, ModelSpec],
                                                  gpus: dict[str, GpuSpec]) -> None:
    s = step_model(catalog_models["Qwen3-30B-A3B"], gpus["H100-SXM"], SETUP)  # 128 experts, top-8
    one, many = s.weights_read_bytes(1), s.weights_read_bytes(64)
    assert one < many < s.nonexpert_read_bytes + s.expert_bytes
    assert many / (s.nonexpert_read_bytes + s.expert_bytes) > 0.95  # 1 - (1 - 8/128)^64 = 98 % of the experts


@pytest.mark.parametrize("users", [1, 8, 32, 128])
def test_more_users_more_throughput_and_slower_tokens(catalog_models: dict[str, ModelSpec],
                                                     gpus: dict[str, GpuSpec], users: int) -> None:
    m, g = catalog_models["Qwen2.5-7B"], gpus["A100-80G-SXM"]
    a = performance(m, g, SETUP, LoadPoint(1024, 256, concurrency=users))
    b = performance(m, g, SETUP, LoadPoint(1024, 256, concurrency=users * 2))
    assert b.output_tokens_per_s > a.output_tokens_per_s and b.tpot_ms >= a.tpot_ms
    assert a.ttft_ms is not None and a.ttft_ms >= a.prefill_ms * 0.99


def test_users_beyond_the_pool_queue_in_the_ttft(catalog_models: dict[str, ModelSpec],
                                                 gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Qwen2.5-7B"], gpus["A10"]
    p = performance(m, g, SETUP, LoadPoint(4000, 1000, concurrency=200))
    assert p.saturated and p.concurrency == pytest.approx(p.max_concurrency)
    fits = performance(m, g, SETUP, LoadPoint(4000, 1000, concurrency=p.max_concurrency))
    assert p.ttft_ms is not None and fits.ttft_ms is not None and p.ttft_ms > 5 * fits.ttft_ms


def test_a_rate_above_capacity_queues_in_a_fluid_model(catalog_models: dict[str, ModelSpec],
                                                        gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Qwen2.5-7B"], gpus["A10"]
    p = performance(m, g, SETUP, LoadPoint(2000, 400, request_rate_per_s=100))
    assert p.saturated and p.request_rate_per_s < 100  # throughput is what the pool runs
    # the mean request of a 60 s peak waits (R - mu) x 60 / (2 mu) before its first token, on top of a full pool's
    wait_ms = (100 - p.request_rate_per_s) * QUEUE_WINDOW_S / (2 * p.request_rate_per_s) * 1000
    assert p.ttft_ms is not None and wait_ms < p.ttft_ms < wait_ms + 60_000
    assert fluid_wait_s(2.0, 2.0) == 0 and fluid_wait_s(3.0, 2.0) == pytest.approx(15.0)
    low = performance(m, g, SETUP, LoadPoint(2000, 400, request_rate_per_s=0.2))
    assert not low.saturated and low.request_rate_per_s == pytest.approx(0.2)
    assert low.output_tokens_per_s == pytest.approx(0.2 * 400)


def test_performance_needs_exactly_one_load_measure(catalog_models: dict[str, ModelSpec],
                                                    gpus: dict[str, GpuSpec]) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        performance(catalog_models["Qwen2.5-7B"], gpus["A10"], SETUP, LoadPoint(100, 100))


@pytest.mark.parametrize(("model", "tp", "ok"), [
    ("Qwen2.5-7B", 4, True),  # 28 heads, 4 KV heads
    ("Qwen2.5-7B", 8, False),  # 28 heads do not split over 8
    ("Llama-3-8B", 8, True),  # 32 / 8
    ("DeepSeek-V3", 16, True),  # MLA: no KV-head constraint
])
def test_valid_tensor_parallel_degrees(catalog_models: dict[str, ModelSpec], model: str, tp: int, ok: bool) -> None:
    assert valid_tp(catalog_models[model], tp) is ok


def test_sizing_takes_the_larger_of_memory_and_throughput(catalog_models: dict[str, ModelSpec],
                                                          gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Llama-3.1-70B"], gpus["H800-SXM"]
    memory_only = size_deployment(m, g, ServingTarget(2000, 400), SETUP)
    assert not isinstance(memory_only, str)
    # 131 GiB of weights: 2 GPUs leave ~4 GiB of KV each, enough for one 8k sequence
    assert memory_only.total_gpus == memory_only.memory_tp == 2
    busy = size_deployment(m, g, ServingTarget(2000, 400, request_rate_per_s=15), SETUP)
    assert not isinstance(busy, str) and busy.total_gpus > 4 and busy.meets_limits
    assert busy.output_tokens_per_s == pytest.approx(15 * 400, rel=0.01)
    assert any(tp == 1 for tp, _ in busy.rejected)  # one GPU cannot load it


def test_latency_limits_add_replicas(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    m, g = catalog_models["Qwen2.5-14B"], gpus["L20"]
    loose = size_deployment(m, g, ServingTarget(2000, 300, concurrency=40), SETUP)
    tight = size_deployment(m, g, ServingTarget(2000, 300, concurrency=40, tpot_ms=40), SETUP)
    assert not isinstance(loose, str) and not isinstance(tight, str)
    assert tight.total_gpus > loose.total_gpus and tight.performance.tpot_ms <= 40


def test_impossible_limits_say_why_and_add_no_replicas(catalog_models: dict[str, ModelSpec],
                                                       gpus: dict[str, GpuSpec]) -> None:
    # TPOT 1 ms: no replica meets it even alone; the load is sized without it, the limit named, the count bounded
    # by the load (4 users: at most 4 replicas), never stepped up towards 10,000.
    got = size_deployment(catalog_models["Qwen2.5-14B"], gpus["L40S"], ServingTarget(2000, 300, concurrency=4,
                                                                                     tpot_ms=1), SETUP)
    assert not isinstance(got, str)
    assert not got.meets_limits and "TPOT <= 1 ms cannot be met" in got.latency_infeasible
    assert got.replicas <= 4 and got.driver.startswith("TPOT <= 1 ms cannot be met")


def test_replicas_never_exceed_what_the_load_occupies(catalog_models: dict[str, ModelSpec],
                                                     gpus: dict[str, GpuSpec]) -> None:
    """Issue 38: DeepSeek-R1 FP8 on H20 for a handful of long-context users was sized at 4,856 GPUs in 607
    replicas. Five users hold at most five replicas; a TTFT no replica meets alone is said, not multiplied."""
    m, g = catalog_models["DeepSeek-R1"], gpus["H20"]
    setup = ServingSetup(weights="fp8", max_model_len=131072)
    for t in (ServingTarget(64_000, 1000, concurrency=5, ttft_ms=5000), ServingTarget(32_000, 2000, concurrency=5),
              ServingTarget(100_000, 4000, concurrency=8, ttft_ms=10_000)):
        got = size_deployment(m, g, t, setup, max_gpus_per_replica=32, shorter_context_ok=True)
        assert not isinstance(got, str)
        assert got.replicas <= math.ceil(t.concurrency or 0) and got.total_gpus <= 40
        assert got.capacity_ratio <= OVERSIZE_FACTOR


def test_one_h20_box_holds_a_handful_of_r1_users(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    # FP8 weights ~627 GiB (673 GB) over 8 x H20, the MLA latent 70,272 B per token (61 layers x 576 x 2 B), kept on
    # every GPU of the replica: at --gpu-memory-utilization 0.95 the pool holds ~135k tokens, five 16k users.
    m, g = catalog_models["DeepSeek-R1"], gpus["H20"]
    got = size_deployment(m, g, ServingTarget(16_000, 1000, concurrency=5),
                          ServingSetup(weights="fp8", max_model_len=163_840), max_gpus_per_replica=32,
                          shorter_context_ok=True)
    assert not isinstance(got, str) and got.total_gpus == 8 and got.setup.mem_fraction == 0.95
    assert got.memory.weights_gib * 8 == pytest.approx(627, rel=0.03)
    assert "holds" in got.driver or "serves" in got.driver


def test_a_request_rate_is_bounded_by_littles_law(catalog_models: dict[str, ModelSpec],
                                                 gpus: dict[str, GpuSpec]) -> None:
    # 0.5 req/s of 32k-token prompts: never more replicas than requests in flight when each runs alone.
    m, g = catalog_models["DeepSeek-R1"], gpus["H20"]
    t = ServingTarget(32_000, 1000, request_rate_per_s=0.5, ttft_ms=3000)
    got = size_deployment(m, g, t, ServingSetup(weights="fp8", max_model_len=65_536), max_gpus_per_replica=32)
    assert not isinstance(got, str)
    alone = performance(m, g, got.setup, LoadPoint(32_000, 1000, 1.0), got.memory)
    assert got.replicas <= max_useful_replicas(t, alone)
    assert got.capacity_ratio <= OVERSIZE_FACTOR
