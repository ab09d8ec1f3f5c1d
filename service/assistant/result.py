"""AskResult from a Turn: the typed `answer`, and the per-type fields it replaces (`feasibility`, `comparison`,
`serving`, `diagnose`, ...), kept as documented aliases of `answer` until the next release."""

from __future__ import annotations

from typing import Any

from service.questions.base import AnswerBase
from service.questions.knowledge import FactAnswer, KnowledgeAnswer
from service.questions.plan import PlanAnswer
from service.questions.serving import ServingAnswer
from service.questions.serving import aliases as serving_aliases

FEASIBILITY_KEYS = ("gpu", "gpu_name", "gpu_count", "fits", "per_gpu_gib", "gpu_memory_gib", "usable_gib",
                    "gpus_needed", "needed_per_gpu_gib", "single_gpu_gib", "min_memory_gib", "memory", "strategy",
                    "training_hours", "fits_with", "rent", "options", "other_methods", "plan_pick")
CAPACITY_KEYS = ("use", "target", "gpu", "gpu_count", "gpu_memory_gib", "usable_gib", "max_params_b", "max_seq_len",
                 "max_micro_batch", "per_gpu_gib", "rows", "seq_len")
DIAGNOSE_KEYS = ("observation", "expected", "gpu", "gpu_count", "per_gpu_gib", "usable_gib", "fits",
                 "estimated_hours_per_epoch", "estimated_hours_run", "whole_run", "ratio", "data_unknown",
                 "tokens_in_observed_time", "tokens_per_s", "speedup_vs_reference", "reference_gpus", "causes",
                 "fixes", "host_ram_needed_gib", "rule", "sized")
FACT_KEYS = ("fact", "answer", "gpu", "gpu_family", "clouds", "value", "rows", "elsewhere", "cloud_gpus", "on_request")


def _fact(f: FactAnswer) -> dict[str, Any]:
    art = f.public()
    return {"fact": {k: art.get(k) for k in FACT_KEYS}}


def alias_fields(answer: AnswerBase | None) -> dict[str, Any]:
    """The AskResult fields of today's per-type objects, from the typed answer."""
    if answer is None:
        return {}
    if isinstance(answer, ServingAnswer):
        return serving_aliases(answer)
    if isinstance(answer, KnowledgeAnswer):
        return _fact(answer.fact) if answer.fact is not None else {}
    if isinstance(answer, FactAnswer):
        return _fact(answer)
    art = answer.public()
    kind = art.get("kind")
    if kind in ("feasibility", "min_gpus"):
        return {"feasibility": {k: art.get(k) for k in FEASIBILITY_KEYS if k in art}}
    if kind == "compare":
        return {"comparison": art["comparison"], "winner": art.get("winner")}
    if kind == "savings":
        return {"savings": {k: art.get(k) for k in ("before", "after", "changed", "delta_cny", "delta_hours",
                                                    "saving_cny")}}
    if kind == "capacity":
        return {"capacity": {k: art.get(k) for k in CAPACITY_KEYS}}
    if kind == "diagnose":
        return {"diagnose": {k: art.get(k) for k in DIAGNOSE_KEYS}}
    return {}


def workload_of(answer: AnswerBase | None) -> dict[str, Any] | None:
    """The public Workload the answer was sized for (AskResult.workload)."""
    if isinstance(answer, PlanAnswer):
        return answer.plan.workload.model_dump(mode="json")
    if isinstance(answer, KnowledgeAnswer):
        return None
    art = answer.public() if answer is not None else {}
    w = art.get("workload")
    return w if isinstance(w, dict) else None


def recommendation_of(answer: AnswerBase | None) -> dict[str, Any] | None:
    return answer.plan.model_dump(mode="json") if isinstance(answer, PlanAnswer) else None


def documents_of(answer: AnswerBase | None) -> dict[str, Any]:
    if not isinstance(answer, PlanAnswer) or answer.documents is None:
        return {}
    d = answer.documents
    out: dict[str, Any] = {}
    if d.request_document:
        out["request_document"] = d.request_document
    if d.launch_bundle:
        out["launch_bundle"] = d.launch_bundle
    return out
