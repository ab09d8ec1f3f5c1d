"""No surface shows a made-up price date: an undated source page is 'page undated · captured <date>' in the answer,
the request document and the MCP summary (the stand-in 2020-01-01 was shown on 133 prices)."""

from __future__ import annotations

from typing import Any

from tests.answers import plan_of

GUIDE = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


def test_answers_and_documents_show_honest_dates(assistant: Any) -> None:
    r = assistant.ask(GUIDE + "，顺便生成资源申请说明")
    assert "2020-01-01" not in r.answer_markdown and "2,526" not in r.answer_markdown
    doc = r.documents.get("request_document") or ""
    assert doc and "2020-01-01" not in doc
    undated = [c for c in plan_of(r)["candidates"] if c["price"] and not c["price"]["as_of"]]
    assert undated, "the guide workload's picks include an undated list price"
    # an undated list page says its content's age and when it was read (issue 39), never a made-up date
    assert "刊例价来自约 2021 年的价格页，可能已调整，请以官网价格计算器为准 · 抓取于" in r.answer_markdown + doc
    en = assistant.ask("LoRA fine-tune Qwen2-7B on 100k samples, only A100, budget ¥3000 a month")  # GT4: undated
    assert "2020-01-01" not in en.answer_markdown and "list price from a ~2021 price page" in en.answer_markdown


def test_the_mcp_summary_names_the_capture_date(assistant: Any) -> None:
    from service.mcp.tools import tools_by_name
    from service.questions.base import Context

    spec = tools_by_name()["plan"]
    result = spec.call(Context.of(assistant.catalog), {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000})
    text = spec.summary(result)
    assert "2020-01-01" not in text and "(price " in text
