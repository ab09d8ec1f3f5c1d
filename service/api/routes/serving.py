"""POST /v1/inference and POST /v1/plan/serving: serving sizing through the engine (no assistant, no LLM)."""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import Field

from service.api.deps import CatalogDep, SettingsDep
from service.api.schemas import ServingWorkloadIn
from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingPlan
from service.serving_workload import ServingWorkload

router = APIRouter(tags=["serving"])


class InferenceIn(ServingWorkloadIn):
    """A serving workload on one GPU type (gpu is required here)."""

    gpu: str = Field(min_length=1, max_length=128, description="the GPU to size on, e.g. L20, A10, H800")


@router.post("/inference", response_model=InferenceResult)
def make_inference(body: InferenceIn, catalog: CatalogDep) -> InferenceResult:
    """One model on one GPU type: weights per GPU, KV bytes per token, the KV pool in tokens, max concurrency,
    whether the engine starts (and why not), output tokens/s, TTFT and TPOT at the load."""
    from service.planner.serving_inference import inference

    return inference(ServingWorkload.model_validate(body.model_dump()), catalog)


@router.post("/plan/serving", response_model=ServingPlan)
def make_serving_plan(
    body: ServingWorkloadIn,
    catalog: CatalogDep,
    settings: SettingsDep,
    max_candidates: int | None = Query(default=None, ge=1, le=500, description="cap the candidate list"),
) -> ServingPlan:
    """Every instance on the chosen clouds that serves the workload: GPUs per replica x replicas, cost per month
    under each billing, yuan per million output tokens, launch commands; ranked by the objective. The same as
    POST /v1/plan with `kind: "serving"` (kept as an alias; `kind` may be left out here)."""
    from service.planner.contract import make_plan

    return make_plan(ServingWorkload.model_validate(body.model_dump()), catalog,
                     max_price_age_days=settings.price_max_age_days, max_candidates=max_candidates)
