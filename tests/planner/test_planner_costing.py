"""Costing by billing mode and the budget / deadline verdicts, on hand-made price rows."""

from __future__ import annotations

from datetime import date

import pytest

from service.catalog.schema import InstanceRow, PriceRow
from service.planner.costing import (
    HOURS_PER_MONTH,
    budget_verdict,
    choose_billing,
    cost_lines,
    deadline_verdict,
    price_notes,
)

TODAY = date(2026, 11, 30)


def _inst(name: str = "X.1") -> InstanceRow:
    return InstanceRow(cloud="tencent", family="X", instance_type=name, gpu="A10", gpu_count=1, gpu_memory_gib=24,
                       vcpus=16, memory_gib=64, sale_status="main", source="test", as_of=TODAY,
                       confidence="official")


def _price(billing: str, cny: float, **kw: object) -> PriceRow:
    unit = "month" if billing == "monthly" else "hour"
    fields: dict[str, object] = dict(instance_type="X.1", billing=billing, price_cny=cny, unit=unit, source="test",
                                     as_of=TODAY, confidence="official")
    fields.update(kw)
    return PriceRow(**fields)  # type: ignore[arg-type]


PRICES = (_price("on_demand", 10.0), _price("monthly", 3000.0), _price("spot", 4.0))


def test_on_demand_is_price_times_hours_times_nodes() -> None:
    # 50 h x ¥10/h x 2 nodes = ¥1,000; a month of it is the whole job (50 h < 730 h).
    line = cost_lines(_inst(), nodes=2, hours=50, prices=PRICES)["on_demand"]
    assert line.total_cny == pytest.approx(1000)
    assert line.monthly_cny == pytest.approx(1000)


def test_on_demand_month_caps_at_730_hours() -> None:
    # 1,000 h: total ¥10,000; one month of on-demand = 730 h x ¥10 = ¥7,300.
    line = cost_lines(_inst(), nodes=1, hours=1000, prices=PRICES)["on_demand"]
    assert line.total_cny == pytest.approx(10_000)
    assert line.monthly_cny == pytest.approx(HOURS_PER_MONTH * 10)


@pytest.mark.parametrize(
    ("hours", "months"),
    [
        (1, 1),  # any use bills a whole month
        (730, 1),  # exactly one month
        (731, 2),  # ceil(731 / 730)
        (2000, 3),  # ceil(2.74)
    ],
)
def test_monthly_bills_ceil_months(hours: float, months: int) -> None:
    line = cost_lines(_inst(), nodes=1, hours=hours, prices=PRICES)["monthly"]
    assert line.months == months
    assert line.total_cny == pytest.approx(3000 * months)
    assert line.monthly_cny == pytest.approx(3000)


def test_spot_adds_fifteen_percent_rerun() -> None:
    # 100 h x 1.15 x ¥4 = ¥460 (interruptions redo work).
    line = cost_lines(_inst(), nodes=1, hours=100, prices=PRICES)["spot"]
    assert line.total_cny == pytest.approx(460)


def test_missing_price_means_no_line() -> None:
    assert set(cost_lines(_inst(), 1, 10, (_price("monthly", 3000.0),))) == {"monthly"}
    assert cost_lines(_inst(), 1, 10, ()) == {}


def test_cheapest_mode_picked_when_none_asked_and_spot_never_by_default() -> None:
    # 100 h: on-demand ¥1,000 < monthly ¥3,000; spot ¥460 is cheaper still but is only taken when asked for.
    lines = cost_lines(_inst(), 1, 100, PRICES)
    line, notes = choose_billing(lines, None)
    assert line is not None and line.billing == "on_demand" and notes == []
    # 500 h: on-demand ¥5,000 > monthly ¥3,000.
    line, _ = choose_billing(cost_lines(_inst(), 1, 500, PRICES), None)
    assert line is not None and line.billing == "monthly"
    line, _ = choose_billing(lines, "spot")
    assert line is not None and line.billing == "spot"


def test_unavailable_billing_falls_back_with_a_note() -> None:
    lines = cost_lines(_inst(), 1, 100, (_price("on_demand", 10.0),))
    line, notes = choose_billing(lines, "monthly")
    assert line is not None and line.billing == "on_demand"
    assert [n.code for n in notes] == ["billing_unavailable"]


@pytest.mark.parametrize(
    ("hours", "budget", "period", "expected"),
    [
        # month = what a month of the chosen billing costs; total = the whole job.
        (100, 1000, "month", True),  # on-demand, one month = ¥1,000 (the whole job)
        (100, 999, "month", False),
        (1460, 7300, "month", True),  # 2 months of on-demand: ¥14,600 in all, ¥7,300 a month
        (1460, 7300, "total", False),  # ... but not ¥7,300 in total
        (1460, 14_600, "total", True),
        (100, None, "month", None),  # no budget, no verdict
    ],
)
def test_budget_verdict_on_demand(hours: float, budget: float | None, period: str, expected: bool | None) -> None:
    line = cost_lines(_inst(), 1, hours, PRICES)["on_demand"]
    assert budget_verdict(line, budget, period) is expected


def test_budget_verdict_monthly_billing() -> None:
    # 3 billed months at ¥3,000: ¥3,000 a month, ¥9,000 in total.
    line = cost_lines(_inst(), 1, 2000, PRICES)["monthly"]
    assert budget_verdict(line, 3000, "month") is True
    assert budget_verdict(line, 8999, "total") is False


@pytest.mark.parametrize(
    ("hours", "deadline", "expected"),
    [(10, 10, True), (10.01, 10, False), (5, 48, True), (5, None, None)],
)
def test_deadline_verdict(hours: float, deadline: float | None, expected: bool | None) -> None:
    assert deadline_verdict(hours, deadline) is expected


def test_price_notes_flag_age_estimates_and_spot() -> None:
    old = _price("spot", 4.0, as_of=date(2025, 1, 1), confidence="estimate", note="derived")
    line = cost_lines(_inst(), 1, 10, (old,))["spot"]
    codes = {n.code for n in price_notes(line, "tencent", TODAY, max_age_days=180)}
    assert codes == {"price_old", "price_estimate", "spot_interruption"}
    fresh = cost_lines(_inst(), 1, 10, PRICES)["on_demand"]
    assert price_notes(fresh, "tencent", TODAY, max_age_days=180) == []
