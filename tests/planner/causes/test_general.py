"""The causes that need no size (a model not named or not in the catalog): each applies only where the stated setup
points to it, decides the verdict only where the setup alone decides it, over the synthetic catalog's cards."""

from __future__ import annotations

from typing import Any

from service.catalog.loader import Catalog
from service.catalog.queries import resolve_gpu
from service.frame import Hardware, Knobs, Outcome, Setup
from service.planner.causes.general import Signs, general_diagnosis


def _setup(knobs: dict[str, Any] | None = None, hardware: dict[str, Any] | None = None,
           seen: dict[str, Any] | None = None, **top: Any) -> Setup:
    return Setup(knobs=Knobs(**(knobs or {})), hardware=Hardware(**(hardware or {})),
                 outcome=Outcome(**(seen or {})), **top)


def _codes(s: Signs) -> list[str]:
    return [c.code for c in general_diagnosis(s).causes]


def test_flash_attention_on_a_card_before_ampere(mini: Catalog) -> None:
    v100 = resolve_gpu("V100", mini.gpus)[0]
    d = general_diagnosis(Signs("error", False, _setup({"attention": "flash"}), gpu=v100))
    assert d.top is not None and d.top.code == "g_flash_arch" and d.verdict is True
    assert d.top.detail["cc"] == float(v100.compute_capability or 0)
    a10 = resolve_gpu("A10", mini.gpus)[0]
    assert "g_flash_arch" not in _codes(Signs("error", False, _setup({"attention": "flash"}), gpu=a10))
    assert "g_flash_arch" not in _codes(Signs("error", False, _setup({"attention": "flash"})))  # card unknown


def test_preference_training_holds_a_reference_model() -> None:
    sft = _setup(objective="sft", seen={"status": "worked"})
    d = general_diagnosis(Signs("oom", False, _setup(objective="dpo", seen={"kind": "oom"}), (sft,)))
    assert d.top is not None and d.top.code == "g_ref_model" and d.verdict is True
    assert "g_ref_model" not in _codes(Signs("oom", False, _setup(objective="sft")))


def test_data_parallel_replicas_unless_sharded() -> None:
    d = general_diagnosis(Signs("oom", False, _setup(hardware={"gpu_count": 4}, method="lora")))
    assert d.top is not None and d.top.code == "g_replicas" and d.top.detail["ranks"] == 4 and d.verdict is True
    assert "g_replicas" not in _codes(Signs("oom", False, _setup({"zero_stage": 3}, {"gpu_count": 4})))
    assert "g_replicas" not in _codes(Signs("oom", False, _setup(hardware={"gpu_count": 1})))


def test_multi_node_without_rdma_is_expected_with_rdma_not() -> None:
    plain = _setup(hardware={"nodes": 2, "instance": "PNV6.32XLARGE1280"}, seen={"kind": "slow"})
    hcc = _setup(hardware={"nodes": 2, "instance": "HCCPNV6"}, role="worked")
    d = general_diagnosis(Signs("slow", False, plain, (hcc,)))
    assert d.top is not None and d.top.code == "g_no_rdma" and d.verdict is True
    d2 = general_diagnosis(Signs("scaling", False, _setup(hardware={"nodes": 2, "interconnect": "rdma"})))
    assert d2.top is not None and d2.top.code == "g_rdma_unused" and d2.verdict is False
    assert not {"g_no_rdma", "g_rdma_unused"} & set(_codes(Signs("scaling", False, _setup(hardware={"gpu_count": 4}))))


def test_scaling_without_a_stated_link_names_two_causes_and_no_verdict() -> None:
    d = general_diagnosis(Signs("scaling", False, _setup({"strategy": "ddp"}, {"gpu_count": 8})))
    assert [c.code for c in d.causes[:2]] == ["g_grad_sync", "g_global_batch"] and d.verdict is None
    assert d.ask == "model"
    pcie = general_diagnosis(Signs("scaling", False, _setup(hardware={"gpu_count": 4, "interconnect": "pcie"})))
    assert pcie.verdict is True


def test_lora_against_full_memory_is_the_activations() -> None:
    full = _setup(method="full", seen={"status": "worked"})
    d = general_diagnosis(Signs("memory", False, _setup(method="lora"), (full,)))
    assert d.top is not None and d.top.code == "g_lora_activations" and d.verdict is False
    assert "g_lora_activations" not in _codes(Signs("memory", False, _setup(method="lora")))  # nothing to compare


def test_server_causes_by_engine(mini: Catalog) -> None:
    l20 = resolve_gpu("L20", mini.gpus)[0]
    ollama = _setup({"engine": "ollama"}, seen={"kind": "memory", "memory_gb": 4})
    assert _codes(Signs("memory", True, ollama, gpu=l20))[0] == "g_ollama_fit"
    high = _setup({"engine": "vllm"}, seen={"kind": "memory", "memory_gb": 40})
    d = general_diagnosis(Signs("memory", True, high, gpu=l20))
    assert d.top is not None and d.top.code == "g_reservation" and d.verdict is True
    assert _codes(Signs("oom", True, _setup({"engine": "lmdeploy"})))[0] == "g_lmdeploy_cache"
    tp = general_diagnosis(Signs("scaling", True, _setup({"engine": "tgi"})))
    assert tp.top is not None and tp.top.code == "g_tp_scaling" and tp.verdict is True
    gap = general_diagnosis(Signs("slow", True, _setup({"engine": "vllm"}), (_setup({"engine": "tgi"}),)))
    assert gap.top is not None and gap.top.code == "g_engine_gap" and gap.verdict is False


