"""A price's real age in the chat answer (issue 39): asked for the price of an instance whose only official price is on
a list page of about 2021 (Tencent GN7, GT4) or 2018 (JD p.n1v100), the answer says the page's age and that the price
may have changed (it said "页面未注明日期 · 抓取于 2026-12-01" and fired no warning: 0 of 3)."""

from __future__ import annotations

from typing import Any

import pytest

MAY_HAVE_CHANGED = {"zh": "可能已调整，请以官网价格计算器为准", "en": "it may have changed, check the cloud's official price calculator"}
ASKED = [
    ("GN7.2XLARGE32 按量多少钱一小时", "zh", "刊例价来自约 2021 年的价格页"),
    ("GT4.4XLARGE96 多少钱", "zh", "刊例价来自约 2021 年的价格页"),
    ("京东云 p.n1v100.2xlarge 价格", "zh", "刊例价来自约 2018 年的价格页"),
    ("How much is GN7.2XLARGE32 per hour?", "en", "list price from a ~2021 price page"),
    ("What does GT4.4XLARGE96 cost on demand?", "en", "list price from a ~2021 price page"),
    ("How much is JD Cloud p.n1v100.2xlarge?", "en", "list price from a ~2018 price page"),
]


@pytest.mark.parametrize(("question", "lang", "age"), ASKED)
def test_the_price_says_its_age_and_that_it_may_have_changed(assistant: Any, question: str, lang: str,
                                                              age: str) -> None:
    text = assistant.ask(question).answer_markdown
    first = text.strip().splitlines()[0]
    assert age in first and MAY_HAVE_CHANGED[lang] in first, first  # on the line with the price, not a footnote
    assert "页面未注明日期" not in first and "page undated" not in first


def test_a_newer_dated_capture_is_shown_beside_the_list_price(assistant: Any) -> None:
    # GT4.4XLARGE96: list ¥28.64 (~2021 page) and a 2026-09-15 calculator capture at the promotional ¥26.97
    first = assistant.ask("GT4.4XLARGE96 按量多少钱").answer_markdown.strip().splitlines()[0]
    assert "¥28.64/小时" in first and "较新：2026-09-15" in first and "¥26.97/小时（官网优惠价）" in first


@pytest.mark.parametrize(("question", "family"), [("PNV5是什么卡", "PNV5"), ("What is Tencent PNV5i?", "PNV5i"),
                                                  ("腾讯云 GC49 是什么机型", "GC49")])
def test_a_family_known_by_name_only_says_so(assistant: Any, question: str, family: str) -> None:
    first = assistant.ask(question).answer_markdown.strip().splitlines()[0]
    assert first.startswith(f"{family}") and ("未经证实" in first or "unverified" in first)
    assert "https://www.tencentcloud.com/document/product/457/54485" in assistant.ask(question).answer_markdown
