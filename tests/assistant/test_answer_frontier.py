"""The answer names the frontier's picks: 'cheapest within your deadline' and 'fastest within your budget'."""

from __future__ import annotations

from datetime import date

from service.assistant.prompts import phrases
from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.planner.training_types import checked_training_plan
from service.questions.plan_text import render_plan
from service.settings import get_settings
from service.workload import Workload


def test_answer_shows_cheapest_within_deadline_and_fastest_within_budget(catalog) -> None:
    w = Workload(model="llama-3-8b", method="full", tokens=1e9, epochs=1, seq_len=4096, deadline_hours=6,
                 budget_cny=20000, budget_period="total")
    d = plan_to_dict(plan(w, catalog, today=date(2026, 10, 1)))
    prompts = get_settings().prompts_dir
    en = render_plan(checked_training_plan(d), "en", phrases(prompts, "en"), [])
    best = d["cheapest_within_deadline"]
    assert best is not None and best["hours"] <= 6
    assert f"Cheapest within your deadline: {best['instance_type']} × {best['nodes']} node(s)" in en
    assert "Fastest within your budget:" in en
    zh = render_plan(checked_training_plan(d), "zh", phrases(prompts, "zh"), [])
    assert "满足工期的最便宜方案" in zh and "预算内最快" in zh
