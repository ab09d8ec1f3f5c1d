"""POST /v1/plan and POST /v1/estimate: the engine, called directly (no assistant, no language model)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from service.api.deps import CatalogDep, SettingsDep
from service.api.schemas import EstimateIn, PlanRequestIn
from service.planner.contract import Plan
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan
from service.serving_workload import ServingWorkload

router = APIRouter(tags=["plan"])


@router.post("/plan", response_model=Plan)
def make_plan(
    workload: Annotated[PlanRequestIn, Body(description="a training workload (`kind` \"training\" or absent) or "
                                             "a serving workload (`kind` \"serving\", docs/serving.md)")],
    catalog: CatalogDep,
    settings: SettingsDep,
    max_candidates: int | None = Query(default=None, ge=1, le=500, description="cap the candidate list"),
) -> TrainingPlan | ServingPlan:
    """The plan for a workload of either kind, told apart by `kind`: for training, every instance on the chosen
    clouds sized, timed, costed and ranked (the `plan --json` object, docs/plan-json.md); for serving, the
    `ServingPlan` (as POST /v1/plan/serving, docs/serving.md). The answer's `kind` says which."""
    from service.planner.contract import make_plan as plan_for

    request = ServingWorkload.model_validate(workload.model_dump()) if workload.kind == "serving" else workload
    return plan_for(request, catalog, max_price_age_days=settings.price_max_age_days, max_candidates=max_candidates)


@router.post("/estimate")
def make_estimate(body: EstimateIn, catalog: CatalogDep) -> dict[str, Any]:
    """Size one explicit setup (model x method x GPU x count): memory breakdown, fit, time."""
    from service.planner.estimate import estimate

    return estimate(body.to_request(), catalog)
