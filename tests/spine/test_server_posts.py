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
