"""A server's run is diagnosed as serving (the engine's figures per setup, the verdict first, the one flag), never
sized as a training job; a training run stays a training diagnosis."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(("question", "first", "words"), [
    # the regression: this was answered as a LoRA fine-tune needing 139 GiB per GPU
    ("lmdeploy tp=4 llama2-70B 显存缓慢增长 OOM", "正常：LMDeploy", ["--cache-max-entry-count", "TurboMind"]),
    # the cause model: decode is bound by bandwidth, and 9 tokens/s is a fraction of what it gives
    ("vllm部署qwen2.5-7b，4090上 9 tokens/s 正常吗", "不正常，偏慢：解码受显存带宽限制", ["单请求约", "vLLM 0.10"]),
    ("qwen2.5-72b tp4能跑，tp8就oom，为什么", "不正常：", ["TP4", "TP8"]),
    ("HF transformers能跑llama3.1-8b，4090上vllm就OOM，为什么", "正常，起不来：", ["--max-model-len 32768",
                                                                                 "estimated maximum model length"]),
    ("6张V100用vllm部署llama3-70b，tp=6起不来", "正常，起不来：TP=6", ["must be divisible by tensor parallel size (6)",
                                                     "--pipeline-parallel-size 3"]),
    ("vLLM on A100 80G serving Qwen2.5-32B-FP8, why does FP8 run on A100?", "Expected: ", ["W8A16", "Marlin"]),
    ("TP8 vs TP4 for llama-3-70b on H800 with vllm, which is faster?", "vLLM TP8", ["is faster", "TP4"]),
])
def test_a_server_is_diagnosed_as_serving(assistant: Any, question: str, first: str, words: list[str]) -> None:
    r = assistant.ask(question)
    answer = "\n".join(line for line in str(r.answer_markdown).splitlines() if "/knowledge/guide/" not in line)
    assert r.intent == "diagnose", answer
    assert answer.splitlines()[0].startswith(first), answer
    for w in words:
        assert w in answer, (w, answer)
    assert "LoRA" not in answer and "微调" not in answer.split("###")[0]


def test_a_training_oom_stays_a_training_diagnosis(assistant: Any) -> None:
    r = assistant.ask("qwen2.5-7b lora微调 单卡4090 seq 4096 就OOM 为什么")
    assert r.intent == "diagnose"
    assert "LoRA" in str(r.answer_markdown) and "tokens/s" not in str(r.answer_markdown).splitlines()[0]
