"""What an AskResult carries beside its typed `answer`: the workload the answer was sized for and the documents asked
for. Everything else a client draws (the plan, the serving card, a verdict, a fact) it reads from `answer` by its
`kind`."""

from __future__ import annotations

from typing import Any

from service.questions.base import AnswerBase
from service.questions.knowledge import KnowledgeAnswer
from service.questions.plan import PlanAnswer


def workload_of(answer: AnswerBase | None) -> dict[str, Any] | None:
    """The public Workload the answer was sized for (AskResult.workload), as the answer states it."""
    if isinstance(answer, PlanAnswer):
        return answer.plan.workload.model_dump(mode="json")
    if answer is None or isinstance(answer, KnowledgeAnswer):
        return None
    w = answer.public().get("workload")
    return w if isinstance(w, dict) else None


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
