"""A post about running a model names no engine and no training words: it is a server's run, never sized as a
LoRA job ('OutOfMemory error running Meta-Llama-3.1-405B-Instruct-fp8 on 8xH100' read as LoRA was the miss)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.questions.turn import Turn


@pytest.mark.parametrize("post", [
    "Qwen2-7B build engine OOM on one A10, --tp_size 1",
    "OutOfMemory error running Qwen2-7B-Instruct on one A10",
    "launcher of qwen2-7b on one A10 fails: max-total-tokens 32768 gives OOM",
])
def test_a_server_post_is_diagnosed_as_a_server(ask: Callable[..., Turn], post: str) -> None:
    t = ask(post)
    assert t.type == "diagnose" and t.answer is not None
    assert t.answer.public().get("serving") is not None
    assert "LoRA" not in t.text.splitlines()[0]


def test_a_training_post_stays_a_training_diagnosis(ask: Callable[..., Turn]) -> None:
    t = ask("OOM when fine-tuning Qwen2-7B-Instruct on one A10")
    assert t.type == "diagnose" and t.answer is not None and t.answer.public().get("serving") is None
    assert "LoRA" in t.text.splitlines()[0]


def test_an_npu_post_that_names_no_card_is_sized_on_an_ascend_card(ask: Callable[..., Turn]) -> None:
    t = ask("tp=2 to serve Qwen2-72B, seems to incur oom. PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256")
    assert t.answer is not None and t.answer.public().get("serving") is not None
    assert "Ascend" in t.text and "A100" not in t.text


def test_memory_seen_on_a_server_and_asked_about_is_a_diagnosis(ask: Callable[..., Turn]) -> None:
    t = ask("vllm起个qwen2-7b 单卡a10 显存直接吃到21g 模型才15g 正常吗")
    assert t.type == "diagnose" and t.text.startswith("正常") and "gpu_memory_utilization" in t.text.splitlines()[0]


def test_a_serving_question_without_an_observation_stays_a_plan(ask: Callable[..., Turn]) -> None:
    t = ask("上线qwen2-72b对话服务要几张卡，为什么")
    assert t.type == "serving"


def test_weights_that_fill_the_cards_name_the_wider_layout_after_the_shorter_context(ask: Callable[..., Turn]) -> None:
    # 'a shorter context' alone starts a server that holds one request at a time: the answer says so, and names the
    # layout that serves (TP4, with its pool) or quantized weights
    t = ask("vllm 起 Qwen2-72B bf16 2卡 H800 tp2 0.9 权重加载完直接 OOM")
    lines = t.text.splitlines()
    assert lines[0].startswith("正常") and "--max-model-len" in lines[1]
    assert "TP4" in lines[2] and "AWQ" in lines[2] and "KV 缓存" in lines[2]
    assert t.text.count("- vLLM TP2") == 1  # a setup is listed once


def test_a_tgi_server_that_starts_and_ooms_is_asked_tgis_settings(ask: Callable[..., Turn]) -> None:
    # Regression: TGI was asked vLLM's --max-model-len / --gpu-memory-utilization and told a vLLM flag as the fix
    t = ask("TGI 部署 Qwen2-7B 一张 H800，跑一会就 OOM 了")
    assert "--max-batch-prefill-tokens" in t.text and "--gpu-memory-utilization" not in t.text
    assert "tgi," not in t.text
