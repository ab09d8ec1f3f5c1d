"""A job of a few hours on monthly billing: the cost section says a subscription does not pay (issue 23), instead of
quoting a month's price, or several, as "本任务合计"."""

from __future__ import annotations

import re
from datetime import date

import pytest

from service.assistant.prompts import phrases
from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.planner.training_types import checked_training_plan
from service.questions.plan_text import render_plan
from service.settings import get_settings
from service.workload import Workload


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_few_hours_on_monthly_billing_is_not_worth_it(catalog, lang: str) -> None:
    d = plan_to_dict(plan(Workload(model="Qwen2-7B", samples=100_000, budget_cny=3000), catalog,
                          today=date(2026, 9, 15)))
    pick = next(c for c in d["candidates"] if c["instance_type"] == d["picks"]["tencent"])
    monthly, on_demand = pick["cost_cny"]["monthly"], pick["cost_cny"]["on_demand"]
    assert pick["training_hours"] < 24 and monthly["total_cny"] > 10 * on_demand["total_cny"]  # the case at hand
    text = render_plan(checked_training_plan(d), lang, phrases(get_settings().prompts_dir, lang), [])
    cost = text.split("###")[[i for i, s in enumerate(text.split("###")) if s.strip().startswith(("费用", "Cost"))][0]]
    line = next(x for x in cost.splitlines() if x.startswith(("- 包年包月", "- monthly")))
    assert f"{monthly['total_cny']:,.0f}" not in line.replace(f"{monthly['price']['price_cny']:,.2f}", "")
    if lang == "zh":
        assert "包月不划算" in line and f"按量计费合计 ¥{on_demand['total_cny']:,.0f}" in line
        assert "本任务合计" not in line
    else:
        assert "does not pay" in line and f"on-demand costs ¥{on_demand['total_cny']:,.0f}" in line
    # the other modes still quote their total for this job
    assert re.search(r"按量计费：.*本任务合计|on-demand: .*this job", cost)


def test_a_month_long_job_keeps_the_monthly_total(catalog) -> None:
    d = plan_to_dict(plan(Workload(model="Qwen2-7B", method="full", tokens=2e10, epochs=3, billing="monthly"),
                          catalog, today=date(2026, 9, 15)))
    text = render_plan(checked_training_plan(d), "zh", phrases(get_settings().prompts_dir, "zh"), [])
    lines = [x for x in text.splitlines() if x.startswith("- 包年包月")]
    cheaper_monthly = [x for x in lines if "本任务合计" in x]
    assert lines and (cheaper_monthly or all("包月不划算" in x for x in lines))
