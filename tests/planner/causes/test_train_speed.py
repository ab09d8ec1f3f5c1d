"""Slow training and scaling causes: each one's slowdown from the throughput engine, and where it does not apply."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.planner.causes import train_speed as ts
from service.planner.causes.cases import TrainCase
from service.sizing.throughput import OFFLOAD_SLOWDOWN

Make = Callable[..., TrainCase]


def test_offload_slows_by_the_engines_factor(train: Make) -> None:
    case = train("Qwen2-7B", "RTX-4090", 1, method="full", knobs={"offload": True})
    c = ts.offload(case)
    assert c.applies and c.explains is not None and c.explains.unit == "x"
    assert c.explains.value == pytest.approx(OFFLOAD_SLOWDOWN["optimizer"], rel=0.02)
    assert c.fix is not None and c.fix.code == "more_gpus_no_offload"  # a 4090 holds no 7B full fine-tune unaided
    assert not ts.offload(train("Qwen2-7B", "RTX-4090", 1, method="lora")).applies


def test_zero3_over_a_slow_link_between_nodes(train: Make) -> None:
    case = train("Qwen2-72B", "H800-SXM", 16, method="full", zero_stage=3,
                 hardware={"nodes": 2, "interconnect": "ethernet", "network_gbps": 10})
    c = ts.zero3_link(case)
    assert c.applies and c.stated and c.explains is not None
    assert c.explains.value == pytest.approx(c.detail["rdma_tps"] / c.detail["tcp_tps"], rel=0.05)
    assert c.detail["tcp_tps"] < c.detail["one_node_tps"]  # two nodes over 10 GbE are slower than one node
    rdma = train("Qwen2-72B", "H800-SXM", 16, method="full", zero_stage=3,
                 hardware={"nodes": 2, "interconnect": "rdma"})
    assert not ts.zero3_link(rdma).applies


def test_allreduce_over_pcie_without_p2p(train: Make) -> None:
    case = train("Qwen2-7B", "RTX-4090", 4, method="full", zero_stage=2, knobs={"offload": True})
    c = ts.allreduce_link(case)
    assert c.applies and c.detail["no_p2p"] == 1 and c.explains is not None
    assert c.explains.value == pytest.approx(4 / c.detail["speedup"], rel=0.02)
    assert not ts.allreduce_link(train("Qwen2-7B", "H800-SXM", 8, method="lora")).applies  # NVLink


def test_moe_in_transformers_loops_over_experts(train: Make) -> None:
    case = train("Qwen3-30B-A3B", "H800-SXM", 8, method="lora")
    c = ts.moe_loop(case)
    assert c.applies and c.detail["experts"] == 128 and c.explains is not None and c.explains.value > 1.15
    assert c.fix is not None and c.fix.fixed is not None and c.fix.fixed.value > case.rate(expert_loop=True)
    assert not ts.moe_loop(train("Qwen2-7B", "H800-SXM", 8, method="lora")).applies


def test_checkpointing_recomputes_the_forward(train: Make) -> None:
    c = ts.checkpointing(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", grad_ckpt=True))
    assert c.applies and c.explains is not None and 1.15 <= c.explains.value <= 1.6
    assert not ts.checkpointing(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", grad_ckpt=False)).applies


def test_qlora_dequantises_every_pass(train: Make) -> None:
    c = ts.qlora_dequant(train("Qwen2-7B", "A10", 1, method="qlora"))
    assert c.applies and c.explains is not None and c.explains.value > 1.15
    assert not ts.qlora_dequant(train("Qwen2-7B", "A10", 1, method="lora")).applies


def test_bf16_on_a_card_without_it_is_emulated(train: Make) -> None:
    case = train("Qwen2-7B", "V100-32G-SXM2", 1, method="qlora", knobs={"precision": "amp-bf16"})
    c = ts.no_bf16(case)
    assert c.applies and c.explains is not None
    assert c.explains.value == pytest.approx(case.gpu.dense_16bit_tflops / (case.gpu.fp32_tflops or 1), rel=0.01)
    assert not ts.no_bf16(train("Qwen2-7B", "A10", 1, method="qlora", knobs={"precision": "amp-bf16"})).applies


def test_padding_to_a_long_cutoff(train: Make) -> None:
    case = train("Qwen2-7B", "A10", 1, method="lora", seq_len=4096)
    c = ts.padding(case, 512)
    assert c.applies and c.explains is not None and c.explains.value == 8
    assert not ts.padding(case, 3000).applies
    assert not ts.padding(train("Qwen2-7B", "A10", 1, method="lora"), 512).applies  # no cutoff stated


def test_low_utilisation_is_time_waiting(train: Make) -> None:
    c = ts.data_wait(train("Qwen2-7B", "A10", 1, method="lora", seen={"kind": "util", "util_pct": 40}))
    assert c.applies and c.explains is not None and c.explains.value == 2.5
    assert not ts.data_wait(train("Qwen2-7B", "A10", 1, method="lora", seen={"kind": "util", "util_pct": 95})).applies


def test_eager_attention_time_grows_with_the_sequence(train: Make) -> None:
    short = ts.eager_time(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=1024, attention="eager"))
    long = ts.eager_time(train("Qwen2-7B", "A100-40G-SXM", 1, method="lora", seq_len=16384, attention="eager"))
    assert long.applies and long.explains is not None
    assert not short.applies or (short.explains is not None and short.explains.value < long.explains.value)
