"""What is streamed (the answer without its table when a card follows, without its sources list, without page links)
and the feedback button values: pure functions."""

from __future__ import annotations

import pytest

from service.slack.feedback import Click, feedback_block, parse_feedback
from service.slack.mrkdwn import paragraphs, stream_markdown, without_sources

ANSWER = """## 推荐配置：Qwen2-7B

| 云 | 实例 |
|---|---|
| 腾讯云 | GT4.4XLARGE96 |

见 [LoRA 显存](/knowledge/guide/04.zh.md#lora)，报价 <https://buy.cloud.tencent.com/price/cvm/calculator>。

### 参考资料
- [GPU 规格](/knowledge/guide/03.zh.md#fp8)

需要的话，我可以生成《AI训练资源申请说明》。
<!-- gpu-advisor:workload {"model": "Qwen2-7B"} -->"""


def test_a_plan_answer_streams_without_its_table_sources_and_page_links() -> None:
    text = stream_markdown(ANSWER, drop_tables=True)
    assert text.startswith("## 推荐配置：Qwen2-7B") and "GT4.4XLARGE96" not in text
    assert "参考资料" not in text and "GPU 规格" not in text  # listed once, in the card's sources
    assert "见 LoRA 显存，" in text and "/knowledge/" not in text  # a page link is useless in Slack: its title stays
    assert "<https://buy.cloud.tencent.com/price/cvm/calculator>" in text  # a real link stays
    assert "生成《AI训练资源申请说明》" in text and "gpu-advisor:workload" not in text


def test_a_knowledge_answer_keeps_its_table_as_text() -> None:
    text = stream_markdown(ANSWER, drop_tables=False)
    assert "```\n云 | 实例\n腾讯云 | GT4.4XLARGE96\n```" in text


def test_without_sources_stops_at_the_next_heading_of_its_level() -> None:
    md = "## A\ntext\n### Sources\n- x\n#### sub\n- y\n### Next\nkept"
    assert without_sources(md) == "## A\ntext\n### Next\nkept"


def test_paragraphs_keep_code_blocks_whole_and_the_text_intact() -> None:
    text = "\n\n".join([f"para {i} " + "x" * 300 for i in range(6)] + ["```\n" + "a\n\n" * 200 + "```", "end"])
    pieces = paragraphs(text, 500)
    assert "".join(pieces) == text and len(pieces) >= 4
    assert all(p.count("```") % 2 == 0 for p in pieces)


def test_feedback_values_round_trip_and_foreign_ones_are_refused() -> None:
    block = feedback_block("abc123", 2, "en")
    element = block["elements"][0]
    assert parse_feedback(element["positive_button"]["value"]) == Click("abc123", 2, "up", "en")
    assert parse_feedback(element["negative_button"]["value"]) == Click("abc123", 2, "down", "en")
    assert element["positive_button"]["text"]["text"] == "Helpful"


@pytest.mark.parametrize("value", ["good-feedback", "", "[]", '{"s": "a", "t": 0, "r": "up"}',
                                   '{"s": "a", "t": true, "r": "up"}', '{"s": "a", "t": 1, "r": "meh"}'])
def test_values_we_did_not_write_are_refused(value: str) -> None:
    assert parse_feedback(value) is None
