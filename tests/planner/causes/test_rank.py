"""Ranking the causes of one observation against the user's own figures; the figure that would settle it; a figure
the setup cannot produce."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.planner.causes import rank
from service.planner.causes.cases import ServeRun, TrainCase
from service.planner.causes.types import Cause, Quantity

Train = Callable[..., TrainCase]
Serve = Callable[..., ServeRun]


def test_ranked_by_the_gap_explained_and_an_assumed_setting_weighs_less() -> None:
    big = Cause(code="a", explains=Quantity.of(10, "GiB"), stated=False)
    small = Cause(code="b", explains=Quantity.of(7, "GiB"))
    assert [c.code for c in rank.ranked([big, small])] == ["b", "a"]  # 10 x 0.6 < 7
    assert [c.code for c in rank.ranked([small, big], first=["a"])] == ["a", "b"]  # a blocking cause leads


def test_torchrun_replicas_lead_a_lora_oom_on_many_cards(train: Train) -> None:
    case = train("Qwen2-7B", "RTX-4090", 8, method="lora", seq_len=2048, micro_batch=2, knobs={"strategy": "ddp"})
    d = rank.train_memory_diagnosis(case, "train_oom")
    assert d.verdict is True and d.top is not None and d.top.code == "replicas"
    assert d.expected is not None and d.expected.value == pytest.approx(case.per_gpu_gib, abs=0.01)


def test_logits_lead_a_long_sequence_on_a_big_vocabulary(train: Train) -> None:
    case = train("Qwen2-7B", "A100-40G-SXM", 8, method="full", zero_stage=3, seq_len=8192, micro_batch=2)
    d = rank.train_memory_diagnosis(case, "train_oom")
    assert d.verdict is True and d.top is not None and d.top.code == "logits"


def test_an_oom_the_estimate_does_not_explain_asks_for_the_batch(train: Train) -> None:
    d = rank.train_memory_diagnosis(train("Qwen2-7B", "L20", 1, method="lora"), "train_oom")
    assert d.verdict is False and d.ask == "micro_batch"
    stated = rank.train_memory_diagnosis(train("Qwen2-7B", "L20", 1, method="lora", micro_batch=1), "train_oom")
    assert stated.ask == "seq_len"


def test_other_processes_explain_an_oom_that_fits_an_empty_card(train: Train) -> None:
    seen = {"kind": "oom", "card_gb": 44.4, "free_gb": 1.0, "process_gb": 13.4, "other_gb": 30.0}
    d = rank.train_memory_diagnosis(train("Qwen2-7B", "L20", 1, method="lora", micro_batch=1, seen=seen),
                                    "train_oom")
    assert d.verdict is True and d.top is not None and d.top.code == "other_processes"


@pytest.mark.parametrize(("gpus", "host", "why"), [
    (8, None, "total_not_per_card"),  # 200 GB over 8 cards is ~25 GB each
    (1, 192.0, "host_not_gpu"),  # the machine's RAM
])
def test_memory_beyond_the_card_is_impossible(train: Train, gpus: int, host: float | None, why: str) -> None:
    case = train("Qwen2-7B", "RTX-4090", gpus, method="lora", seen={"kind": "memory", "memory_gb": 200},
                 hardware={"host_ram_gb": host} if host else {})
    d = rank.train_memory_diagnosis(case, "train_memory")
    assert d.impossible is not None and d.impossible.misreading == why and d.verdict is None
    assert rank.impossible_memory(20, 24, 1, None) is None


def test_a_multi_node_zero3_run_over_10gbe_is_explained(train: Train) -> None:
    case = train("Qwen2-72B", "H800-SXM", 16, method="full", zero_stage=3,
                 hardware={"nodes": 2, "interconnect": "ethernet", "network_gbps": 10})
    d = rank.scaling_diagnosis(case)
    assert d.verdict is True and d.top is not None and d.top.code == "zero3_link"
    assert d.reference is not None and d.expected is not None and d.expected.value < d.reference.value


def test_scaling_that_should_work_is_not_expected(train: Train) -> None:
    d = rank.scaling_diagnosis(train("Qwen2-7B", "H800-SXM", 8, method="lora"))
    assert d.verdict is False and d.expected is not None and d.reference is not None
    assert d.expected.value >= 1.3 * d.reference.value


def test_host_copies_beyond_the_machine(train: Train) -> None:
    case = train("Qwen2-72B", "A100-40G-SXM", 8, method="lora", knobs={"strategy": "device_map"},
                 hardware={"host_ram_gb": 948})
    d = rank.host_diagnosis(case)
    assert d.verdict is True and d.top is not None and d.top.code == "rank_copies"


def test_a_server_holding_its_share_is_expected(serve: Serve) -> None:
    d = rank.serve_memory_diagnosis(serve("Qwen2-7B", "L20", seen={"kind": "memory", "memory_gb": 43}),
                                    "serve_memory")
    assert d.verdict is True and d.top is not None and d.top.code == "reservation"


def test_a_layout_the_engine_refuses_leads_the_other_causes(serve: Serve) -> None:
    d = rank.serve_memory_diagnosis(serve("Qwen2-72B", "V100-32G-SXM2", 6, knobs={"tp": 6},
                                          seen={"kind": "oom"}), "serve_oom")
    assert d.verdict is True and d.top is not None and d.top.code == "tp_heads"


def test_a_slow_stream_against_the_bandwidth_bound(serve: Serve) -> None:
    run = serve("Qwen2-7B", "RTX-4090", seen={"kind": "slow", "tokens_per_s": 9})
    d = rank.serve_slow_diagnosis(run)
    assert d.verdict is False and d.expected is not None and d.expected.value > 9
    near = rank.serve_slow_diagnosis(serve("Qwen2-7B", "RTX-4090", seen={"kind": "slow", "tokens_per_s":
                                                                         d.expected.value * 0.9}))
    assert near.verdict is True and near.top is not None and near.top.code == "decode_bandwidth"


def test_a_slow_stream_without_its_figure_asks_for_it(serve: Serve) -> None:
    d = rank.serve_slow_diagnosis(serve("Qwen2-7B", "RTX-4090", seen={"kind": "slow"}))
    assert d.ask == "tokens_per_s" and d.verdict is None


@pytest.mark.parametrize(("engine", "ask"), [("vllm", "max_model_len"), ("tgi", "runtime_tgi"),
                                             ("trtllm", "runtime_trtllm"), ("sglang", "runtime_sglang")])
def test_an_oom_the_start_up_sum_does_not_explain_asks_for_the_engines_own_settings(serve: Serve, engine: str,
                                                                                   ask: str) -> None:
    # Regression: a TGI server that starts on the estimate was asked for vLLM's --max-model-len
    d = rank.serve_memory_diagnosis(serve("Qwen2-7B", "H800-SXM", engine=engine, seen={"kind": "oom"}), "serve_oom")
    assert d.ask == ask
