"""Run history (evals/reports/history.jsonl, one JSON object per run) and the comparison with the previous run
against the same target: scenarios that passed before and fail now, and metrics that dropped."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.evals.metrics import QUALITY
from service.evals.scoring import ScenarioResult

SLOWER_FACTOR = 1.5  # p95 latency this many times the previous run's (and 0.5 s more) is listed


@dataclass(frozen=True)
class Comparison:
    previous_run: str  # run id of the run compared with; "" when there is none
    previous_at: str = ""
    newly_failing: list[str] = field(default_factory=list)
    newly_passing: list[str] = field(default_factory=list)
    metric_drops: list[tuple[str, float, float]] = field(default_factory=list)  # name, before, after
    slower: tuple[float, float] | None = None  # p95 before, after

    @property
    def regressed(self) -> bool:
        return bool(self.newly_failing or self.metric_drops)

    def to_dict(self) -> dict[str, Any]:
        return {
            "previous_run": self.previous_run or None, "previous_at": self.previous_at or None,
            "newly_failing": self.newly_failing, "newly_passing": self.newly_passing,
            "metric_drops": [{"metric": m, "before": b, "after": a} for m, b, a in self.metric_drops],
            "slower_p95_s": list(self.slower) if self.slower else None, "regressed": self.regressed,
        }


def entry(run_id: str, timestamp: str, target: str, metrics: dict[str, Any],
          results: list[ScenarioResult]) -> dict[str, Any]:
    return {
        "run_id": run_id, "timestamp": timestamp, "target": target, "n_scenarios": len(results),
        "metrics": {k: v for k, v in metrics.items() if k not in ("by_lang", "by_intent", "n_applicable")},
        "passed": sorted(r.id for r in results if r.passed),
        "failed": sorted(r.id for r in results if not r.passed),
    }


def read(path: Path) -> list[dict[str, Any]]:
    """Every readable line of the history; a damaged line is skipped, not fatal."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "metrics" in row:
            out.append(row)
    return out


def append(path: Path, row: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def compare(history: list[dict[str, Any]], current: dict[str, Any]) -> Comparison:
    """`current` (an `entry`) against the latest earlier run on the same target. Scenarios only one of the runs
    asked (a --limit run) are not compared, and metrics only when both runs asked the same scenarios."""
    previous = next((h for h in reversed(history) if h.get("target") == current["target"]), None)
    if previous is None:
        return Comparison("")
    before_pass, before_fail = set(previous.get("passed", [])), set(previous.get("failed", []))
    now_pass, now_fail = set(current["passed"]), set(current["failed"])
    drops = []
    same_set = before_pass | before_fail == now_pass | now_fail  # metrics compare only over the same scenarios
    for name in QUALITY if same_set else ():
        b, a = previous["metrics"].get(name), current["metrics"].get(name)
        if isinstance(b, int | float) and isinstance(a, int | float) and a < b - 1e-9:
            drops.append((name, float(b), float(a)))
    p_before, p_now = previous["metrics"].get("latency_p95_s"), current["metrics"].get("latency_p95_s")
    slower = None
    if isinstance(p_before, int | float) and isinstance(p_now, int | float) and p_now > max(
            SLOWER_FACTOR * p_before, p_before + 0.5):
        slower = (float(p_before), float(p_now))
    return Comparison(str(previous.get("run_id", "")), str(previous.get("timestamp", "")),
                      sorted(before_pass & now_fail), sorted(before_fail & now_pass), drops, slower)
