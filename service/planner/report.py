"""The training plan's public JSON (the `plan --json` contract, also the API's and the assistant's artifact):
`plan_to_dict` builds it, `training_plan` validates it against the declared contract (training_types.py)."""

from __future__ import annotations

from service.planner.candidate import Candidate, PlanResult
from service.planner.estimate import model_dict
from service.planner.training_types import TrainingPlan, checked_training_plan
from service.planner.why import pick_reasons


def plan_to_dict(r: PlanResult, max_candidates: int | None = None) -> dict[str, object]:
    cands = r.candidates if max_candidates is None else r.candidates[:max_candidates]
    picks = {cloud: c.inst.instance_type for cloud, c in r.picks().items()}
    alts = {k: c.inst.instance_type for k, c in r.alternatives().items()}
    reasons = pick_reasons(r)
    named = {*picks.values(), *alts.values(), *(str(x[k]) for x in reasons.values() for k in ("cheapest", "fastest"))}
    extra = [c for c in r.candidates if c.inst.instance_type in named and c not in cands]
    job = r.job
    return {
        "kind": "training",
        "workload": r.workload.model_dump(),
        "model": model_dict(job.model),
        "job": {"method": job.method, "quant_bits": job.quant_bits, "seq_len": job.seq_len,
                "tokens_per_epoch": float(job.tokens_per_epoch), "epochs": float(job.epochs),
                "tokens_total": float(job.tokens_total), "samples_per_epoch": float(job.samples_per_epoch),
                "data_basis": job.data_basis, "data_note": job.data_note[0], "data_note_zh": job.data_note[1]},
        "candidates": [c.as_dict() for c in (*cands, *extra)],
        "n_candidates": len(r.candidates),
        "picks": picks,
        "alternatives": alts,
        "pick_reasons": reasons,
        "rejected": [{"instance_type": i, "reason": why} for i, why in r.rejected],
        "assumptions": [*r.assumptions, *(en for en, _ in r.settings_notes)],
        "assumptions_zh": [*(a for a in r.assumptions if a not in job.assumptions), *job.assumptions_zh,
                           *(zh for _, zh in r.settings_notes)],
        "notes": [n.as_dict() for n in r.notes],
        "infeasible": r.infeasible or None,
        "infeasible_zh": r.infeasible_zh or None,
        "frontier": {family: [p.as_dict() for p in pts] for family, pts in r.frontier.items()},
        "fastest_within_budget": _ref(r.fastest_within_budget()),
        "cheapest_within_deadline": _ref(r.cheapest_within_deadline()),
    }


def training_plan(r: PlanResult, max_candidates: int | None = None) -> TrainingPlan:
    """plan_to_dict's JSON, validated: a key the contract does not declare fails here (PlanContractError), not in
    a client."""
    return checked_training_plan(plan_to_dict(r, max_candidates))


def _ref(c: Candidate | None) -> dict[str, object] | None:
    if c is None:
        return None
    return {"instance_type": c.inst.instance_type, "cloud": c.inst.cloud, "gpu": c.gpu.id,
            "nodes": c.strategy.nodes, "total_gpus": c.strategy.total_gpus, "hours": round(c.hours, 2),
            "cost_cny": None if c.cost is None else round(c.cost.total_cny, 2), "strategy": c.strategy.label(),
            "strategy_zh": c.strategy.label_zh()}
