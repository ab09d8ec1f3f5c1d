"""A server's causes: memory held, won't start, slow decode and TTFT; each one's number from the serving engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.planner.causes import rank
from service.planner.causes import serve_memory as sm
from service.planner.causes import serve_speed as sp
from service.planner.causes.cases import ServeRun
from service.sizing.serving.device import cuda_total_gib

Make = Callable[..., ServeRun]


def test_the_reservation_is_the_share_of_the_card_not_the_model(serve: Make) -> None:
    run = serve("Qwen2-7B", "A10", seen={"kind": "memory", "memory_gb": 21})
    c = sm.reservation(run)
    m = run.mem
    assert c.applies and c.detail["share"] == 0.9
    assert c.detail["held_gib"] == pytest.approx(sm.held_gib(run), abs=0.05)
    assert sm.held_gib(run) <= 0.9 * cuda_total_gib(run.gpu) + m.graph_gib + 0.05  # what the share allows
    assert c.explains is not None and c.explains.value == pytest.approx(sm.held_gib(run) - m.weights_gib, abs=0.1)
    assert c.fix is not None and c.fix.setting and c.fix.setting.startswith("--gpu-memory-utilization")
    # an engine that does not reserve (transformers) has no reservation to explain
    assert not sm.reservation(serve("Qwen2-7B", "A10", engine="hf")).applies


def test_weights_beyond_the_cards(serve: Make) -> None:
    run = serve("Qwen2-72B", "A100-40G-SXM", 2, knobs={"tp": 2})
    c = sm.weights_exceed(run)
    assert c.applies and c.explains is not None and c.detail["weights_gib"] > c.detail["usable_gib"]
    assert c.fix is not None and c.fix.setting  # more TP, or a smaller dtype
    assert not sm.weights_exceed(serve("Qwen2-7B", "A100-40G-SXM")).applies


def test_a_tp_that_does_not_divide_the_heads(serve: Make) -> None:
    run = serve("Qwen2-72B", "V100-32G-SXM2", 6, knobs={"tp": 6})
    c = sm.tp_layout(run)
    assert c.applies and c.code == "tp_heads" and c.detail["heads"] == 64 and c.detail["tp"] == 6
    assert c.fix is not None and c.fix.setting and "pipeline-parallel-size" in c.fix.setting
    assert not sm.tp_layout(serve("Qwen2-72B", "H800-SXM", 8, knobs={"tp": 8})).applies


def test_a_pool_shorter_than_the_context(serve: Make) -> None:
    run = serve("Qwen2-7B", "RTX-4090", knobs={"max_model_len": 131072})
    c = sm.kv_short(run)
    assert c.applies and c.detail["fits"] < 131072 and c.fix is not None and c.fix.fixed is not None
    assert c.fix.fixed.value <= c.detail["fits"]  # the suggested --max-model-len fits the pool
    assert not sm.kv_short(serve("Qwen2-7B", "H800-SXM", knobs={"max_model_len": 8192})).applies


def test_fp8_weights_on_a_card_without_fp8_kernels(serve: Make) -> None:
    run = serve("Qwen2-7B", "V100-32G-SXM2", knobs={"weights": "fp8"})
    c = sm.kernel_support(run)
    assert c.applies and c.detail["cc"] == pytest.approx(7.0)
    assert not sm.kernel_support(serve("Qwen2-7B", "H800-SXM", knobs={"weights": "fp8"})).applies


def test_other_processes_on_the_card(serve: Make) -> None:
    run = serve("Qwen2-7B", "RTX-4090", seen={"card_gb": 23.6, "free_gb": 10.5, "other_gb": 13.1})
    c = sm.other_processes(run)
    assert c.applies and c.explains is not None and c.explains.value == 13.1
    assert not sm.other_processes(serve("Qwen2-7B", "RTX-4090")).applies


def test_the_multimodal_start_up_profile(serve: Make) -> None:
    run = serve("Qwen2.5-VL-7B", "A100-40G-SXM")
    c = sm.startup_profile(run)
    assert c.applies and c.code == "mm_profile" and c.detail["vision_gib"] > 0
    assert c.explains is not None and c.explains.value == pytest.approx(run.mem.activation_peak_gib, abs=0.05)
    assert not sm.startup_profile(serve("Qwen2-7B", "H800-SXM", knobs={"max_model_len": 4096})).applies


def test_an_engine_without_mla_keeps_full_heads(serve: Make) -> None:
    c = sm.no_mla(serve("DeepSeek-V2-Lite", "A100-40G-SXM", engine="tgi"))
    assert c.applies and c.explains is not None and c.explains.value > 3
    assert c.explains.value == pytest.approx(c.detail["full_kib"] / c.detail["latent_kib"], rel=0.05)
    assert not sm.no_mla(serve("DeepSeek-V2-Lite", "A100-40G-SXM", engine="vllm")).applies


def test_headroom_left_when_it_runs_out_while_serving(serve: Make) -> None:
    run = serve("Qwen2-7B", "A100-40G-SXM", engine="lmdeploy", seen={"kind": "oom", "where": "inference"})
    c = sm.runtime_headroom(run)
    assert c.applies and c.explains is not None
    assert c.explains.value == pytest.approx(cuda_total_gib(run.gpu) - sm.held_gib(run), abs=0.1)
    assert not sm.runtime_headroom(serve("Qwen2-7B", "A100-40G-SXM", engine="lmdeploy")).applies


def test_decode_is_bandwidth_over_bytes_read(serve: Make) -> None:
    run = serve("Qwen2-7B", "RTX-4090")
    c = sp.decode_bandwidth(run)
    assert c.applies and c.explains is not None
    bound = run.gpu.mem_bw_gb_s * 1e9 / (c.detail["read_gib"] * 2**30)  # the roofline: bandwidth / bytes a token
    assert 0.4 * bound <= c.explains.value <= bound
    loaded = sp.decode_bandwidth(serve("Qwen2-7B", "RTX-4090", load={"concurrency": 32}))
    assert loaded.detail["at_load_tps"] > c.explains.value  # the total at 32 concurrent is far above one stream


def test_ttft_is_prefill_plus_the_queue(serve: Make) -> None:
    run = serve("Qwen2-7B", "A10", load={"request_rate": 50, "input_tokens": 2048, "output_tokens": 256})
    c = sp.ttft_queue(run)
    assert c.applies and c.explains is not None
    assert c.explains.value == pytest.approx(c.detail["prefill_ms"] + c.detail["queue_ms"], abs=2)
    assert c.detail["saturated"] == 1 and c.fix is not None and c.fix.code == "replicas"
    assert not sp.ttft_queue(serve("Qwen2-7B", "A10")).applies  # no load stated


def test_all_reduce_over_pcie_at_tp(serve: Make) -> None:
    c = sp.pcie_allreduce(serve("Qwen2-7B", "RTX-4090", 2, knobs={"tp": 2}))
    assert c.applies and c.detail["comm_ms"] > 0 and c.explains is not None and c.explains.value > 1.15
    assert not sp.pcie_allreduce(serve("Qwen2-7B", "H800-SXM", 2, knobs={"tp": 2})).applies  # NVLink


def test_llamacpp_beyond_the_card_reads_from_ram(serve: Make) -> None:
    c = sp.cpu_offload(serve("Qwen2-72B", "RTX-4090", engine="llamacpp"))
    assert c.applies and c.detail["cpu_share"] > 0 and c.explains is not None and c.explains.value < 10
    assert not sp.cpu_offload(serve("Qwen2-7B", "RTX-4090", engine="llamacpp")).applies


def test_fp8_weight_only_on_ampere(serve: Make) -> None:
    assert sp.fp8_weight_only(serve("Qwen2-7B", "A100-40G-SXM", knobs={"weights": "fp8"})).applies
    assert not sp.fp8_weight_only(serve("Qwen2-7B", "H800-SXM", knobs={"weights": "fp8"})).applies


def test_tp_adds_speed_per_request_not_throughput(serve: Make) -> None:
    c = sp.tp_replicas(serve("Qwen2-7B", "A100-40G-SXM", 4, knobs={"tp": 4}, load={"concurrency": 256}))
    assert c.applies and c.explains is not None and c.explains.value > 1.15
    assert c.fix is not None and c.fix.fixed is not None and c.fix.fixed.value > c.detail["tp_tps"]
    assert not sp.tp_replicas(serve("Qwen2-7B", "A100-40G-SXM", 4, knobs={"tp": 4})).applies  # no load stated


def test_a_pool_the_weights_leave_as_a_sliver_names_the_wider_layout(serve: Make) -> None:
    # 'vllm 起 Qwen2.5-72B bf16 2卡 A100 80G tp2 0.9 权重加载完直接 OOM': a shorter context starts it, one request at a
    # time; the answer also names the layout that serves (TP4) with its pool, or quantized weights
    run = serve("Qwen2-72B", "H800-SXM", 2, knobs={"tp": 2, "max_model_len": 32768})
    c = sm.kv_short(run)
    assert c.applies and c.detail["wide_tp"] == 4 and c.detail["wide_gpus"] == 4
    assert c.detail["wide_pool_gib"] > 5 * c.detail["pool_gib"] and c.detail["wide_tokens"] > c.detail["fits"]
    # a pool that is short for the context but not a sliver: the shorter context is the whole fix
    roomy = sm.kv_short(serve("Qwen2-7B", "RTX-4090", knobs={"max_model_len": 131072}))
    assert roomy.applies and "wide_tp" not in roomy.detail


def test_a_server_seen_answering_was_not_refused_at_start(serve: Make) -> None:
    """Qwen2-72B in int4 at TP4: 29568 / 4 is not a multiple of AWQ's 128 groups, so the engine as the catalog has
    it refuses to load. A post that measured its TTFT ran it (a padded checkpoint): its speed is what is diagnosed."""
    refused = serve("Qwen2-72B", "A10", 4, knobs={"tp": 4, "weights": "int4"})
    assert not refused.mem.starts and sm.tp_layout(refused).code == "quant_group"
    load = {"request_rate": 8, "input_tokens": 1500, "output_tokens": 300}
    seen = serve("Qwen2-72B", "A10", 4, knobs={"tp": 4, "weights": "int4"}, seen={"ttft_ms": 4000}, load=load)
    assert seen.mem.starts and seen.mem.starts_reason == ""
    assert sp.ttft_queue(seen).applies  # sized as it ran
    # weights beyond the cards never ran on them, whatever was measured (a CPU offload, another card)
    assert not serve("Qwen2-72B", "A10", 1, knobs={"weights": "bf16"}, seen={"tokens_per_s": 2}).mem.starts


def test_a_saturated_servers_ttft_grows_with_the_burst(serve: Make) -> None:
    load = {"request_rate": 8, "input_tokens": 1500, "output_tokens": 300}
    run = serve("Qwen2-72B", "A10", 4, knobs={"tp": 4, "weights": "int4"}, seen={"ttft_ms": 4000}, load=load)
    d = rank.serve_slow_diagnosis(run)
    top = d.top
    assert top is not None and top.code == "ttft_saturated" and d.verdict is True  # 4 s is what it gives
    assert top.detail["offered_rps"] == 8 and 0 < top.detail["served_rps"] < 8
    assert top.fix is not None and top.fix.code == "replicas" and top.fix.fixed is not None
    assert top.fix.fixed.unit == "replicas" and top.fix.fixed.value >= 8 / top.detail["served_rps"] - 1e-9
    # under its capacity, a TTFT far above the engine's is slow; one at the engine's is not
    light = {"request_rate": 0.05, "input_tokens": 1024, "output_tokens": 128}
    est = sp.ttft_queue(serve("Qwen2-7B", "A10", load=light)).explains
    assert est is not None
    slow = rank.serve_slow_diagnosis(serve("Qwen2-7B", "A10", seen={"ttft_ms": est.value * 5}, load=light))
    fine = rank.serve_slow_diagnosis(serve("Qwen2-7B", "A10", seen={"ttft_ms": est.value}, load=light))
    assert slow.top is not None and slow.top.code == "ttft_queue" and slow.verdict is False
    assert fine.verdict is True


def test_a_kernel_the_card_lacks_stays_a_fact_when_the_post_saw_it_run(serve: Make) -> None:
    """FP8 weights on a V100 'run' (a fallback the post does not describe): the card still has no FP8 kernels, so the
    seen run does not make the engine's refusal go away, and nothing says it computes FP8 natively."""
    run = serve("Qwen2-7B", "V100-32G-SXM2", knobs={"weights": "fp8"}, seen={"status": "worked"})
    assert run.setup.seen_running and not run.mem.starts and "7.0" in run.mem.starts_reason


def test_a_server_seen_running_with_no_room_for_a_cache_still_does_not_start(serve: Make) -> None:
    """'--gpu-memory-utilization 0.5, 20 tokens/s, why so slow': the share leaves the weights no KV pool, which no
    unstated setting explains away; the engine's refusal stays the answer."""
    run = serve("Qwen2-7B", "A10", knobs={"gpu_memory_utilization": 0.5}, seen={"tokens_per_s": 20})
    assert run.setup.seen_running and not run.mem.starts and run.mem.kv_capacity_tokens == 0
