"""The plan tool's artifact (service/questions/plan.py) carries the training plan contract: validated through TrainingPlan before it is
returned, so a field that plan_to_dict gains or loses fails loudly (an internal error), never as the user's input."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.loader import Catalog
from service.planner.training_types import PlanContractError, TrainingPlan
from service.questions.base import Context
from service.questions.tools import langchain_tools


def _plan_tool(catalog: Catalog) -> Any:
    return next(t for t in langchain_tools(Context.of(catalog)) if t.name == "plan")


def _call(tool: Any, args: dict[str, Any]) -> Any:
    return tool.invoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})


def test_the_artifact_validates_against_the_contract(catalog: Catalog) -> None:
    msg = _call(_plan_tool(catalog), {"model": "Qwen2-7B", "samples": 100_000, "budget_cny": 3000})
    art = msg.artifact["plan"]
    assert art["kind"] == "training" and TrainingPlan.model_validate(art).model_dump(mode="json") == art


def test_a_name_sized_model_keeps_its_assumption_and_validates(catalog: Catalog) -> None:
    art = _call(_plan_tool(catalog), {"model": "acme-llm-2b"}).artifact["plan"]  # outside models.yaml: by its name
    assert "acme-llm-2b" in art["assumptions"][0] and TrainingPlan.model_validate(art)


def test_drift_fails_loudly_not_as_a_tool_error(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    import service.planner.report as report

    real = report.plan_to_dict
    monkeypatch.setattr(report, "plan_to_dict", lambda *a, **k: {**real(*a, **k), "gpu_hours": 1.0})
    with pytest.raises(PlanContractError, match="gpu_hours"):
        _call(_plan_tool(catalog), {"model": "Qwen2-7B"})
