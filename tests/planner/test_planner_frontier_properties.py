"""Properties of the cluster frontier: more GPUs are never slower unless the point is marked, and a
point whose hours meet the deadline says so; the same for the ranked candidates and every sized option."""

from __future__ import annotations

from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.planner.plan import plan
from service.planner.report import plan_to_dict
from service.workload import Workload

TODAY = date(2026, 10, 1)

workloads = st.fixed_dictionaries({
    "model": st.sampled_from(["Qwen2-7B", "Llama-3-8B", "Qwen2.5-14B", "Qwen2-72B", "Qwen3-30B-A3B"]),
    "method": st.sampled_from(["full", "lora", "qlora"]),
    "tokens": st.sampled_from([1e8, 1e9, 5e9]),
    "seq_len": st.sampled_from([1024, 4096, 8192]),
    "deadline_hours": st.sampled_from([2.0, 12.0, 72.0]),
    "objective": st.sampled_from(["cheapest", "fastest", "balanced"]),
})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=workloads)
def test_frontier_is_monotone_and_deadline_verdicts_hold(catalog, fields: dict[str, object]) -> None:
    r = plan(Workload(**fields), catalog, today=TODAY)  # type: ignore[arg-type]
    deadline = float(fields["deadline_hours"])  # type: ignore[arg-type]
    for c in (*r.candidates, *r.options):
        assert c.meets_deadline is (c.hours <= deadline)
    for family, points in r.frontier.items():
        gpus = [p.total_gpus for p in points]
        assert gpus == sorted(set(gpus)), family
        hours = [p.hours for p in points if not p.slower_than_fewer_gpus]
        assert all(b < a for a, b in zip(hours, hours[1:], strict=False)), (family, hours)
        for i, p in enumerate(points):  # a marked point really is no faster than a smaller cluster
            assert p.slower_than_fewer_gpus is any(q.hours <= p.hours for q in points[:i])
        for p in points:
            assert p.meets_deadline is (p.hours <= deadline)
    d = plan_to_dict(r)
    best = d["cheapest_within_deadline"]
    if best is not None:
        assert best["hours"] <= deadline + 0.005
    if r.candidates and fields["objective"] == "fastest":
        fastest_ok = min((c.hours for c in r.options if c.ok), default=None)
        if fastest_ok is not None and r.candidates[0].ok:
            assert r.candidates[0].hours == fastest_ok
