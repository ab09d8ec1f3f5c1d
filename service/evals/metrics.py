"""Aggregate scores over scenarios: rates over the scenarios each check applies to, slot accuracy over all gold
fields (and per field), latency percentiles over turns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.evals.checks import Check
from service.evals.scoring import ScenarioResult

NA_OK = Check(None)

# The headline metrics, in report order ("rate" = share of applicable scenarios that pass).
HEADLINE = ("slot_accuracy", "config_match", "feasibility", "budget_verdict", "deadline_verdict", "warnings",
            "citations", "language")
EXTRA = ("expectations", "no_workload", "intent", "verdict", "pass_rate")
QUALITY = HEADLINE + EXTRA  # higher is better; a drop between runs is a regression


def rate(oks: Sequence[bool]) -> float | None:
    return round(sum(oks) / len(oks), 4) if oks else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method), q in [0, 100]."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo), 4)


def aggregate(results: Sequence[ScenarioResult]) -> dict[str, Any]:
    slots = [s for r in results for s in r.slots]
    fields = list(dict.fromkeys(s.field for s in slots))
    metrics: dict[str, Any] = {"slot_accuracy": rate([s.ok for s in slots])}
    applicable: dict[str, int] = {"slot_accuracy": len(slots)}
    for name in HEADLINE[1:] + EXTRA[:4]:
        oks = [c.ok for r in results if (c := r.checks.get(name)) is not None and c.ok is not None]
        metrics[name], applicable[name] = rate(oks), len(oks)
    metrics["pass_rate"] = rate([r.passed for r in results])
    applicable["pass_rate"] = len(results)
    turns = [t for r in results for t in r.latencies_s]
    metrics["latency_p50_s"] = percentile(turns, 50)
    metrics["latency_p95_s"] = percentile(turns, 95)
    metrics["slot_accuracy_by_field"] = {f: rate([s.ok for s in slots if s.field == f]) for f in sorted(fields)}
    metrics["n_errors"] = sum(1 for r in results if r.error)
    metrics["n_applicable"] = applicable
    metrics["by_intent"] = by_intent(results)
    metrics["by_lang"] = {
        lang: {"n": len(rs), "pass_rate": rate([r.passed for r in rs]),
               "slot_accuracy": rate([s.ok for r in rs for s in r.slots])}
        for lang in ("zh", "en") if (rs := [r for r in results if r.lang == lang])
    }
    return metrics


def by_intent(results: Sequence[ScenarioResult]) -> dict[str, dict[str, Any]]:
    """Per question type: how often the answer named it, how often its verdict was the engine's, the slots."""
    out: dict[str, dict[str, Any]] = {}
    for intent in ("plan", "feasibility", "min_gpus", "compare", "savings", "serving", "knowledge"):
        rs = [r for r in results if r.intent == intent]
        if not rs:
            continue
        verdicts = [c.ok for r in rs if (c := r.checks.get("verdict")) is not None and c.ok is not None]
        out[intent] = {
            "n": len(rs), "n_zh": sum(r.lang == "zh" for r in rs), "n_en": sum(r.lang == "en" for r in rs),
            "intent_accuracy": rate([r.got_intent == intent for r in rs]),
            "verdict_accuracy": rate(verdicts),
            "intent_and_verdict": rate([r.got_intent == intent and (r.checks.get("verdict") or NA_OK).ok is not False
                                        for r in rs]),
            "slot_accuracy": rate([s.ok for r in rs for s in r.slots]),
            "pass_rate": rate([r.passed for r in rs]),
        }
    return out
