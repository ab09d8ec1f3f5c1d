"""The plan's public JSON (the `plan --json` contract, also the API's and the assistant's artifact)."""

from __future__ import annotations

from service.planner.estimate import model_dict
from service.planner.plan import PlanResult


def plan_to_dict(r: PlanResult, max_candidates: int | None = None) -> dict[str, object]:
    cands = r.candidates if max_candidates is None else r.candidates[:max_candidates]
    picks = {cloud: c.inst.instance_type for cloud, c in r.picks().items()}
    alts = {k: c.inst.instance_type for k, c in r.alternatives().items()}
    extra = [c for c in r.candidates if c.inst.instance_type in set(picks.values()) | set(alts.values())
             and c not in cands]
    job = r.job
    return {
        "workload": r.workload.model_dump(),
        "model": model_dict(job.model),
        "job": {"method": job.method, "quant_bits": job.quant_bits, "seq_len": job.seq_len,
                "tokens_per_epoch": job.tokens_per_epoch, "epochs": job.epochs,
                "tokens_total": job.tokens_total, "samples_per_epoch": job.samples_per_epoch},
        "candidates": [c.as_dict() for c in (*cands, *extra)],
        "n_candidates": len(r.candidates),
        "picks": picks,
        "alternatives": alts,
        "rejected": [{"instance_type": i, "reason": why} for i, why in r.rejected],
        "assumptions": list(r.assumptions),
        "assumptions_zh": [*(a for a in r.assumptions if a not in job.assumptions), *job.assumptions_zh],
        "notes": [n.as_dict() for n in r.notes],
        "infeasible": r.infeasible or None,
        "infeasible_zh": r.infeasible_zh or None,
    }
