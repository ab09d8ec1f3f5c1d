"""The evals' ground truth reads the plan contract: the gold's kind picks the planner (training by default), and the
plan is kept as its declared type's JSON."""

from __future__ import annotations

from service.catalog.loader import Catalog
from service.evals.truth import truth_plan
from service.planner.contract import parse_plan
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan


def test_training_truth_is_the_training_contract(qwen_plan: dict[str, object]) -> None:
    assert qwen_plan["kind"] == "training" and isinstance(parse_plan(qwen_plan), TrainingPlan)


def test_a_serving_gold_gets_a_serving_truth(catalog: Catalog) -> None:
    truth = truth_plan({"kind": "serving", "model": "Qwen2.5-7B", "gpu": "A10", "concurrency": 8}, catalog)
    assert truth.error == "" and truth.plan is not None
    assert isinstance(parse_plan(truth.plan), ServingPlan) and len(truth.plan["candidates"]) <= 10 + 2


def test_a_gold_the_engine_cannot_read_is_an_error_naming_the_field(catalog: Catalog) -> None:
    truth = truth_plan({"kind": "inference", "model": "Qwen2-7B"}, catalog)
    assert truth.plan is None and "kind" in truth.error and "'serving'" in truth.error
