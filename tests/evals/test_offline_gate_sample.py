"""The offline eval's gate on a small fixed sample, in `make unit` (the whole suite is the slow tier:
tests/evals/test_offline_eval.py). The sample is stratified by question type from evals/scenarios.yaml in file
order: the first and the middle scenario of each type, and the plan's quarters, so a change that breaks how the
reader fills the slots of one type, or how the planner picks, fails in the fast tier.

Below the gate, the message lists each failing scenario with the slot the reader got wrong and what it read;
fix the reader (service/reader/) or the planner, not the gold, the sample or the gate."""

from __future__ import annotations

import time

from service.catalog.loader import Catalog
from service.evals.dataset import Scenario, load_scenarios
from service.evals.runner import RunOptions, run_eval
from service.evals.targets import AssistantTarget
from service.settings import Settings
from tests.evals.test_offline_eval import GATE, _diagnosis


def sample(scenarios: list[Scenario]) -> list[Scenario]:
    by_type: dict[str, list[Scenario]] = {}
    for s in scenarios:
        by_type.setdefault(s.expected_intent, []).append(s)
    picked: list[Scenario] = []
    for kind, rows in by_type.items():
        at = (0, len(rows) // 4, len(rows) // 2, 3 * len(rows) // 4) if kind == "plan" else (0, len(rows) // 2)
        picked += [rows[i] for i in sorted(set(at))]
    return picked


def test_a_fixed_sample_meets_the_offline_gate(eval_settings: Settings, eval_target: AssistantTarget,
                                               catalog: Catalog) -> None:
    chosen = sample(load_scenarios())
    assert len(chosen) >= 14 and {s.expected_intent for s in chosen} >= {"plan", "knowledge", "feasibility",
                                                                           "min_gpus", "serving", "compare", "savings"}
    start = time.perf_counter()
    run = run_eval(RunOptions(retrieval=False, history_file=None, anchors_file=None,
                              only=tuple(s.id for s in chosen)), eval_settings, catalog=catalog, target=eval_target)
    m = run.metrics
    print(f"\noffline eval sample: {len(run.results)} scenarios in {time.perf_counter() - start:.1f} s; "
          f"slot accuracy {m['slot_accuracy']}, config match {m['config_match']}")
    assert len(run.results) == len(chosen)
    assert m["n_errors"] == 0, _diagnosis(run)
    assert m["slot_accuracy"] >= GATE, _diagnosis(run)
    assert m["config_match"] >= GATE, _diagnosis(run)
    assert m["feasibility"] == 1.0, _diagnosis(run)
