"""Pure Block Kit builders: every payload parses and validates with slack_sdk's block models, within limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from service.assistant.types import AskResult, Citation
from service.slack.blocks import (
    DOCUMENT_ACTIONS,
    LAUNCH_BUNDLE_ACTION,
    MAX_BLOCKS,
    MAX_TEXT,
    REQUEST_DOC_ACTION,
    answer_blocks,
    document_messages,
    error_blocks,
    fallback_text,
    parse_action_value,
    table_rows,
)
from tests.answers import plan_answer
from tests.slack.fakes import ANSWER_EN, ANSWER_ZH, PLAN, candidate


def result(answer: str = ANSWER_ZH, lang: str = "zh", plan: dict[str, Any] | None = PLAN, **extra: Any) -> AskResult:
    return AskResult(session_id="s1", answer_markdown=answer, language=lang, backend="fake",
                     answer=plan_answer(plan) if plan is not None else None, **extra)


def validate(blocks: list[dict[str, Any]]) -> None:
    assert 0 < len(blocks) <= MAX_BLOCKS
    for b in blocks:
        parsed = Block.parse(b)
        assert parsed is not None and parsed.type == b["type"], b
        parsed.validate_json()
        for text in _texts(b):
            assert len(text) <= MAX_TEXT


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["text"]] if isinstance(node.get("text"), str) else []
        return own + [t for v in node.values() for t in _texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


def types(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["type"] for b in blocks]


def test_answer_layout_zh() -> None:
    blocks = answer_blocks(result())
    validate(blocks)
    assert types(blocks) == ["header", "section", "table", "section", "context", "actions"]
    assert blocks[0]["text"]["text"] == "GPU 配置推荐: Qwen2-7B · LoRA"
    picks = [f["text"] for f in blocks[1]["fields"]]  # the top pick per cloud, in the plan's order
    assert "腾讯云" in picks[0] and "GT4.4XLARGE96" in picks[0] and "¥321" in picks[0] and "✅" in picks[0]
    assert "京东云" in picks[1] and "p.n1v100.2xlarge" in picks[1] and "❌" in picks[1]


def test_table_block_lists_picks_first_then_the_rest() -> None:
    table = answer_blocks(result())[2]
    rows = [[cell["text"] for cell in row] for row in table["rows"]]
    assert rows[0][:3] == ["云", "实例", "GPU"]
    assert [r[1] for r in rows[1:]] == ["★ GT4.4XLARGE96", "★ p.n1v100.2xlarge", "GT4.41XLARGE948"]
    assert rows[3][2] == "8 × A100-40G-SXM" and rows[1][6] == "¥321 按量计费"
    assert len(table["column_settings"]) == len(rows[0])


def test_table_rows_are_capped() -> None:
    many = {**PLAN, "candidates": [candidate("tencent", f"T{i}", "A10", 1, 1.0, 10.0) for i in range(30)],
            "picks": {"tencent": "T0"}}
    assert len(table_rows(many, "en")) == 9  # header + 8


def test_without_table_block_the_table_is_preformatted_text() -> None:
    blocks = answer_blocks(result(), native_table=False)
    validate(blocks)
    assert "table" not in types(blocks)
    assert blocks[2]["text"]["text"].startswith("```") and "GT4.41XLARGE948" in blocks[2]["text"]["text"]


def test_answer_text_is_mrkdwn_without_the_duplicate_table() -> None:
    body = answer_blocks(result())[3]["text"]["text"]
    assert "*30.12 GiB*" in body and "**" not in body
    assert "|---|" not in body and "| 腾讯云 |" not in body  # the candidates table already shows it


def test_english_answer() -> None:
    blocks = answer_blocks(result(ANSWER_EN, "en"))
    assert blocks[0]["text"]["text"].startswith("GPU recommendation")
    assert "Tencent Cloud" in blocks[1]["fields"][0]["text"]
    assert blocks[2]["rows"][0][0]["text"] == "Cloud"


def test_warnings_and_sources_are_context_blocks() -> None:
    cites = [Citation(id="a", title="LoRA 显存", source="guide/04.zh.md"),
             Citation(id="b", title="GPU <types> & more", source="x", url="https://cloud.tencent.com/doc")]
    blocks = answer_blocks(result(citations=cites))
    validate(blocks)
    warnings, sources = [b for b in blocks if b["type"] == "context"]
    assert warnings["elements"][0]["text"] == "⚠️ 价格来自第三方采集，请确认。"  # message_zh for a zh answer
    texts = [e["text"] for e in sources["elements"]]
    assert "来源" in texts[0]
    assert "📄 LoRA 显存 · `guide/04.zh.md`" in texts  # no URL: title and source
    assert "📄 <https://cloud.tencent.com/doc|GPU &lt;types&gt; &amp; more>" in texts  # escaped link text


def test_buttons_carry_the_session_and_language() -> None:
    actions = answer_blocks(result(lang="en", answer=ANSWER_EN))[-1]
    assert [e["action_id"] for e in actions["elements"]] == [REQUEST_DOC_ACTION, LAUNCH_BUNDLE_ACTION]
    assert tuple(e["action_id"] for e in actions["elements"]) == DOCUMENT_ACTIONS
    assert parse_action_value(actions["elements"][0]["value"]) == ("s1", "en")


@pytest.mark.parametrize("value", ["", "not json", "[1]", '{"lang": "fr"}'])
def test_unreadable_button_value(value: str) -> None:
    session, lang = parse_action_value(value)
    assert session == "" and lang == "zh"


def test_plain_question_has_no_plan_blocks() -> None:
    blocks = answer_blocks(result("FP8 needs **Ada or Hopper**.", "en", plan=None))
    validate(blocks)
    assert types(blocks) == ["section"]


def test_infeasible_plan_shows_the_explanation_only() -> None:
    infeasible = {**PLAN, "candidates": [], "picks": {}}
    assert types(answer_blocks(result(plan=infeasible))) == ["section"]


def test_long_answer_is_cut_to_slack_limits() -> None:
    long = "\n\n".join(f"## Part {i}\n" + "x" * 2500 for i in range(80))  # ~200k characters
    blocks = answer_blocks(result(long, "en"))
    validate(blocks)
    assert len(blocks) == MAX_BLOCKS and blocks[-1]["type"] == "actions"  # the buttons survive the cut
    last_section = [b for b in blocks if b["type"] == "section"][-1]
    assert "cut here" in last_section["text"]["text"]
    assert len(fallback_text(result(long, "en"))) <= 3000


def test_huge_header_and_cells_are_truncated() -> None:
    plan = json.loads(json.dumps(PLAN))
    plan["model"]["name"] = "M" * 400
    plan["candidates"][0]["strategy"]["label"] = "S" * 900
    blocks = answer_blocks(result(plan=plan))
    validate(blocks)
    assert len(blocks[0]["text"]["text"]) == 150
    assert max(len(c["text"]) for row in blocks[2]["rows"] for c in row) <= 200


@pytest.mark.parametrize("lang, detail, expected", [
    ("zh", "", "请稍后重试"),                               # unexpected failure: generic, nothing internal
    ("en", "", "try again"),
    ("en", "Unknown model 'Qwen9'. Use 7B.", "Unknown model 'Qwen9'"),  # a user-facing error is shown as is
])
def test_error_blocks(lang: str, detail: str, expected: str) -> None:
    blocks = error_blocks(lang, detail)  # type: ignore[arg-type]
    validate(blocks)
    assert expected in blocks[0]["text"]["text"]


def test_document_messages_split_into_valid_messages() -> None:
    files = {"README.md": "```bash\nbash launch.sh\n```\n" + "line <x>\n" * 3000, "launch.sh": "echo hi\n"}
    messages = document_messages("Launch bundle", files)
    assert len(messages) >= 1
    for blocks in messages:
        validate(blocks)
    text = json.dumps(messages, ensure_ascii=False)
    assert "`launch.sh`" in text and "line &lt;x&gt;" in text
    inner = [b["text"]["text"] for m in messages for b in m[1:] if b is not m[0]]
    assert all(t.count("```") == 2 for t in inner)  # a fence in a file cannot break ours
