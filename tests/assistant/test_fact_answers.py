"""Answers that open with the answer (issue 20): regions of a named family and a city, no GPU list for a
question that is not about the GPUs a cloud rents, capacity for serving or for training as asked."""

from __future__ import annotations

from typing import Any

import pytest


def _first(assistant: Any, text: str) -> str:
    return str(assistant.ask(text).answer_markdown).splitlines()[0]


@pytest.mark.parametrize(("text", "first"), [
    ("腾讯云哪些区能买到GT4 广州有吗", "有。广州有 GT4：广州三区、广州四区、广州六区。"),
    ("京东云的V100在北京有吗", "有。北京有 V100：cn-north-1（北京）。"),
    ("which regions have H800 on tencent", "Tencent Cloud publishes no region list for HCCPNV5"),
])
def test_regions_open_with_the_answer(assistant: Any, text: str, first: str) -> None:
    assert _first(assistant, text).startswith(first)


def test_a_billing_question_naming_a_cloud_is_not_answered_with_its_gpu_list(assistant: Any) -> None:
    # was '腾讯云目前的 GPU 实例有：A10、A100、…': any cloud name without a GPU became 'which GPUs does it rent'
    assert "GPU 实例有" not in _first(assistant, "腾讯云按量计费的GPU机器 关机了还扣钱吗")
    assert _first(assistant, "腾讯云有哪些卡").startswith("腾讯云目前的 GPU 实例")


@pytest.mark.parametrize(("text", "first"), [
    ("4090能部署多大的模型", "1 张 RTX 4090（24 GiB）用 vLLM 部署，最大约能跑"),  # was full fine-tune capacity
    ("Which model can run on RTX 4090 24GB?", "On 1x RTX 4090 (24 GiB), vLLM serves models up to about"),
    ("8*H800能训多大的模型", "8 张 H800 SXM（80 GiB）按全参微调最大约能训"),  # training stays training
])
def test_capacity_for_serving_or_training_as_asked(assistant: Any, text: str, first: str) -> None:
    assert _first(assistant, text).startswith(first)


@pytest.mark.parametrize(("text", "lines"), [
    # was read as a comparison ('还是只能去腾讯云' is 'or do I have to go to Tencent'), then 'yes' for either cloud
    ("京东云现在有没有卖A800的 还是只能去腾讯云", ("没有。京东云目前的 GPU 实例是", "A800 可以租：腾讯云 HCCPNV4sn")),
    ("does tencent or jd cloud sell A800?", ("Yes. Tencent Cloud sells A800", "No. JD Cloud GPU instances are")),
])
def test_clouds_that_differ_are_answered_each(assistant: Any, text: str, lines: tuple[str, str]) -> None:
    r = assistant.ask(text)
    answer = str(r.answer_markdown)
    assert r.intent == "knowledge"
    assert answer.startswith(lines[0]) and lines[1] in answer
