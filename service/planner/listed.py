"""The options a training answer lists beside each cloud's pick, priced: each cloud's pick, the cheaper and faster
alternatives, the fastest within the budget and the cheapest within the deadline. What the answer says about a
pick beaten on both time and cost (service/questions/pick_why.py) and the invariant that checks it
(service/checks/invariants.py) read the same list."""

from __future__ import annotations

from dataclasses import dataclass

from service.planner.training_types import TrainingPlan


@dataclass(frozen=True)
class Listed:
    """One option the answer lists, priced: its name, cloud, hours and cost of the job."""

    name: str
    cloud: str
    hours: float
    cost_cny: float

    def beats(self, other: Listed) -> bool:
        return self.hours < other.hours and self.cost_cny < other.cost_cny


def listed(plan: TrainingPlan) -> tuple[list[Listed], list[Listed]]:
    """(each cloud's pick, every other option listed beside them), the priced ones."""
    by_type = {c.instance_type: c for c in plan.candidates}

    def row(name: str) -> Listed | None:
        c = by_type.get(name)
        if c is None or c.total_cost_cny is None:
            return None
        return Listed(name, str(c.cloud), float(c.training_hours), float(c.total_cost_cny))

    picks = [x for x in map(row, plan.picks.values()) if x is not None]
    others = [x for x in map(row, plan.alternatives.values()) if x is not None]
    for ref in (plan.fastest_within_budget, plan.cheapest_within_deadline):
        if ref is not None and ref.cost_cny is not None:
            others.append(Listed(ref.instance_type, str(ref.cloud), float(ref.hours), float(ref.cost_cny)))
    return picks, others
