"""Run the eval: every scenario through the target, scored against the planner's ground truth; the sizing anchors;
the retrieval eval; the optional judge; the comparison with the previous run in the history."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from service.catalog.loader import Catalog, load_catalog
from service.evals import history
from service.evals.anchors import (
    DEFAULT_ANCHORS,
    AnchorResult,
    anchor_summary,
    evaluate_anchors,
    load_anchors,
)
from service.evals.dataset import DEFAULT_SCENARIOS, EVALS_DIR, Scenario, load_scenarios, select
from service.evals.metrics import aggregate, rate
from service.evals.scoring import ScenarioResult, score_scenario
from service.evals.targets import AssistantTarget, HttpTarget, Target, converse
from service.evals.truth import truth_plan
from service.retrieval.config import RetrievalConfig
from service.settings import Settings

DEFAULT_HISTORY = EVALS_DIR / "reports" / "history.jsonl"
Progress = Callable[[int, int, ScenarioResult], None]


@dataclass(frozen=True)
class RunOptions:
    scenarios_file: Path = DEFAULT_SCENARIOS
    only: tuple[str, ...] = ()
    limit: int | None = None
    backend: Literal["offline", "openai"] = "offline"
    base_url: str | None = None  # set: ask a running API instead of the assistant in this process
    api_key: str = ""
    retriever: Literal["hybrid", "bm25"] = "hybrid"  # in-process only; bm25 skips the embedding model
    anchors_file: Path | None = DEFAULT_ANCHORS  # None: skip the anchors
    retrieval: bool = True  # fold in the retrieval eval
    retrieval_cases: Path | None = None
    judge: bool = False
    history_file: Path | None = DEFAULT_HISTORY  # None: neither read nor write the history


@dataclass
class EvalRun:
    run_id: str
    timestamp: str
    target: str
    results: list[ScenarioResult]
    metrics: dict[str, Any]
    anchors: list[AnchorResult] = field(default_factory=list)
    retrieval: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    comparison: history.Comparison | None = None
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_scenarios": len(self.results),
            "metrics": self.metrics,
            "per_scenario": [r.to_dict() for r in self.results],
            "anchors": {"summary": anchor_summary(self.anchors), "results": [a.to_dict() for a in self.anchors]},
            "retrieval": self.retrieval,
            "regressions": self.comparison.to_dict() if self.comparison else None,
            "run": {"run_id": self.run_id, "timestamp": self.timestamp, "target": self.target,
                    "duration_s": round(self.duration_s, 2), "notes": self.notes},
        }


def load_eval_catalog(settings: Settings) -> Catalog:
    """The catalog the service plans with (shipped files, the synced overlay, the user's price sheet)."""
    return load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, settings.prices_file)


def assistant_target(settings: Settings, catalog: Catalog, retriever: str = "hybrid",
                     retrieval_config: RetrievalConfig | None = None) -> AssistantTarget:
    """One Assistant for the whole run, its sessions in `settings.data_dir`; knowledge search over the index of
    `retrieval_config` (default: the settings'). With retriever='bm25' no embedding model is loaded."""
    from service.assistant.service import Assistant

    config = retrieval_config or RetrievalConfig.from_settings(settings)
    factory: Callable[[], Any]
    if retriever == "bm25":
        from service.evals.bm25_retriever import Bm25Retriever

        factory = lambda: Bm25Retriever(config)  # noqa: E731
    else:
        from service.retrieval.embedder_choice import shared_embedder
        from service.retrieval.hybrid import Retriever

        factory = lambda: Retriever(config, shared_embedder(config.embedding_model), refresh=False)  # noqa: E731
    label = f"in-process:{settings.llm}" + (":bm25" if retriever == "bm25" else "")
    return AssistantTarget(Assistant(settings, catalog=catalog, retriever_factory=factory), label)


def run_scenarios(target: Target, scenarios: list[Scenario], catalog: Catalog, settings: Settings,
                  judge: Any | None = None, progress: Progress | None = None) -> list[ScenarioResult]:
    results = []
    for n, sc in enumerate(scenarios, start=1):
        conv = converse(target, list(sc.turns))
        truth = None if sc.gold is None or sc.expected_intent == "serving" else truth_plan(
            sc.gold, catalog, max_price_age_days=settings.price_max_age_days)  # serving: serving_checks.py
        res = score_scenario(sc, conv, truth, catalog, settings.price_max_age_days)
        if judge is not None and conv.final is not None:
            res = replace(res, judge=judge.grade(list(sc.turns), str(conv.final.get("answer_markdown", "")),
                                                 res.got_top))
        results.append(res)
        if progress is not None:
            progress(n, len(scenarios), res)
    return results


def run_eval(options: RunOptions, settings: Settings, *, catalog: Catalog | None = None,
             target: Target | None = None, retrieval_config: RetrievalConfig | None = None,
             progress: Progress | None = None) -> EvalRun:
    """The whole eval. Pass `target` to ask something already built (tests); otherwise it is built from the
    options: the API at --base-url, or one in-process assistant whose sessions live in a temporary directory."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    notes: list[str] = []
    catalog = catalog or load_eval_catalog(settings)
    scenarios = select(load_scenarios(options.scenarios_file), options.only, options.limit)
    judge = None
    if options.judge:
        from service.evals.judge import build_judge

        judge, why = build_judge(settings)
        notes += [why] if why else []
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-eval-") as tmp:
        if target is None and options.base_url:
            target = HttpTarget(options.base_url, options.api_key)
            notes.append(f"asked {options.base_url}; the server's own settings choose its backend; ground truth "
                         "uses this machine's catalog")
        elif target is None:
            run_settings = settings.model_copy(update={"data_dir": Path(tmp), "llm": options.backend})
            target = assistant_target(run_settings, catalog, options.retriever,
                                      retrieval_config or RetrievalConfig.from_settings(settings))
        try:
            results = run_scenarios(target, scenarios, catalog, settings, judge, progress)
        finally:
            target.close()
    metrics = aggregate(results)
    if judge is not None:
        scores = [float(r.judge["score"]) for r in results if r.judge.get("score") is not None]
        metrics["judge_mean"] = round(sum(scores) / len(scores), 3) if scores else None
    backends = sorted({r.backend for r in results if r.backend})
    if any("fallback" in b for b in backends):
        notes.append(f"backend fell back to the offline model: {', '.join(backends)}")
    run = EvalRun(now.strftime("%Y%m%dT%H%M%SZ"), now.isoformat(timespec="seconds"), target.label, results, metrics,
                  notes=notes)
    if options.anchors_file is not None:
        run.anchors = evaluate_anchors(load_anchors(options.anchors_file), catalog)
        metrics["anchors_within_tolerance"] = rate([bool(a.ok) for a in run.anchors if a.ok is not None and a.gated])
    if options.retrieval:
        from service.evals.retrieval_fold import retrieval_section

        run.retrieval = retrieval_section(settings, options.retrieval_cases)
    if options.history_file is not None:
        row = history.entry(run.run_id, run.timestamp, run.target, metrics, results)
        run.comparison = history.compare(history.read(options.history_file), row)
        history.append(options.history_file, row)
    run.duration_s = time.perf_counter() - started
    return run
