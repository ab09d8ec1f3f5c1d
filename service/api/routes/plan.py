"""POST /v1/plan and POST /v1/estimate: the engine, called directly (no assistant, no language model)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from service.api.deps import CatalogDep, SettingsDep
from service.api.schemas import EstimateIn, WorkloadIn

router = APIRouter(tags=["plan"])


@router.post("/plan")
def make_plan(
    workload: WorkloadIn,
    catalog: CatalogDep,
    settings: SettingsDep,
    max_candidates: int | None = Query(default=None, ge=1, le=500, description="cap the candidate list"),
) -> dict[str, Any]:
    """Every instance on the chosen clouds, sized, timed, costed and ranked (the `plan --json` object)."""
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict

    result = plan(workload, catalog, max_price_age_days=settings.price_max_age_days)
    return plan_to_dict(result, max_candidates)


@router.post("/estimate")
def make_estimate(body: EstimateIn, catalog: CatalogDep) -> dict[str, Any]:
    """Size one explicit setup (model x method x GPU x count): memory breakdown, fit, time."""
    from service.planner.estimate import estimate

    return estimate(body.to_request(), catalog)
