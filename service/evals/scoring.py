"""One scenario scored: its conversation's final answer against the ground truth, every check with its detail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.catalog.loader import Catalog
from service.evals import checks
from service.evals.answers import plan_of
from service.evals.checks import NA, Check, SlotResult
from service.evals.dataset import Scenario
from service.evals.intent_checks import intent_check, verdict_check
from service.evals.serving_checks import serving_expectations
from service.evals.targets import Conversation
from service.evals.truth import Truth, top

CHECKS = ("intent", "verdict", "config_match", "feasibility", "budget_verdict", "deadline_verdict", "warnings",
          "citations", "language", "expectations", "no_workload")


@dataclass(frozen=True)
class ScenarioResult:
    id: str
    lang: str
    tags: tuple[str, ...]
    turns: tuple[str, ...]
    latencies_s: tuple[float, ...]
    backend: str
    error: str
    slots: tuple[SlotResult, ...]
    checks: dict[str, Check]
    got_top: dict[str, Any] | None
    truth_top: dict[str, Any] | None
    answer_excerpt: str = ""
    unstated: dict[str, Any] = field(default_factory=dict)  # slots the answer set that the gold does not state
    judge: dict[str, Any] = field(default_factory=dict)
    intent: str = ""  # the question type the scenario asks
    got_intent: str = ""  # the one the answer names

    @property
    def slot_ok(self) -> bool:
        return all(s.ok for s in self.slots)

    @property
    def failed_checks(self) -> list[str]:
        return [name for name, c in self.checks.items() if c.ok is False]

    @property
    def passed(self) -> bool:
        return not self.error and self.slot_ok and not self.failed_checks

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "lang": self.lang, "tags": list(self.tags), "turns": list(self.turns),
            "intent": self.intent, "got_intent": self.got_intent,
            "passed": self.passed, "error": self.error or None, "backend": self.backend,
            "latency_s": round(sum(self.latencies_s), 3), "turn_latencies_s": [round(t, 4) for t in self.latencies_s],
            "slots": [{"field": s.field, "gold": s.gold, "got": s.got, "ok": s.ok} for s in self.slots],
            "unstated_slots": self.unstated,
            "checks": {k: {"ok": c.ok, "detail": c.detail} for k, c in self.checks.items()},
            "got_top": self.got_top, "truth_top": self.truth_top, "answer_excerpt": self.answer_excerpt,
            **({"judge": self.judge} if self.judge else {}),
        }


def summary(c: dict[str, Any] | None) -> dict[str, Any] | None:
    """The facts of a candidate the report shows side by side."""
    if c is None:
        return None
    s = c["strategy"]
    return {
        "instance_type": c["instance_type"], "cloud": c["cloud"], "gpu": c["gpu"], "total_gpus": c["total_gpus"],
        "method": s["method"], "zero_stage": s["zero_stage"], "label": s["label"],
        "memory_per_gpu_gib": c["memory_per_gpu_gib"], "gpu_memory_gib": c["gpu_memory_gib"],
        "training_hours": c["training_hours"], "total_cost_cny": c["total_cost_cny"], "billing": c["billing"],
        "within_budget": c["within_budget"], "meets_deadline": c["meets_deadline"],
        "warnings": checks.warning_codes(c),
    }


def _failed(sc: Scenario, conv: Conversation, error: str) -> ScenarioResult:
    slots = tuple(SlotResult(k, v, None, False) for k, v in (sc.gold or {}).items())
    return ScenarioResult(sc.id, sc.lang, tuple(sc.tags), tuple(sc.turns), conv.latencies_s,
                          ",".join(dict.fromkeys(conv.backends)), error, slots, {}, None, None,
                          intent=sc.expected_intent)


def score_scenario(sc: Scenario, conv: Conversation, truth: Truth | None, catalog: Catalog,
                   max_price_age_days: int = 180) -> ScenarioResult:
    """All checks for one scenario; `truth` is None for a question without a workload (gold null)."""
    if conv.final is None:
        return _failed(sc, conv, conv.error or "no answer")
    if truth is not None and truth.error:
        return _failed(sc, conv, f"ground truth failed (fix the gold): {truth.error}")
    result = conv.final
    got_plan = plan_of(result)
    got_workload: dict[str, Any] | None = result.get("workload")
    truth_plan = None if truth is None else truth.plan
    exp = sc.expect
    results: dict[str, Check] = dict.fromkeys(CHECKS, NA)
    slots: list[SlotResult] = []
    unstated: dict[str, Any] = {}
    results["intent"] = intent_check(sc, result)
    results["verdict"] = verdict_check(sc, result, catalog, max_price_age_days)
    serving = sc.expected_intent == "serving"
    if sc.gold is not None:
        unstated = checks.unstated_slots(sc.gold, got_workload, serving)
        slots = checks.score_slots(sc.gold, got_workload, catalog)
    if serving:
        results["expectations"] = serving_expectations(exp, result)
    if sc.gold is not None and sc.expected_intent == "plan":
        results["config_match"] = checks.config_match(got_plan, truth_plan)
        results["feasibility"] = checks.feasibility(got_plan, got_workload, catalog)
        if sc.gold.get("budget_cny") is not None:
            results["budget_verdict"] = checks.verdict("within_budget", got_plan, truth_plan)
        if sc.gold.get("deadline_hours") is not None:
            results["deadline_verdict"] = checks.verdict("meets_deadline", got_plan, truth_plan)
        results["warnings"] = checks.warnings(exp, got_plan)
        results["expectations"] = checks.expectations(exp, got_plan)
    elif sc.gold is None:
        planned = got_workload is not None or got_plan is not None
        results["no_workload"] = Check(not planned, "planned a workload" if planned else "answered without a plan")
    must_cite = exp.must_cite if exp.must_cite is not None else (True if sc.gold is None else None)
    results["citations"] = checks.citations(must_cite, list(result.get("citations") or []))
    results["language"] = checks.language(sc.expected_language, result)
    answer = str(result.get("answer_markdown", ""))
    return ScenarioResult(
        sc.id, sc.lang, tuple(sc.tags), tuple(sc.turns), conv.latencies_s, ",".join(dict.fromkeys(conv.backends)),
        "", tuple(slots), results, summary(top(got_plan)), summary(top(truth_plan)), answer[:600], unstated,
        intent=sc.expected_intent, got_intent=str(result.get("intent") or ""),
    )
