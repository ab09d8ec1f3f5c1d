"""The answer a result carries, read by its `kind`: what every eval reads (a result is an AskResult's JSON, in
process or over HTTP)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from service.questions.base import AnswerBase
from service.questions.registry import parse_answer


def typed_answer(result: Mapping[str, Any]) -> AnswerBase | None:
    """The result's typed answer (service/questions/*); None when it has none that validates."""
    data = result.get("answer")
    if not isinstance(data, Mapping):
        return None
    try:
        return parse_answer(data)
    except (ValidationError, ValueError):
        return None


def plan_of(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """A plan answer's training plan, as the plan contract's JSON; None for any other answer."""
    data = result.get("answer")
    if isinstance(data, Mapping) and data.get("kind") == "plan" and isinstance(data.get("plan"), dict):
        return dict(data["plan"])
    return None
