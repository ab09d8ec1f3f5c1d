"""Why a cloud's pick is listed beside another cloud's option that is both faster and cheaper (issue 40 item 6):
the plan's table shows each cloud's best, and JD Cloud's best is often slower and dearer than Tencent Cloud's.
The line says so, with both figures, so a reader does not take it for a ranking mistake.

    other_cloud_lines(plan, ph) -> ["京东云 p.n1v100.2xlarge 比腾讯云 GT4.8XLARGE192 更慢（4.1 对 0.6 小时）…"]

The options weighed are those the answer lists: each cloud's pick, the cheaper and faster alternatives, the fastest
within the budget and the cheapest within the deadline (all priced). A pick beaten by an option of its own cloud is
not said here: that is a ranking rule, and the plan's pick_reasons says it (service/planner/why.py).
"""

from __future__ import annotations

from service.planner.listed import listed
from service.planner.training_types import TrainingPlan
from service.questions.phrases import Phrases


def other_cloud_lines(plan: TrainingPlan, ph: Phrases) -> list[str]:
    """One line per pick that another cloud's listed option beats on both time and cost (another cloud's pick
    first)."""
    picks, others = listed(plan)
    out: list[str] = []
    for pick in picks:
        rivals = [x for x in [*picks, *others] if x.cloud != pick.cloud and x.beats(pick)]
        if not rivals:
            continue
        other = rivals[0]
        out.append(ph.text(
            "pick_other_cloud", cloud=ph.name("cloud_names", pick.cloud), instance=pick.name, hours=_h(pick.hours),
            cost=f"{pick.cost_cny:,.0f}", other_cloud=ph.name("cloud_names", other.cloud), other=other.name,
            other_hours=_h(other.hours), other_cost=f"{other.cost_cny:,.0f}"))
    return out


def _h(x: float) -> str:
    return f"{x:,.1f}" if x >= 0.1 else f"{x:.2f}"
