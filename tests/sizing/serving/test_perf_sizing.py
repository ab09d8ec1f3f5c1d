"""Throughput, latency and sizing: the roofline's regimes, queueing, and GPUs x replicas."""

from __future__ import annotations

import pytest

from service.catalog.schema import GpuSpec, ModelSpec
from service.sizing.serving.perf import QUEUE_WINDOW_S, fluid_wait_s, performance
from service.sizing.serving.sizing import ServingTarget, size_deployment, valid_tp
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


def test_impossible_limits_say_why(catalog_models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    got = size_deployment(catalog_models["Qwen2.5-14B"], gpus["L40S"], ServingTarget(2000, 300, concurrency=4,
                                                                                     tpot_ms=1), SETUP)
    assert isinstance(got, str) and "latency" in got
