"""The documents' entry points read the training plan contract: a TrainingPlan or its JSON (validated against it),
never a serving plan or a dict that has drifted from it."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.documents import build_launch_bundle, render_cost_table, render_request_markdown
from service.documents.errors import DocumentInputError
from service.planner.contract import make_plan
from service.planner.training_types import TrainingPlan
from service.serving_workload import ServingWorkload


def test_the_contract_and_its_json_give_the_same_documents(plans: dict[str, Any], catalog: Catalog) -> None:
    d = plans["qwen_lora"]
    typed = TrainingPlan.model_validate(d)
    assert render_request_markdown(typed, "zh") == render_request_markdown(d, "zh")
    assert render_cost_table(typed, "en") == render_cost_table(d, "en")
    assert build_launch_bundle(typed, catalog, "en").files == build_launch_bundle(d, catalog, "en").files


def test_a_serving_plan_is_refused_with_the_way_to_its_bundle(catalog: Catalog) -> None:
    serving = make_plan(ServingWorkload(model="Qwen2.5-7B", gpu="A10"), catalog).model_dump(mode="json")
    with pytest.raises(DocumentInputError, match="serving plan") as err:
        render_request_markdown(serving, "en")
    assert "serving_bundle" in err.value.fix


@pytest.mark.parametrize("change", [
    {"gpu_hours": 1.0},  # a key the contract does not declare
    {"n_candidates": "53"},  # a figure turned into text
])
def test_a_dict_that_drifted_from_the_contract_is_refused(plans: dict[str, Any], change: dict[str, Any]) -> None:
    with pytest.raises(DocumentInputError, match="plan_to_dict's shape"):
        render_request_markdown({**plans["qwen_lora"], **change}, "en")
