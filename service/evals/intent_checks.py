"""Scorers for the question type: the answer's `intent` against the scenario's, and its verdict against the
engine's on the gold workload and the scenario's subject (`ask`): fits for feasibility, the fewest cards for
min_gpus, the options and the winner for compare, the difference for savings, the count and the GPU for serving
(serving_checks.py)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from service.catalog.loader import Catalog
from service.errors import AdvisorError
from service.evals.answers import typed_answer
from service.evals.checks import NA, Check
from service.evals.dataset import Scenario
from service.questions.compare import CompareAnswer
from service.questions.feasibility import FeasibilityAnswer
from service.questions.min_gpus import MinGpusAnswer
from service.questions.savings import SavingsAnswer
from service.workload import Workload

_CLOUDS = {"tencent", "jdcloud"}
_METHODS = {"full", "lora", "qlora", "freeze", "pretrain"}
_BILLING = {"on_demand", "monthly", "spot"}


def compare_kind(options: list[str]) -> str:
    names = set(options)
    for kind, known in (("cloud", _CLOUDS), ("method", _METHODS), ("billing", _BILLING)):
        if names <= known:
            return kind
    return "gpu"


def intent_truth(sc: Scenario, catalog: Catalog, max_age: int = 180) -> dict[str, Any] | None:
    """The engine's answer to the scenario's question type on its gold workload; None for plan and knowledge."""
    from service.planner.questions.compare import compare, savings
    from service.planner.questions.fit import feasibility, min_gpus

    intent, ask = sc.expected_intent, sc.ask
    if intent in ("plan", "knowledge") or sc.gold is None:
        return None
    if intent == "serving":
        from service.evals.serving_checks import serving_truth

        return serving_truth(sc.gold, catalog, max_age)
    w = Workload.model_validate(sc.gold)
    if intent == "feasibility":
        return feasibility(catalog, w, ask.gpu or "", ask.gpu_count or 1)
    if intent == "min_gpus":
        return min_gpus(catalog, w, ask.gpu)
    if intent == "compare":
        return compare(catalog, w, compare_kind(ask.options), list(ask.options), ask.by, max_age)  # type: ignore[arg-type]
    changes = dict(ask.before)
    if changes.get("method", "qlora") != "qlora":
        changes.setdefault("quant_bits", None)
    before = Workload.model_validate({**sc.gold, **changes})
    return savings(catalog, before, w, max_age)


def intent_check(sc: Scenario, result: dict[str, Any]) -> Check:
    want, got = sc.expected_intent, result.get("intent")
    return Check(got == want, f"intent: got {got}, expected {want}")


def _gpu_id(name: str | None, catalog: Catalog) -> str | None:
    from service.catalog.queries import resolve_gpu

    if name is None:
        return None
    try:
        return resolve_gpu(name, catalog.gpus)[0].id
    except AdvisorError:
        return name


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0.01, abs_tol=1.0)


def verdict_check(sc: Scenario, result: dict[str, Any], catalog: Catalog, max_age: int = 180) -> Check:
    """The answer's verdict for its question type equals the engine's on gold + ask."""
    intent = sc.expected_intent
    if intent in ("plan", "knowledge") or sc.gold is None:
        return NA
    if intent == "serving":
        from service.evals.serving_checks import serving_verdict

        return serving_verdict(sc, result, catalog, max_age)
    try:
        truth = intent_truth(sc, catalog, max_age)
    except (AdvisorError, ValidationError) as exc:
        return Check(False, f"ground truth failed (fix the scenario): {exc}")
    assert truth is not None  # plan and knowledge returned above
    if result.get("intent") != intent:
        return Check(False, f"no {intent} verdict (the answer is a {result.get('intent')})")
    answer = typed_answer(result)
    if intent in ("feasibility", "min_gpus"):
        got = answer if isinstance(answer, FeasibilityAnswer | MinGpusAnswer) else None
        keys = ("gpu", "gpu_count", "fits") if intent == "feasibility" else ("gpu", "gpus_needed")
        have = {k: getattr(got, k, None) for k in keys}
        want = {k: truth.get(k) for k in keys}
        have["gpu"] = _gpu_id(have["gpu"], catalog)
        if intent == "min_gpus" and truth["gpu"] is None:
            have["min_memory_gib"] = got.min_memory_gib if isinstance(got, MinGpusAnswer) else None
            want["min_memory_gib"] = truth["min_memory_gib"]
        return Check(have == want, f"got {have}, engine {want}")
    if intent == "compare":
        cmp = answer if isinstance(answer, CompareAnswer) else None
        have_opts = sorted(r.option for r in cmp.comparison) if cmp is not None else []
        winner = cmp.winner if cmp is not None else None
        want_opts = sorted(str(r["option"]) for r in truth["comparison"])
        ok = have_opts == want_opts and winner == truth["winner"]
        return Check(ok, f"options {have_opts} winner {winner}; engine {want_opts} winner {truth['winner']}")
    delta = answer.delta_cny if isinstance(answer, SavingsAnswer) else None
    ok = _close(delta, truth["delta_cny"])
    return Check(ok, f"delta ¥{delta}, engine ¥{truth['delta_cny']}")
