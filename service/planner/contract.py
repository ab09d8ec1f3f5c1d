"""The plan contract: one typed plan, training or serving, told apart by `kind`, across the API, the CLI, the
assistant's tools, Slack, the documents, MCP and the evals.

    Plan         = TrainingPlan | ServingPlan      (discriminated by kind: "training" | "serving")
    PlanRequest  = Workload | ServingWorkload      (by kind; a body without kind is a training workload)

    make_plan(request, catalog) -> TrainingPlan | ServingPlan
    parse_plan(data)            -> TrainingPlan | ServingPlan   (a plan's JSON, validated; ValidationError if not)
    training_json(d)            -> dict                         (a training plan dict, validated, as JSON)

Consumers that render (answers, Slack, documents) may keep reading the plan's `model_dump(mode="json")`; what is
fixed is that every plan crossing a boundary has been validated against this one declared schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from functools import cache
from typing import Annotated, Any, overload

from pydantic import Discriminator, Field, Tag, TypeAdapter

from service.catalog.loader import Catalog
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan, checked_training_plan
from service.serving_workload import ServingWorkload
from service.workload import Workload

Plan = Annotated[TrainingPlan | ServingPlan, Field(discriminator="kind")]
PLAN_KINDS = ("training", "serving")


def request_kind(value: Any) -> str:
    """The discriminator of a plan request: its `kind`, "training" when absent. Any other value is read as
    training, so that Workload's own check rejects it at `kind`, naming both kinds (service/workload.py)."""
    kind = value.get("kind", "training") if isinstance(value, Mapping) else getattr(value, "kind", "training")
    return "serving" if kind == "serving" else "training"


PlanRequest = Annotated[Annotated[Workload, Tag("training")] | Annotated[ServingWorkload, Tag("serving")],
                        Discriminator(request_kind)]


@cache
def _plan_adapter() -> TypeAdapter[TrainingPlan | ServingPlan]:
    return TypeAdapter(Plan)


@cache
def _request_adapter() -> TypeAdapter[Workload | ServingWorkload]:
    return TypeAdapter(PlanRequest)


def parse_plan(data: Mapping[str, Any]) -> TrainingPlan | ServingPlan:
    """A plan's JSON (or dict), validated against the contract by its kind."""
    return _plan_adapter().validate_python(data)


def parse_request(data: Mapping[str, Any]) -> Workload | ServingWorkload:
    """A workload of either kind (a dict as POST /v1/plan takes it), validated."""
    return _request_adapter().validate_python(data)


def training_json(d: Mapping[str, Any]) -> dict[str, Any]:
    """A training plan dict (plan_to_dict's, perhaps with assumptions added) validated against TrainingPlan and
    returned as its JSON: what a tool hands on as its artifact. A field the contract does not declare raises
    PlanContractError (a bug, answered as an internal error, never as the caller's bad input)."""
    return checked_training_plan(d).model_dump(mode="json")


@overload
def make_plan(request: Workload, catalog: Catalog, *, today: date | None = None, max_price_age_days: int = 180,
              max_candidates: int | None = None) -> TrainingPlan: ...
@overload
def make_plan(request: ServingWorkload, catalog: Catalog, *, today: date | None = None,
              max_price_age_days: int = 180, max_candidates: int | None = None) -> ServingPlan: ...
@overload
def make_plan(request: Workload | ServingWorkload, catalog: Catalog, *, today: date | None = None,
              max_price_age_days: int = 180, max_candidates: int | None = None) -> TrainingPlan | ServingPlan: ...


def make_plan(request: Workload | ServingWorkload, catalog: Catalog, *, today: date | None = None,
              max_price_age_days: int = 180, max_candidates: int | None = None) -> TrainingPlan | ServingPlan:
    """The plan for a workload of either kind: the training planner or the serving planner, validated."""
    if isinstance(request, ServingWorkload):
        from service.planner.serving_plan import capped, plan_serving

        served = plan_serving(request, catalog, today, max_price_age_days)
        return served if max_candidates is None else capped(served, max_candidates)
    from service.planner.plan import plan
    from service.planner.report import training_plan

    return training_plan(plan(request, catalog, today, max_price_age_days), max_candidates)
