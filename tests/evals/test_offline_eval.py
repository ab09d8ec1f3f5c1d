"""The whole offline eval on every scenario, in CI: one in-process assistant (offline planner model, BM25 knowledge
search), ground truth from the planner. Gate: slot accuracy and config match at least 0.95 each.

Below the gate, the failure message lists each failing scenario with the slot the reader got wrong and what it
read; fix the reader (service/reader/) or the planner, not the gold or the gate.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service.catalog.loader import Catalog
from service.evals.reports import write_reports
from service.evals.runner import EvalRun, RunOptions, run_eval
from service.evals.targets import AssistantTarget
from service.settings import Settings

pytestmark = [pytest.mark.slow]

GATE = 0.95


@pytest.fixture(scope="module")
def offline_run(eval_settings: Settings, eval_target: AssistantTarget, catalog: Catalog,
                tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalRun, float, Path]:
    history = tmp_path_factory.mktemp("eval-history") / "history.jsonl"
    start = time.perf_counter()
    run = run_eval(RunOptions(retrieval=False, history_file=history), eval_settings, catalog=catalog,
                   target=eval_target)
    return run, time.perf_counter() - start, history


def _diagnosis(run: EvalRun) -> str:
    lines = []
    for r in run.results:
        if r.passed:
            continue
        slots = "; ".join(f"{s.field}: gold {s.gold!r}, got {s.got!r}" for s in r.slots if not s.ok)
        checks = "; ".join(f"{k}: {c.detail}" for k, c in r.checks.items() if c.ok is False)
        extra = f"; unstated {r.unstated}" if r.unstated else ""
        lines.append(f"{r.id} [{' | '.join(r.turns)}] {r.error} {slots} {checks}{extra}")
    return "\n".join(lines)


def test_offline_assistant_meets_the_gate(offline_run: tuple[EvalRun, float, Path]) -> None:
    run, seconds, _ = offline_run
    m = run.metrics
    print(f"\noffline eval: {len(run.results)} scenarios in {seconds:.1f} s; "
          f"slot accuracy {m['slot_accuracy']}, config match {m['config_match']}\n{_diagnosis(run)}")
    assert m["n_errors"] == 0, _diagnosis(run)
    assert m["slot_accuracy"] >= GATE, _diagnosis(run)
    assert m["config_match"] >= GATE, _diagnosis(run)
    assert m["feasibility"] == 1.0, _diagnosis(run)  # the engine never recommends what it cannot fit
    assert m["anchors_within_tolerance"] == 1.0


def test_the_run_reports_and_records_history(offline_run: tuple[EvalRun, float, Path], tmp_path: Path) -> None:
    run, _, history = offline_run
    paths = write_reports(run, tmp_path / "report", history)
    html = paths["html"].read_text(encoding="utf-8")
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "data:image/png;base64," in html
    assert "<script" not in html and "<link" not in html and "http://cdn" not in html  # self-contained
    for r in run.results:
        assert r.id in html  # every scenario's diff is on the page
        if not r.passed:
            assert f"### {r.id}" in md
    assert len(history.read_text(encoding="utf-8").splitlines()) == 1
