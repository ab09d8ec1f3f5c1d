"""The question types, listed once. Every surface derives from this list: the assistant's straight path
(service/questions/turn.py), the LLM and MCP tools (their input and output schemas), the API's discriminated
`answer`, the evals' type list, the reader's type table and the Slack and web cards.

Adding a question type (docs/dev.md "Add a question type"): its engine function in service/planner/questions/, its
module here (Args, Answer, run, route, render, summary, description, frames), one line in MODULES below, its
phrases in prompts/questions/<type>.yaml, its eval questions in evals/questions/working/.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field, TypeAdapter

from service.frame import Frame
from service.questions import (
    capacity,
    catalog,
    compare,
    diagnose,
    feasibility,
    knowledge,
    min_gpus,
    out_of_scope,
    plan,
    savings,
    serving,
)
from service.questions.base import AnswerBase, QuestionModule
from service.questions.clarify import ClarifyAnswer
from service.questions.decide import question_type

MODULES: tuple[QuestionModule[Any, Any], ...] = (
    plan.MODULE,
    feasibility.MODULE,
    min_gpus.MODULE,
    compare.MODULE,
    savings.MODULE,
    serving.MODULE,
    capacity.MODULE,
    diagnose.MODULE,
    knowledge.MODULE,
    catalog.MODULE,
    out_of_scope.MODULE,
)
TYPES: tuple[str, ...] = tuple(m.name for m in MODULES)
BY_NAME: dict[str, QuestionModule[Any, Any]] = {m.name: m for m in MODULES}
BY_TOOL: dict[str, QuestionModule[Any, Any]] = {m.tool: m for m in MODULES if m.tool}
# The types whose arguments are a workload a follow-up continues from.
WORKLOAD_TYPES: tuple[str, ...] = tuple(m.name for m in MODULES if m.workload)


@cache
def frame_table() -> dict[tuple[str, str], str]:
    """(task, asked) -> question type, from the modules' declarations; a later module's claim wins."""
    out: dict[tuple[str, str], str] = {}
    for m in MODULES:
        for key in m.frames:
            out[key] = m.name
    return out


if TYPE_CHECKING:
    AnyAnswer = AnswerBase
else:
    AnyAnswer = Annotated[Union[tuple(m.answer for m in MODULES) + (knowledge.FactAnswer, ClarifyAnswer)],  # noqa: UP007
                          Field(discriminator="kind")]


@cache
def answer_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(AnyAnswer)


def parse_answer(data: Any) -> AnswerBase:
    """A typed answer from its JSON (a stored turn, an MCP result), by its kind."""
    out = answer_adapter().validate_python(data)
    assert isinstance(out, AnswerBase)
    return out


def decide(frame: Frame) -> str:
    """The question type of a frame (service/questions/decide.py with the modules' table): what both readers and
    the turn call."""
    return question_type(frame, frame_table())

