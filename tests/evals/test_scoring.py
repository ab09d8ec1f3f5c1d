"""A whole scenario scored: the engine's own answer passes every check; wrong answers fail the checks they break."""

from __future__ import annotations

from typing import Any

from service.catalog.loader import Catalog
from service.evals.dataset import Expect, Scenario
from service.evals.metrics import aggregate
from service.evals.scoring import score_scenario
from service.evals.targets import Conversation
from service.evals.truth import truth_plan
from tests.evals.conftest import answer

SCENARIO = Scenario(
    id="zh-example", lang="zh", turns=["用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"],
    gold={"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000, "budget_period": "month"},
    expect=Expect(within_budget=True, must_cite=True),
)
QUESTION = Scenario(id="en-ask", lang="en", turns=["What is ZeRO-3?"], gold=None)


def _conv(result: dict[str, Any] | None, error: str = "") -> Conversation:
    return Conversation(result, (0.05,), error, ("offline",))


def test_the_ground_truth_itself_passes(qwen_plan: dict[str, Any], catalog: Catalog) -> None:
    truth = truth_plan(SCENARIO.gold or {}, catalog)
    res = score_scenario(SCENARIO, _conv(answer(qwen_plan, qwen_plan["workload"])), truth, catalog)
    assert res.passed, res.to_dict()
    assert aggregate([res])["slot_accuracy"] == 1.0


def test_a_wrong_workload_scores_zero(catalog: Catalog) -> None:
    truth = truth_plan(SCENARIO.gold or {}, catalog)
    wrong_w = {"model": "Qwen2-72B", "samples": 10000, "budget_cny": 1.0, "budget_period": "total", "method": "full"}
    wrong = truth_plan(wrong_w, catalog).plan
    res = score_scenario(SCENARIO, _conv(answer(wrong, {**wrong_w, "method": "full"}, language="en",
                                                text="Use eight GPUs.", citations=[])), truth, catalog)
    m = aggregate([res])
    assert m["slot_accuracy"] == 0.0
    assert m["config_match"] == 0.0
    assert m["budget_verdict"] == 0.0
    assert m["language"] == 0.0
    assert m["citations"] == 0.0
    assert m["expectations"] == 0.0
    assert m["pass_rate"] == 0.0


def test_a_failed_turn_fails_the_scenario(catalog: Catalog) -> None:
    res = score_scenario(SCENARIO, _conv(None, "turn 1: InvalidInputError: empty"), None, catalog)
    assert not res.passed
    assert res.error.startswith("turn 1")
    assert [s.ok for s in res.slots] == [False] * 4


def test_a_bad_gold_is_reported_not_scored(catalog: Catalog, qwen_plan: dict[str, Any]) -> None:
    truth = truth_plan({"model": "NoSuchModel"}, catalog)  # no size stated ('NoSuchModel-7B' is estimated as a 7B)
    assert truth.error
    res = score_scenario(SCENARIO, _conv(answer(qwen_plan, qwen_plan["workload"])), truth, catalog)
    assert "ground truth failed" in res.error


def test_a_question_must_not_plan_and_must_cite(qwen_plan: dict[str, Any], catalog: Catalog) -> None:
    good = answer(None, None, text="ZeRO-3 shards the parameters, gradients and optimizer states.", language="en")
    assert score_scenario(QUESTION, _conv(good), None, catalog).passed
    planned = score_scenario(QUESTION, _conv(answer(qwen_plan, qwen_plan["workload"], text=good["answer_markdown"],
                                                    language="en")), None, catalog)
    assert planned.checks["no_workload"].ok is False
    uncited = score_scenario(QUESTION, _conv({**good, "citations": []}), None, catalog)
    assert uncited.checks["citations"].ok is False
