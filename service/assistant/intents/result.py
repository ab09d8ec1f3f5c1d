"""The question type of a turn and its structured answer, read from the turn's messages: what AskResult carries at
its top level (`intent`, the type's object such as `feasibility` or `diagnose`, `reading`, `slots`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from service.assistant.registry import BY_TOOL


def intent_fields(turn: Sequence[BaseMessage]) -> dict[str, Any]:
    """{intent, <the type's result fields>, workload, reading, slots} for the turn. The type is the reading's when
    the offline model read the message; an LLM's turn takes it from the tools it called."""
    reading: dict[str, Any] = next((m.additional_kwargs["reading"] for m in turn if isinstance(m, AIMessage)
                                    and isinstance(m.additional_kwargs.get("reading"), dict)), {})
    tools = [m for m in turn if isinstance(m, ToolMessage)]
    out: dict[str, Any] = {}
    if reading:
        out["reading"] = {k: reading.get(k) for k in ("type", "confidence", "alternative", "scores")}
        out["slots"] = reading.get("slots") or {}
    for m in tools:
        art = m.artifact if isinstance(m.artifact, dict) else {}
        qt = BY_TOOL.get(m.name or "")
        if qt is None or qt.name == "plan" or "error" in art:
            continue
        if reading.get("type") == "knowledge" and qt.name != "knowledge":
            continue  # a workload sized inside a knowledge answer
        return {**out, "intent": reading.get("type") or qt.name, "workload": art.get("workload"), **qt.result(art)}
    planned = any(m.name in ("plan_training", "compare_clouds") for m in tools)
    intent = reading.get("type") or ("plan" if planned else "knowledge")
    return {**out, "intent": intent}
