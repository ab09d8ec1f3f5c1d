"""What every question type shares: the registry entry's shape, what routing sees, the tool arguments' base, and
the conversion of an engine error into a tool result. A question type is one module under intents/ that builds a
`QuestionType`; service/assistant/registry.py lists them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from service.errors import AdvisorError
from service.reader.read import Reading
from service.workload import Workload

Artifact = dict[str, Any]
Phrases = dict[str, Any]
# Arguments of the question-type tools that are not workload fields.
EXTRA_ARGS = frozenset({"gpu", "gpu_count_asked", "options", "compare_kind", "by", "before", "lang", "question",
                        "also", "target", "method_stated", "observation", "fact", "exact", "serving"})


class Asked(Workload):
    """A workload plus the question type it answers (kept so a follow-up continues the same question) and, when
    the reader was unsure, the other reading (said in one line of the answer)."""

    question: str | None = Field(default=None, description="the question type (kept for follow-ups)")
    also: str | None = Field(default=None, description="another reading of the question, to mention")


@dataclass(frozen=True)
class Previous:
    """The last question-type call of earlier turns: its type, its arguments and its workload."""

    type: str
    args: dict[str, Any]
    workload: Workload | None


@dataclass(frozen=True)
class Missing:
    """Routing found the question type but not a slot that changes the answer: ask for it (one question)."""

    slot: str


@dataclass(frozen=True)
class Ask:
    """What routing sees: the reading, the workload slots of the conversation so far (earlier workload with this
    message applied), the previous call, the message and the answer language."""

    reading: Reading
    slots: dict[str, Any]
    prev: Previous | None
    text: str
    lang: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def same_type(self) -> bool:
        return self.prev is not None and self.prev.type == self.reading.type


Route = Callable[[Ask], "dict[str, Any] | Missing | None"]


@dataclass(frozen=True)
class QuestionType:
    """One question type: its tool (name, arguments, engine call, one-line summary), how a message becomes the
    tool's arguments, how the artifact becomes the answer, and what AskResult carries for it."""

    name: str
    tool: str | None
    args: type[BaseModel] | None
    run: Callable[[Any, Any], Artifact] | None  # (ToolContext, validated args) -> artifact
    summary: Callable[[Artifact], str]
    route: Route
    render: Callable[[Artifact, Phrases], str]
    result: Callable[[Artifact], dict[str, Any]]
    doc: str = ""
    follows: bool = True  # a follow-up without type words keeps this type


def tool_error(exc: Exception) -> tuple[str, Artifact]:
    """An engine or validation error as a tool result the model (and the user) can act on."""
    if isinstance(exc, AdvisorError):
        return f"Error: {exc}", {"error": exc.to_dict()}
    if isinstance(exc, ValidationError):
        from service.cli.common import validation_line

        line = validation_line(exc)
        return f"Error: {line}", {"error": {"code": "invalid_input", "message": line, "fix": ""}}
    raise exc


def workload_of(args: BaseModel) -> Workload:
    """The workload fields of a question-type tool's arguments (the ones the caller set)."""
    return Workload.model_validate({k: v for k, v in args.model_dump(exclude_unset=True).items()
                                    if k not in EXTRA_ARGS and k in Workload.model_fields})
