"""The question types, one entry each (service/assistant/intents/base.py:QuestionType): the tool an LLM or the
offline model calls, its arguments, the engine call, how a message routes to it, how its artifact is written, and
what AskResult carries. Adding a question type: its engine function (service/planner/questions/), its module under
service/assistant/intents/ with a QuestionType, one line here, its phrases, its eval questions (docs/dev.md).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ValidationError

from service.assistant.intents.base import Artifact, Ask, Missing, Phrases, QuestionType, tool_error
from service.assistant.intents.capacity import CAPACITY
from service.assistant.intents.compare_types import COMPARE, SAVINGS
from service.assistant.intents.diagnose import DIAGNOSE
from service.assistant.intents.fit_types import FEASIBILITY, MIN_GPUS
from service.assistant.intents.knowledge import KNOWLEDGE
from service.assistant.intents.serving import SERVING
from service.errors import AdvisorError
from service.workload import Workload


def _route_plan(a: Ask) -> dict[str, Any] | Missing:
    if not (a.slots.get("model") or a.slots.get("params_b")):
        return Missing("model")
    return dict(a.slots)


def _no_render(art: Artifact, ph: Phrases) -> str:
    return ""


# `plan` is answered by plan_training (service/assistant/tools.py) and written by service/assistant/answer.py;
# its entry routes it and names its result, like the others.
PLAN = QuestionType(name="plan", tool="plan_training", args=Workload, run=None, summary=lambda o: "",
                    route=_route_plan, render=_no_render, result=lambda o: {}, follows=False)
OUT_OF_SCOPE = QuestionType(name="out_of_scope", tool=None, args=None, run=None, summary=lambda o: "",
                            route=lambda a: None, render=_no_render, result=lambda o: {}, follows=False)

REGISTRY: dict[str, QuestionType] = {q.name: q for q in (
    PLAN, FEASIBILITY, MIN_GPUS, COMPARE, SAVINGS, SERVING, CAPACITY, DIAGNOSE, KNOWLEDGE, OUT_OF_SCOPE)}
TYPES: tuple[str, ...] = tuple(REGISTRY)
BY_TOOL: dict[str, QuestionType] = {q.tool: q for q in REGISTRY.values() if q.tool}
# The tools whose arguments are the turn's workload (a follow-up continues from them).
WORKLOAD_TOOLS: tuple[str, ...] = ("plan_training", "compare_clouds", "generate_request_document",
                                   "generate_launch_bundle", *(q.tool for q in REGISTRY.values()
                                                               if q.tool and q.name not in ("plan", "knowledge")))


def make_question_tools(ctx: Any) -> list[BaseTool]:
    """One LangChain tool per question type with an engine call (plan_training is made in tools.py)."""
    out: list[BaseTool] = []
    for qt in REGISTRY.values():
        if qt.tool is None or qt.run is None or qt.args is None:
            continue
        out.append(StructuredTool.from_function(func=_runner(qt, ctx), name=qt.tool, description=qt.doc,
                                                args_schema=qt.args, response_format="content_and_artifact"))
    return out


def _runner(qt: QuestionType, ctx: Any) -> Any:
    def run(**kwargs: Any) -> tuple[str, Artifact]:
        assert qt.args is not None and qt.run is not None  # filtered in make_question_tools
        try:
            art = qt.run(ctx, qt.args.model_validate(kwargs))
        except (AdvisorError, ValidationError) as exc:
            return tool_error(exc)
        return qt.summary(art), art

    return run
