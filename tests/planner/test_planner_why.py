"""Why a pick is neither the cheapest nor the fastest of its cloud (issue 23: the card says why)."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace
from typing import Any

import pytest

from service.planner.plan import TIGHT_PREMIUM, plan
from service.planner.report import plan_to_dict
from service.planner.why import _reason
from service.workload import Workload

TODAY = date(2026, 9, 15)


def option(name: str, cny: float, hours: float, confidence: str = "official", *, deadline: bool | None = None,
           budget: bool | None = None, tight: bool = False) -> Any:
    verdict = SimpleNamespace(status="tight" if tight else "fits", need_gib=22.0, capacity_gib=22.1)
    return SimpleNamespace(inst=SimpleNamespace(instance_type=name), total_cny=cny, hours=hours,
                           meets_deadline=deadline, within_budget=budget, verdict=lambda: verdict,
                           cost=SimpleNamespace(price=SimpleNamespace(confidence=confidence)))


def _with_estimate(catalog: Any, instance: str, cny_per_hour: float) -> Any:
    """The shipped catalog with one instance's on-demand price replaced by an estimate (the situation a test needs,
    set explicitly: the shipped prices move with their sources, issue 39)."""
    from dataclasses import replace

    from service.catalog.schema import PriceRow

    row = PriceRow(instance_type=instance, billing="on_demand", price_cny=cny_per_hour, unit="hour",
                   source="https://example.com/test", as_of=TODAY, confidence="estimate", anchor="a test figure")
    kept = tuple(p for p in catalog.prices if not (p.instance_type == instance and p.billing == "on_demand"))
    return replace(catalog, prices=kept + (row,))


def test_a_cheaper_option_tight_on_memory_is_named(catalog) -> None:
    # QLoRA: a half A10 slice (GNV4v.3XLARGE58, 12 GB) made the cheapest is within its estimate's expected
    # error of the card (the verdict's band, from the class's measured runs); the pick fits clear of it
    cat = _with_estimate(catalog, "GNV4v.3XLARGE58", 5.74)
    d = plan_to_dict(plan(Workload(model="Qwen2-7B", method="qlora", samples=100_000, budget_cny=3000), cat,
                          today=TODAY))
    reason = d["pick_reasons"]["tencent"]
    assert reason["instance_type"] == d["picks"]["tencent"] and reason["code"] == "cheaper_tight"
    by_type = {c["instance_type"]: c for c in d["candidates"]}
    cheaper, pick = by_type[reason["cheapest"]], by_type[reason["instance_type"]]
    assert cheaper["memory_verdict"]["status"] == "tight" and pick["memory_verdict"]["status"] == "fits"
    assert cheaper["total_cost_cny"] < pick["total_cost_cny"] <= cheaper["total_cost_cny"] * (1 + TIGHT_PREMIUM)
    assert "显存紧张" in reason["message_zh"] and f"¥{cheaper['total_cost_cny']:,.0f}" in reason["message_zh"]


def test_a_published_price_beats_an_estimate_within_three_percent(catalog) -> None:
    # an 8 x A100 HCC node estimated 2 % under GT4's list price: the published price ranks first, and says why.
    # QLoRA: a LoRA run there reads tight (9 % margin against the multi-GPU LoRA classes' ±19.8 % since a third
    # LoRA source was held out), which is the cheaper_tight reason, not this one
    cat = _with_estimate(catalog, "HCCPNV4h", 226.0)
    w = Workload(model="Qwen2-7B", method="qlora", samples=100_000, budget_cny=3000, gpu_include=["A100-40G-SXM"])
    d = plan_to_dict(plan(w, cat, today=TODAY))
    reason = d["pick_reasons"]["tencent"]
    assert reason["instance_type"] == d["picks"]["tencent"] and reason["code"] == "published_price"
    by_type = {c["instance_type"]: c for c in d["candidates"]}
    cheaper, pick = by_type[reason["cheapest"]], by_type[reason["instance_type"]]
    assert cheaper["total_cost_cny"] < pick["total_cost_cny"] and cheaper["price"]["confidence"] == "estimate"
    assert "估算" in reason["message_zh"] and "公开价格" in reason["message_zh"]
    assert f"¥{cheaper['total_cost_cny']:,.0f}" in reason["message_zh"]


@pytest.mark.parametrize(("pick", "cheapest", "fastest", "objective", "code"), [
    # the cheaper one misses the deadline
    (option("A", 500, 5, deadline=True), option("B", 400, 9, deadline=False), option("C", 900, 2), "cheapest",
     "cheaper_misses_deadline"),
    # the cheaper one is over the (monthly) budget
    (option("A", 500, 5, budget=True), option("B", 400, 900, budget=False), option("C", 900, 2), "cheapest",
     "cheaper_over_budget"),
    # a third-party capture within 3 % of a published price
    (option("A", 500, 5), option("B", 490, 6, "third_party"), option("C", 900, 2), "cheapest", "published_price"),
    # a cheaper option that is tight on memory, within TIGHT_PREMIUM
    (option("A", 500, 5), option("B", 450, 6, tight=True), option("C", 900, 2), "cheapest", "cheaper_tight"),
    # a cost tie within 0.5 %: the faster goes first, though a faster (dearer) one exists
    (option("A", 500, 5), option("B", 499, 8), option("C", 900, 2), "cheapest", "cost_tie"),
    # fastest objective: the faster one is over the budget
    (option("A", 500, 5, budget=True), option("B", 400, 9), option("C", 900, 2, budget=False), "fastest",
     "faster_over_budget"),
    (option("A", 500, 5), option("B", 400, 9), option("C", 900, 2), "balanced", "balanced"),
])
def test_each_ranking_rule_is_named(pick: Any, cheapest: Any, fastest: Any, objective: str, code: str) -> None:
    got, en, zh = _reason(pick, cheapest, fastest, objective)
    assert got == code
    assert "A" in en and "A" in zh and not any("a" <= ch <= "z" for ch in zh.replace("GiB", "").replace("B", "").replace("C", ""))
