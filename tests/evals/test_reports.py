"""Reports from a small synthetic run: the regression list reaches both pages; text is escaped."""

from __future__ import annotations

from pathlib import Path

from service.evals import history
from service.evals.checks import Check, SlotResult
from service.evals.metrics import aggregate
from service.evals.reports import write_reports
from service.evals.runner import EvalRun
from service.evals.scoring import ScenarioResult


def _result(sid: str, ok: bool) -> ScenarioResult:
    pick = {"instance_type": "GT4.4XLARGE96", "cloud": "tencent", "gpu": "A100-40G-SXM", "total_gpus": 1,
            "method": "lora", "zero_stage": 0, "label": "LoRA r8", "memory_per_gpu_gib": 30.1, "gpu_memory_gib": 40,
            "training_hours": 11.9, "total_cost_cny": 321.0, "billing": "on_demand", "within_budget": True,
            "meets_deadline": None, "warnings": []}
    return ScenarioResult(sid, "zh", (), ("<b>预算</b> 一共两万元",), (0.05,), "offline", "",
                          (SlotResult("budget_cny", 20000.0, 20000.0 if ok else 1.0, ok),),
                          {"config_match": Check(ok, "detail <x>")}, pick, pick)


def test_reports_show_diffs_and_regressions(tmp_path: Path) -> None:
    hist = tmp_path / "history.jsonl"
    results = [_result("zh-a", True), _result("zh-b", True)]
    history.append(hist, history.entry("r1", "t1", "in-process:offline", aggregate(results), results))
    results = [_result("zh-a", True), _result("zh-b", False)]
    run = EvalRun("r2", "t2", "in-process:offline", results, aggregate(results))
    row = history.entry(run.run_id, run.timestamp, run.target, run.metrics, results)
    run.comparison = history.compare(history.read(hist), row)
    history.append(hist, row)
    paths = write_reports(run, tmp_path / "out", hist)
    md = paths["markdown"].read_text(encoding="utf-8")
    html = paths["html"].read_text(encoding="utf-8")
    assert "Passed before, fail now: `zh-b`" in md
    assert "slot_accuracy dropped 1.000 → 0.500" in md
    assert "| budget_cny | 20,000 | 1.000 | ✗ |" in md
    assert "passed before, fails now: <code>zh-b</code>" in html
    assert "&lt;b&gt;预算&lt;/b&gt;" in html and "<b>预算</b>" not in html  # user text is escaped
    assert html.count("data:image/png;base64,") >= 3  # metrics, fields, latency, history trend


def _asked(sid: str, lang: str, intent: str, got: str, verdict: bool | None) -> ScenarioResult:
    checks = {"intent": Check(got == intent, ""), "verdict": Check(verdict, "")}
    return ScenarioResult(sid, lang, (), ("q",), (0.05,), "offline", "", (), checks, None, None,
                          intent=intent, got_intent=got)


def test_the_report_shows_accuracy_by_question_type(tmp_path: Path) -> None:
    results = [_asked("zh-f", "zh", "feasibility", "feasibility", True),
               _asked("en-f", "en", "feasibility", "feasibility", False),  # right type, wrong verdict
               _asked("en-k", "en", "knowledge", "plan", None)]  # planned a plain question
    m = aggregate(results)
    feas = m["by_intent"]["feasibility"]
    assert (feas["n"], feas["n_zh"], feas["n_en"]) == (2, 1, 1)
    assert (feas["intent_accuracy"], feas["verdict_accuracy"], feas["intent_and_verdict"]) == (1.0, 0.5, 0.5)
    assert m["by_intent"]["knowledge"]["intent_accuracy"] == 0.0
    run = EvalRun("r1", "t1", "in-process:offline", results, m)
    paths = write_reports(run, tmp_path / "out", tmp_path / "h.jsonl")
    md = paths["markdown"].read_text(encoding="utf-8")
    html = paths["html"].read_text(encoding="utf-8")
    assert "| feasibility | 2 (1/1) | 1.000 | 0.500 | 0.500 |" in md
    assert "By question type" in html and "2 (1/1)" in html
