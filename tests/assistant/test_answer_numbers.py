"""What the answer says about the numbers it was given (issue 31, item 2): a figure out of range is said with the
range accepted, never dropped without a word; a price per card-hour costs the plan at that price and says so; a
price asked is not a deadline."""

from __future__ import annotations

from typing import Any

import pytest

from tests.answers import plan_of


def _note(text: str) -> str:
    """The notes: quoted right after the answer's first line (the first line answers the question)."""
    lines = text.splitlines()
    assert not lines[0].startswith(">"), "the first line is the answer, not a note"
    return "\n".join(ln for ln in lines[1:] if ln.strip()).strip()


def test_a_price_per_card_hour_costs_the_plan_and_is_said(assistant: Any) -> None:
    # was a monthly budget of ¥8 and a plan at the catalog's prices
    r = assistant.ask("腾讯云的A100每卡每小时只要8元，Qwen2-7B LoRA 10万条")
    assert _note(r.answer_markdown).startswith("> 按你给的 ¥8/卡时 计算 腾讯云 A100-40G-SXM 的费用")
    assert r.workload["budget_cny"] is None
    pick = plan_of(r)["candidates"][0]
    assert pick["gpu"] == "A100-40G-SXM"
    assert pick["price"]["confidence"] == "user" and pick["price"]["price_cny"] == 8.0 * pick["gpu_count"]
    assert pick["total_cost_cny"] == pytest.approx(8.0 * pick["total_gpus"] * pick["training_hours"], rel=0.01)


def test_a_price_for_a_gpu_the_cloud_does_not_sell_says_so(assistant: Any) -> None:
    # '京东云的A800每卡每小时只要8元': JD Cloud's catalog has no A800; never a budget of ¥8
    r = assistant.ask("京东云的A800每卡每小时只要8元，Qwen2-7B LoRA 10万条")
    assert _note(r.answer_markdown).startswith("> 你给的 ¥8/卡时 是 京东云 A800-80G-SXM 的价格，但目录里没有在售的")
    assert "下面的费用按目录价计算" in r.answer_markdown
    assert r.workload["budget_cny"] is None


def test_the_price_is_for_this_turn_only(assistant: Any) -> None:
    first = assistant.ask("腾讯云的A100每卡每小时只要8元，Qwen2-7B LoRA 10万条")
    again = assistant.ask("那20万条呢", first.session_id)
    pick = plan_of(again)["candidates"][0]
    assert pick["price"] is None or pick["price"]["confidence"] != "user"
    assert "按你给的" not in again.answer_markdown


def test_a_price_asked_is_not_a_deadline(assistant: Any) -> None:
    r = assistant.ask("H100多少钱一小时")  # was a one-hour deadline
    assert r.intent == "catalog" and "deadline_hours" not in r.slots


@pytest.mark.parametrize(("question", "said"), [
    ("用0张A100跑Qwen2-7B LoRA 10万条", "> “0张”低于可规划范围（至少 1 张），已忽略。"),
    ("1000000张H800训练Qwen2-7B LoRA 10万条", "> “1000000张”超出可规划范围（最多 64 节点，512 张），已忽略。"),
    ("Qwen2-7B LoRA 10万条 1e-300 epochs", "> “1e-300 epochs”低于可规划范围（至少 0.01 轮），已忽略。"),
    ("Qwen2-7B LoRA 训练1e-300 tokens", "> “1e-300 tokens”低于可规划范围（至少 1 token），已忽略。"),
    ("Qwen2-7B LoRA 1e-300 tokens", "> '1e-300 tokens' is below what can be planned (at least 1 token); ignored."),
    ("LoRA Qwen2-7B on 10^6 GPUs, 100k samples",
     "> '10^6 GPUs' is beyond what can be planned (at most 64 nodes, 512 GPUs); ignored."),
    ("Qwen2-7B LoRA 10万条，预算-500元", "> “-500”是负数，已忽略"),
])
def test_a_figure_out_of_range_is_said_with_the_range(assistant: Any, question: str, said: str) -> None:
    r = assistant.ask(question)
    assert _note(r.answer_markdown).startswith(said), r.answer_markdown[:300]
    assert "¥0.00" not in r.answer_markdown and "0.0 小时" not in r.answer_markdown
