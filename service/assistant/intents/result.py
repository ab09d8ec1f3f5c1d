"""The question type of a turn and its structured answer, read from the turn's tool artifacts: what AskResult
carries at its top level (`intent`, `feasibility`, `comparison`, `winner`, `savings`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import ToolMessage

from service.assistant.intents.tools import INTENT_TOOLS

_FEASIBILITY_KEYS = ("gpu", "gpu_name", "gpu_count", "fits", "per_gpu_gib", "gpu_memory_gib", "usable_gib",
                     "gpus_needed", "needed_per_gpu_gib", "single_gpu_gib", "min_memory_gib", "memory", "strategy",
                     "training_hours", "fits_with", "rent", "options", "plan_pick")


def intent_fields(tools: Sequence[ToolMessage]) -> dict[str, Any]:
    """{intent, feasibility, comparison, winner, savings, workload} for the turn; workload only when the
    question type's tool carried one (the plan's workload is read elsewhere)."""
    for m in tools:
        art = m.artifact if isinstance(m.artifact, dict) else {}
        intent = INTENT_TOOLS.get(m.name or "")
        if intent is None or intent == "plan" or m.name == "compare_clouds" or "error" in art:
            continue
        out: dict[str, Any] = {"intent": intent, "workload": art.get("workload")}
        if intent in ("feasibility", "min_gpus"):
            out["feasibility"] = {k: art.get(k) for k in _FEASIBILITY_KEYS if k in art}
        elif intent == "compare":
            out["comparison"], out["winner"] = art["comparison"], art["winner"]
        else:
            out["savings"] = {k: art[k] for k in ("before", "after", "changed", "delta_cny", "delta_hours",
                                                  "saving_cny")}
        return out
    planned = any(m.name in ("plan_training", "compare_clouds") for m in tools)
    return {"intent": "plan" if planned else "knowledge"}
