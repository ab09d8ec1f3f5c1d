"""The whole plan of a stored turn, on request: a turn stores its answer compact (service/assistant/compact.py), and
`full_result` recomputes the plan the compact one was cut from, by running the turn's question type again on the
turn's stored arguments, with today's catalog and prices. Only the plan is replaced: the text, the verdicts, the
citations and the documents stay as answered. A turn whose arguments no longer plan (a model removed from the
catalog) keeps its compact plan, and the log says why."""

from __future__ import annotations

import logging
from typing import Any

from service.assistant import compact
from service.errors import AdvisorError
from service.questions.base import Context

log = logging.getLogger(__name__)
PLANNED = ("plan", "serving")  # the answer kinds that carry a plan


def full_result(ctx: Context, stored: dict[str, Any], workload: dict[str, Any] | None) -> dict[str, Any]:
    """`stored` (an AskResult's JSON) with its answer's whole plan, recomputed from `workload` (the turn's routed
    arguments); `stored` itself when it is whole already or cannot be recomputed."""
    from service.questions.registry import BY_NAME

    art = stored.get("answer")
    if not isinstance(art, dict) or art.get("kind") not in PLANNED or not compact.is_compact(art) or not workload:
        return stored
    try:
        args = {k: v for k, v in workload.items() if k != "frame"}  # the question's frame is not an argument
        fresh = BY_NAME[str(art["kind"])].call(ctx, args).public()
    except (AdvisorError, ValueError) as exc:  # the catalog changed under it: the compact plan is what there is
        log.warning("the whole plan of a stored %s turn could not be recomputed: %s", art["kind"], exc)
        return stored
    plan = fresh.get("plan")
    if not isinstance(plan, dict):
        return stored
    return {**stored, "answer": {**art, "plan": plan}}
