"""A diagnosis names the cause the user's own numbers point to (issue 37): the verdict and the top cause with its
number on the first line, the fix with the figure after it next, the one setting that would settle it, a figure
the setup cannot produce said first; over the synthetic catalog."""

from __future__ import annotations

from collections.abc import Callable

from service.catalog.loader import Catalog
from service.frame import Setup
from service.questions import diagnose
from service.questions.base import Context
from service.questions.diagnose_answer import DiagnoseArgs, with_setup
from service.questions.diagnose_render import num
from service.questions.turn import Turn


def _top(t: Turn) -> dict[str, object]:
    assert t.type == "diagnose" and t.answer is not None
    d = t.answer.public()["diagnosis"]
    return dict(d["causes"][0])


def test_torchrun_replicas_first_with_their_number(ask: Callable[..., Turn]) -> None:
    t = ask("8卡4090 torchrun 跑qwen2-7b lora seq 2048 bs 2 每张卡都OOM 为什么")
    top = _top(t)
    first, second = t.text.splitlines()[:2]
    assert top["code"] == "replicas"
    assert first.startswith("正常，会 OOM：每张卡都要放一整份") and f"{num(top['explains']['value'])} GiB" in first  # type: ignore[index]
    assert "torchrun" in first and second.startswith("改法：") and "ZeRO-3" in second


def test_the_same_in_english(ask: Callable[..., Turn]) -> None:
    t = ask("OOM on 8x RTX 4090 with torchrun, Qwen2-7B LoRA, seq 2048, batch size 2. Why?")
    first, second = t.text.splitlines()[:2]
    assert _top(t)["code"] == "replicas"
    assert first.startswith("Expected, it OOMs: every GPU holds a whole") and second.startswith("Fix: ")


def test_an_oom_the_estimate_does_not_explain_asks_the_one_setting(ask: Callable[..., Turn]) -> None:
    t = ask("qwen2-7b lora 单卡L20 一跑就OOM")
    assert t.answer is not None and t.answer.public()["diagnosis"]["ask"] == "micro_batch"
    assert "per_device_train_batch_size" in t.text.split("\n\n")[0]


def test_other_processes_from_a_pasted_error(ask: Callable[..., Turn]) -> None:
    t = ask("qwen2-7b lora bs 1 on one L20: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
            "GPU 0 has a total capacity of 44.39 GiB of which 1.00 GiB is free. Process 4242 has 30.00 GiB memory "
            "in use. Including non-PyTorch memory, this process has 13.30 GiB memory in use.")
    top = _top(t)
    assert top["code"] == "other_processes" and top["explains"]["value"] == 30.0  # type: ignore[index]
    assert "30 GiB" in t.text.splitlines()[0]


def test_memory_impossible_for_one_card_is_said_first(ask: Callable[..., Turn]) -> None:
    t = ask("qwen2-7b lora 8卡4090 显存占用了200G 正常吗")
    assert t.answer is not None and t.answer.public()["diagnosis"]["impossible"]["misreading"] == "total_not_per_card"
    first = t.text.splitlines()[0]
    assert first.startswith("200 GB 超过了一张 24 GB 卡的显存") and "所有卡加起来" in first


def test_a_server_holding_memory_is_its_reservation(ask: Callable[..., Turn]) -> None:
    t = ask("vllm起个qwen2-7b 单卡L20 显存直接吃到43g 模型才15g 正常吗")
    assert _top(t)["code"] == "reservation"
    first = t.text.splitlines()[0]
    assert first.startswith("正常：这是推理引擎预留的") and "gpu_memory_utilization=0.9" in first
    assert "--gpu-memory-utilization" in t.text.splitlines()[1]


def test_zero3_over_10gbe_is_why_two_nodes_are_slower(ask: Callable[..., Turn]) -> None:
    t = ask("两台8卡H800 10GbE zero3 训qwen2-72b全参 比单机还慢")
    top = _top(t)
    assert top["code"] == "zero3_link"
    assert "ZeRO-3" in t.text.splitlines()[0] and "RDMA" in t.text.splitlines()[1]


def test_a_caller_without_a_frame_gets_the_cause_model(mini: Catalog) -> None:
    # Regression: MCP's diagnose hides `setup` (the chat builds it from the frame), so an MCP call ran the estimate
    # alone and never the cause model; the setup is now built from the caller's own fields
    args = DiagnoseArgs.model_validate({"model": "Qwen2-7B", "gpu": "RTX-4090", "gpu_count": 8, "seq_len": 2048,
                                        "micro_batch": 2, "observation": {"kind": "oom"}})
    built = with_setup(args).setup
    assert built is not None and built.hardware.gpu_count == 8 and built.knobs.seq_len == 2048
    assert built.knobs.micro_batch == 2 and built.outcome is not None and built.outcome.kind == "oom"
    assert built.method is None and built.knobs.zero_stage is None  # what the caller did not set stays unstated
    out = diagnose.MODULE.run(Context.of(mini, max_price_age_days=100_000), args)
    assert out.diagnosis is not None and out.diagnosis.top is not None and out.diagnosis.top.code == "replicas"
    framed = args.model_copy(update={"setup": Setup()})
    assert with_setup(framed).setup == Setup()  # a frame's setup (the chat's) is kept as it is


def test_a_saturated_servers_ttft_is_expected_and_needs_replicas(ask: Callable[..., Turn]) -> None:
    """It runs (its TTFT was measured), so the int4 TP4 layout the catalog's config refuses is not the answer; at 8
    requests a second it is saturated: the verdict first, then how many replicas."""
    t = ask("4张A10 用vLLM TP4 部署 Qwen2-72B-Instruct-AWQ，每秒8个请求，输入1.5k输出300，首字延迟4秒左右，正常吗")
    first, second = t.text.splitlines()[:2]
    assert _top(t)["code"] == "ttft_saturated"
    assert first.startswith("正常：这个负载下服务已经饱和") and "每秒发来 8 个" in first
    assert second.startswith("改法：加副本分担负载：约 ") and second.endswith("个副本。")
    assert "replicas" not in t.text and "起不来" not in first and "refuses" not in t.text


def test_fp8_weights_seen_running_on_a_v100_never_claim_fp8_tensor_cores(ask: Callable[..., Turn]) -> None:
    t = ask("Qwen2-7B-Instruct-FP8 在 V100 上用 vLLM 居然能跑起来，为什么")
    assert "有 FP8 张量核心" not in t.text and "7.0" in t.text.splitlines()[0]