def test_compute_of_the_setup_compared_from_the_catalog(mini: Catalog) -> None:
    a100 = resolve_gpu("A100-40G-SXM", mini.gpus)[0]
    h800 = resolve_gpu("H800", mini.gpus)[0]
    mine = _setup(hardware={"gpu_count": 2}, seen={"kind": "hours", "hours": 130})
    theirs = _setup(hardware={"gpu_count": 6}, role="baseline")
    d = general_diagnosis(Signs("hours", False, mine, (theirs,), a100, (h800,)))
    ratio = 6 * h800.dense_16bit_tflops / (2 * a100.dense_16bit_tflops)
    assert d.top is not None and d.top.code == "g_compute_gap" and d.verdict is True
    assert d.top.detail["ratio"] == round(ratio, 1) and d.top.detail["other_count"] == 6
    # the faster card no faster: not the GPU, and the data-loading fix is said once
    slow = general_diagnosis(Signs("slow", False, _setup(hardware={"gpu_count": 1}), (_setup(),), h800, (a100,)))
    assert slow.top is not None and slow.top.code == "g_compute_unused" and slow.verdict is False
    fixes = [c.fix.code for c in slow.causes if c.fix is not None]
    assert len(fixes) == len(set(fixes)) and "g_data_bound" not in [c.code for c in slow.causes]
    # the same card: no contrast
    same = general_diagnosis(Signs("hours", False, mine, (_setup(hardware={"gpu_count": 2}),), a100, (a100,)))
    assert "g_compute_gap" not in [c.code for c in same.causes]


def test_several_cards_stuck_where_one_trains_is_nccl() -> None:
    stuck = _setup(hardware={"gpu_count": 3}, seen={"status": "error", "kind": "error", "memory_gb": 1.0})
    one = _setup(hardware={"gpu_count": 1}, seen={"status": "worked"})
    d = general_diagnosis(Signs("error", False, stuck, (one,)))
    assert d.top is not None and d.top.code == "g_nccl_hang" and d.verdict is False
    assert "g_replicas" not in [c.code for c in d.causes]  # not a memory failure
    busy = _setup(hardware={"gpu_count": 3}, seen={"status": "error", "kind": "error", "memory_gb": 40.0})
    assert general_diagnosis(Signs("error", False, busy, (one,))).top.code == "g_replicas"  # type: ignore[union-attr]


def test_zero_stages_alike_in_memory_are_the_activations() -> None:
    z2 = _setup({"zero_stage": 2}, method="lora")
    d = general_diagnosis(Signs("memory", False, _setup({"zero_stage": 3}, {"gpu_count": 2}, method="lora"), (z2,)))
    assert "g_zero_same" in [c.code for c in d.causes]
    assert "g_zero_same" not in [c.code for c in general_diagnosis(Signs("memory", False, _setup({"zero_stage": 3})))
                                 .causes]


def test_server_rules_read_the_flags() -> None:
    ollama = _setup({"engine": "ollama", "max_model_len": 128000}, seen={"kind": "slow"})
    d = general_diagnosis(Signs("slow", True, ollama))
    assert d.top is not None and d.top.code == "g_ollama_ctx" and d.top.detail["ctx"] == 128000 and d.verdict is True
    assert "g_ollama_ctx" not in _codes(Signs("slow", True, _setup({"engine": "ollama"})))  # num_ctx not stated
    two = _setup({"weights": "int4"}, {"gpu_count": 2}, {"kind": "oom"})
    d2 = general_diagnosis(Signs("oom", True, two))
    assert d2.top is not None and d2.top.code == "g_one_card" and d2.verdict is False
    assert d2.top.fix is not None and d2.top.fix.setting == "--tensor-parallel-size 2"
    assert "g_one_card" not in _codes(Signs("oom", True, _setup({"tp": 2}, {"gpu_count": 2})))
    assert "g_quant_kernel" in _codes(Signs("slow", True, _setup({"weights": "int8"})))  # transformers, no engine
    assert "g_quant_kernel" not in _codes(Signs("slow", True, _setup({"weights": "bf16"})))
    assert "g_llamacpp_layers" in _codes(Signs("slow", True, _setup({"engine": "llamacpp"})))


def test_a_server_over_several_machines_is_bound_by_their_network() -> None:
    multi = _setup({"engine": "sglang"}, {"nodes": 4, "gpus_per_node": 4}, {"kind": "slow"})
    assert "g_multinode_tp" in _codes(Signs("slow", True, multi))
    assert "g_multinode_tp" not in _codes(Signs("slow", True, _setup({"engine": "sglang"}, {"gpu_count": 4})))
