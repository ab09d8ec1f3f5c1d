"""The serving scorers: an answer carrying the engine's own figures passes; a wrong count, GPU, start verdict or
question type fails the check it breaks. Answers are the engine's own serving answers on the gold, never figures
written here."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.evals.checks import unstated_slots
from service.evals.dataset import Expect, Scenario
from service.evals.metrics import aggregate
from service.evals.scoring import score_scenario
from service.evals.serving_checks import serving_expectations, serving_truth, serving_verdict
from service.evals.targets import Conversation
from service.planner.serving_inference import inference
from service.planner.serving_plan import plan_serving
from service.serving_workload import ServingWorkload

PLANNED = Scenario(id="zh-serve", lang="zh", intent="serving", turns=["上线一个Qwen2.5-72B的对话服务要几张卡，并发50"],
                   gold={"model": "Qwen2.5-72B", "concurrency": 50})
PINNED = Scenario(id="en-serve", lang="en", intent="serving", turns=["Can a single L20 serve Qwen2.5-14B?"],
                  gold={"model": "Qwen2.5-14B", "gpu": "L20", "gpus": 1},
                  expect=Expect(starts=True, gpus_per_replica=1, gpu="L20"))


def serving_answer(sc: Scenario, catalog: Catalog, lang: str = "zh", **changes: Any) -> dict[str, Any]:
    """The AskResult a right answer carries: the engine's serving answer on the gold (its plan, and the pinned GPU's
    inference), the gold as the workload; `changes` set figures of the sizing the answer opens with (`starts`
    False: nothing rented, or the pinned GPUs do not start)."""
    w = ServingWorkload.model_validate(sc.gold)
    answer: dict[str, Any] = {"kind": "serving", "workload": w.model_dump(mode="json"),
                              "plan": plan_serving(w, catalog).model_dump(mode="json")}
    if w.gpu:
        answer["inference"] = inference(w, catalog).model_dump(mode="json")
    inf = answer.get("inference")
    sizing = inf["sizing"] if inf is not None else answer["plan"]["candidates"][0]["sizing"]
    for key, value in changes.items():
        if key == "starts" and inf is not None:
            inf["starts"] = value
        elif key == "starts":
            answer["plan"]["candidates"] = [] if not value else answer["plan"]["candidates"]
        else:
            sizing[key] = value
    text = "需要 2 张 H20。" if lang == "zh" else "You need 2x H20."
    return {"session_id": "s", "answer_markdown": text, "language": lang, "intent": "serving", "answer": answer,
            "workload": w.model_dump(), "citations": [], "backend": "offline"}


@pytest.fixture(scope="module")
def truths(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return {sc.id: serving_truth(sc.gold or {}, catalog) for sc in (PLANNED, PINNED)}


@pytest.mark.parametrize("sc", [PLANNED, PINNED], ids=lambda s: s.id)
def test_the_engines_own_answer_passes(sc: Scenario, catalog: Catalog) -> None:
    result = serving_answer(sc, catalog, sc.lang)
    res = score_scenario(sc, Conversation(result, (0.01,), "", ("offline",)), None, catalog)
    assert res.passed, res.to_dict()
    assert aggregate([res])["by_intent"]["serving"]["verdict_accuracy"] == 1.0


def test_a_pinned_gpu_plans_where_to_rent_it(truths: dict[str, dict[str, Any]]) -> None:
    t = truths[PINNED.id]
    assert t["gpu"] == "L20" and t["gpus_per_replica"] == 1 and t["starts"] is True
    assert t["instance_type"] is not None  # both clouds' L20 instances: the plan pinned to the GPU


@pytest.mark.parametrize(("key", "wrong"), [
    ("gpus_per_replica", 4),  # another count
    ("gpu", "A10"),  # another GPU
    ("replicas", 3),  # the load read wrong
    ("starts", False),  # the start verdict flipped
])
def test_a_wrong_figure_fails_the_verdict(catalog: Catalog, key: str, wrong: Any) -> None:
    result = serving_answer(PLANNED, catalog, **{key: wrong})
    check = serving_verdict(PLANNED, result, catalog)
    assert check.ok is False and key in check.detail


def test_another_question_type_has_no_serving_verdict(catalog: Catalog) -> None:
    result = {**serving_answer(PINNED, catalog, "en"), "intent": "feasibility", "answer": None}
    res = score_scenario(PINNED, Conversation(result, (0.01,), "", ("offline",)), None, catalog)
    assert {"intent", "verdict", "expectations"} <= set(res.failed_checks)
    assert "the answer is a feasibility" in res.checks["verdict"].detail


def test_expectations(catalog: Catalog) -> None:
    right = serving_answer(PINNED, catalog, "en")
    assert serving_expectations(PINNED.expect, right).ok is True
    assert serving_expectations(Expect(), right).ok is None  # nothing expected: not applicable
    wrong = serving_answer(PINNED, catalog, "en", gpus_per_replica=2)
    check = serving_expectations(PINNED.expect, wrong)
    assert check.ok is False and "gpus_per_replica: expected 1, got 2" in check.detail


def test_serving_slots_normalise_the_gpu_and_name_unstated_fields(catalog: Catalog) -> None:
    sc = Scenario(id="s", lang="en", intent="serving", turns=["x"], gold={"model": "Llama-3.1-70B", "gpu": "H800"})
    got = ServingWorkload(model="Llama-3.1-70B", gpu="H800-SXM", kv_dtype="fp8").model_dump()
    result = {"session_id": "s", "answer_markdown": "x", "language": "en", "intent": "serving", "workload": got}
    res = score_scenario(sc, Conversation(result, (0.01,), "", ("offline",)), None, catalog)
    assert all(s.ok for s in res.slots)  # 'H800' and 'H800-SXM' are one catalog GPU
    assert unstated_slots(sc.gold or {}, got, serving=True) == {"kv_dtype": "fp8"}  # ServingWorkload's defaults
