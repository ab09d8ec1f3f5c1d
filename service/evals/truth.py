"""Ground truth from the rule engine, and the engine's own check of an answer's top pick.

The truth is the planner on the gold workload, read through the plan contract (service/planner/contract.py): a
training workload unless the gold says `kind: serving`, the schema's defaults filling what the conversation did
not state, as they do for the assistant; the plan is validated against its declared type (TrainingPlan or
ServingPlan) and kept as that type's JSON. Feasibility re-sizes the answer's top pick with `estimate_memory` for
the setup it names and checks it against the planner's headroom (92 % of GPU memory).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from pydantic import ValidationError

from service.catalog.loader import Catalog
from service.errors import AdvisorError
from service.workload import Workload


@dataclass(frozen=True)
class Truth:
    plan: dict[str, Any] | None
    error: str = ""


def truth_plan(gold: dict[str, Any], catalog: Catalog, today: date | None = None,
               max_price_age_days: int = 180) -> Truth:
    """The engine's plan for the gold workload (either kind), as the contract's JSON; a gold the engine cannot
    plan is an error to fix in the gold. A plan that breaks its contract raises (PlanContractError)."""
    from service.planner.contract import make_plan, parse_request

    try:
        p = make_plan(parse_request(gold), catalog, today=today, max_price_age_days=max_price_age_days,
                      max_candidates=10)
    except (AdvisorError, ValidationError) as exc:
        return Truth(None, f"{type(exc).__name__}: {exc}")
    return Truth(p.model_dump(mode="json"))


def top(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    """The first-ranked candidate of a plan dict, None when the plan has none."""
    if not plan or not plan.get("n_candidates") or not plan.get("candidates"):
        return None
    first: dict[str, Any] = plan["candidates"][0]
    return first


@dataclass(frozen=True)
class FitCheck:
    fits: bool
    need_gib: float
    usable_gib: float
    detail: str


def recheck_fit(candidate: dict[str, Any], workload: dict[str, Any], catalog: Catalog) -> FitCheck:
    """Size the candidate's setup again with the sizing engine: per-GPU need within 92 % of its GPU memory."""
    from service.planner.resolve import resolve_job
    from service.planner.strategy import HEADROOM, base_setup, configured
    from service.sizing.memory import estimate_memory

    s = candidate["strategy"]
    w = Workload.model_validate(workload)
    job = resolve_job(w, catalog.models)
    gpu = next(g for g in catalog.gpus if g.id == candidate["gpu"])  # a candidate's GPU is a catalog row
    n = int(s["gpus_per_node"]) * int(s["nodes"])
    # the planner's own setup for this GPU, count, stage and offload (framework defaults, the model's frozen copies,
    # the interconnect), then the strategy's stated fields over it
    setup = configured(base_setup(job, w, gpu), w, gpu, n, int(s["zero_stage"]), s["offload"], bool(s["grad_ckpt"]))
    setup = replace(setup, method=s["method"], quant_bits=s.get("quant_bits"), precision=s["precision"],
                    seq_len=int(s["seq_len"]), micro_batch=int(s["micro_batch"]),
                    lora_rank=int(s.get("lora_rank") or setup.lora_rank))
    need = estimate_memory(job.model, setup).per_gpu_gib
    usable = HEADROOM * float(candidate["gpu_memory_gib"])
    detail = (f"{candidate['instance_type']}: {need:.2f} GiB per GPU needed, {usable:.2f} usable "
              f"({HEADROOM:.0%} of {candidate['gpu_memory_gib']:g} GiB)")
    return FitCheck(need <= usable + 1e-9, need, usable, detail)
