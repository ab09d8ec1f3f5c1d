"""Aggregation (rates over applicable scenarios, percentiles) and the run history's regression list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.evals import history
from service.evals.checks import NA, Check, SlotResult
from service.evals.metrics import aggregate, percentile
from service.evals.scoring import ScenarioResult


def _result(sid: str, slot_ok: bool = True, config: bool | None = True, lat: float = 0.1) -> ScenarioResult:
    checks = {"config_match": Check(config), "budget_verdict": NA}
    return ScenarioResult(sid, "en", (), ("q",), (lat,), "offline", "", (SlotResult("model", "a", "a", slot_ok),),
                          checks, None, None)


def test_rates_count_only_the_scenarios_a_check_applies_to() -> None:
    m = aggregate([_result("a"), _result("b", config=False), _result("c", slot_ok=False, config=None)])
    assert m["slot_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["config_match"] == 0.5  # c has no ground truth plan
    assert m["budget_verdict"] is None  # applies to none
    assert m["n_applicable"]["config_match"] == 2
    assert m["pass_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["slot_accuracy_by_field"] == {"model": pytest.approx(2 / 3, abs=1e-4)}


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),  # numpy's linear method
        ([1.0, 2.0, 3.0, 4.0], 95, 3.85),
        ([5.0], 95, 5.0),
        ([], 50, None),
    ],
)
def test_percentile(values: list[float], q: float, expected: float | None) -> None:
    assert percentile(values, q) == expected


def _entry(run: str, passed: list[str], failed: list[str], **metrics: float) -> dict[str, object]:
    return {"run_id": run, "timestamp": run, "target": "in-process:offline", "n_scenarios": len(passed + failed),
            "metrics": {"slot_accuracy": 1.0, "config_match": 1.0, "latency_p95_s": 0.1, **metrics},
            "passed": passed, "failed": failed}


def test_regressions_against_the_previous_run_on_the_same_target() -> None:
    before = _entry("r1", ["a", "b"], ["c"])
    other_target = {**_entry("r2", ["a"], ["b", "c"], slot_accuracy=0.1), "target": "http://127.0.0.1:8000"}
    now = _entry("r3", ["a", "c"], ["b"], config_match=0.9, latency_p95_s=2.0)
    cmp = history.compare([before, other_target], now)
    assert cmp.previous_run == "r1"
    assert cmp.newly_failing == ["b"]
    assert cmp.newly_passing == ["c"]
    assert cmp.metric_drops == [("config_match", 1.0, 0.9)]
    assert cmp.slower == (0.1, 2.0)
    assert cmp.regressed


def test_a_limited_run_lists_scenario_regressions_but_no_metric_drops() -> None:
    before = _entry("r1", ["a", "b", "c"], [])
    now = _entry("r2", ["a"], ["b"], slot_accuracy=0.5)  # --limit 2
    cmp = history.compare([before], now)
    assert cmp.newly_failing == ["b"]
    assert cmp.metric_drops == []


def test_no_previous_run() -> None:
    cmp = history.compare([], _entry("r1", ["a"], []))
    assert cmp.previous_run == ""
    assert not cmp.regressed


def test_history_file_round_trip_skips_damaged_lines(tmp_path: Path) -> None:
    path = tmp_path / "reports" / "history.jsonl"
    history.append(path, _entry("r1", ["a"], []))
    with path.open("a", encoding="utf-8") as f:
        f.write("{not json\n" + json.dumps({"no": "metrics"}) + "\n")
    history.append(path, _entry("r2", [], ["a"]))
    rows = history.read(path)
    assert [r["run_id"] for r in rows] == ["r1", "r2"]
    assert history.read(tmp_path / "missing.jsonl") == []
