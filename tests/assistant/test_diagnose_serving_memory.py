"""A server's memory in use ('单卡部署qwen2-7b占用了20g显存，两张卡每张都各占20g'): expected, the engine reserves a share
of every card up front for the KV cache; the engine named or, when none is, vLLM's default said as assumed."""

from __future__ import annotations

from typing import Any


def test_memory_seen_on_a_server_is_the_engines_reservation(assistant: Any) -> None:
    r = assistant.ask("一张4090 单卡部署qwen2-7b模型占用了20g显存，而用两张4090卡，每张都会各占20g，为啥不是每张卡平摊10g呢？")
    answer = str(r.answer_markdown)
    assert r.intent == "diagnose"
    first = answer.splitlines()[0]
    top = r.answer.diagnosis.causes[0]  # the cause model: the reservation, what vLLM holds per card at 0.9
    assert top.code == "reservation" and top.detail["share"] == 0.9
    assert first.startswith("正常") and "gpu_memory_utilization=0.9" in first
    assert f"{top.detail['held_gib']:g} GiB" in first and 21 <= top.detail["held_gib"] <= 22.2
    assert "按 vLLM 的默认设置" in answer  # the engine was not named


def test_memory_seen_in_training_is_sized_not_explained_by_an_engine(assistant: Any) -> None:
    r = assistant.ask("单卡3090 qwen2-7b lora训练 显存占用了20G 正常吗")
    assert r.intent == "diagnose"
    assert "gpu_memory_utilization" not in str(r.answer_markdown)
