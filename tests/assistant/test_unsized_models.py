"""A release the catalog knows but cannot size (issue 39: DeepSeek-V4's compressed attention, Gemma-4's separate global
head dims) is named and refused with the reason in the chat answer; before, 'gemma-4-31B-it' was sized as a generic 31B
decoder and 'DeepSeek-V4-Flash' was read as 'DeepSeek-V'."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(("question", "row"), [("DeepSeek-V4-Flash 推理需要多少显存", "DeepSeek-V4-Flash"),
                                               ("部署 gemma-4-31B-it 推理要几张卡", "Gemma-4-31B"),
                                               ("How many GPUs to serve DeepSeek-V4?", "DeepSeek-V4")])
def test_unsized_release_is_named_and_not_sized(assistant: Any, question: str, row: str) -> None:
    text = assistant.ask(question).answer_markdown
    said = "已知但未收录尺寸" if "推理" in question else "not sized"  # a Chinese question is answered in Chinese
    assert row in text and said in text
    assert "GiB" not in text and "张" not in text.split(said)[0]  # no memory figure, no card count


def test_a_release_added_from_its_config_is_sized_as_itself(assistant: Any) -> None:
    text = assistant.ask("Hunyuan-Large 推理要多少显存").answer_markdown
    assert "Hunyuan-A52B" in text and "GiB" in text
