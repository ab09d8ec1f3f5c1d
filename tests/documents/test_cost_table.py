"""The per-candidate cost table: one row per candidate, with the price's source, date and confidence."""

from __future__ import annotations

from typing import Any

import pytest

from service.documents import fmt
from service.documents.cost_table import render_cost_table
from service.labels import price_when


@pytest.mark.parametrize("lang, header", [("zh", "价格来源"), ("en", "Price source")])
def test_one_row_per_candidate(plans: dict[str, Any], lang: str, header: str) -> None:
    p = plans["t4_qlora"]
    lines = render_cost_table(p, lang).splitlines()  # type: ignore[arg-type]
    assert header in lines[0]
    priced = [c for c in p["candidates"] if not c["price_on_request"]]  # on-request ones are set aside, with a note
    assert len(lines) == 2 + len(priced)
    for line, c in zip(lines[2:], priced, strict=True):
        assert c["instance_type"] in line and fmt.cny(c["total_cost_cny"]) in line
        shown = price_when(c["price"], lang)  # the content's age and when it was read (issue 39)
        assert shown in line and fmt.num(c["training_hours"]) in line


def test_limit_keeps_the_top_rows(plans: dict[str, Any]) -> None:
    p = plans["qwen_lora"]
    lines = render_cost_table(p, "en", limit=3).splitlines()
    assert len(lines) == 5 and p["candidates"][0]["instance_type"] in lines[2]


def test_pipes_in_sources_do_not_break_the_table(plans: dict[str, Any]) -> None:
    p = plans["qwen_lora"]
    c = p["candidates"][0]
    odd = {**p, "candidates": [{**c, "price": {**c["price"], "source": "https://example.com/a|b"}}]}
    row = render_cost_table(odd, "en").splitlines()[2]
    assert "example.com/a\\|b" in row and row.count(" | ") == 11
