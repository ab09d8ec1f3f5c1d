"""What every question type of the spine declares, and what routing and running see.

A question type is one module of service/questions that builds a `QuestionModule`:

    Args         pydantic: the arguments of its engine call (the LLM's and MCP's tool input schema)
    Answer       pydantic: its typed answer, discriminated by `kind` (the tools' output schema, the API's `answer`)
    run          (Context, Args) -> Answer: the engine call; every figure comes from the engine
    route        (Ask) -> Args | Missing | None: the frame and the conversation read into its arguments, or the one
                 slot to ask for (None: answered as knowledge instead)
    render       (Answer, Phrases) -> str: the answer, its first line first
    summary      (Answer) -> str: a compact line for agents, MCP and Slack
    description  what the tool does and when to call it, written for the model

service/questions/registry.py lists the modules; every surface derives from that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.catalog.loader import Catalog
from service.errors import AdvisorError, InvalidInputError, validation_line
from service.frame import Frame
from service.questions.phrases import Phrases as Phrases  # what `render` reads (re-exported)
from service.workload import Workload

if TYPE_CHECKING:
    from service.reader.read import Reading
# Arguments of the question-type tools that are not workload fields.
EXTRA_ARGS = frozenset({"gpu", "gpu_count_asked", "options", "compare_kind", "by", "before", "lang", "question",
                        "also", "target", "method_stated", "observation", "fact", "exact", "serving"})


class Searcher(Protocol):
    """What the knowledge and citation look-ups need from service.retrieval.hybrid.Retriever."""

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None) -> list[Any]: ...


@dataclass(frozen=True)
class Context:
    """What `run` reads: the catalog (a callable, so a server starts before it has loaded), the price age after
    which a price is flagged, and the knowledge search (a callable that may raise DependencyUnavailableError)."""

    catalog_of: Callable[[], Catalog]
    max_price_age_days: int = 180
    retriever: Callable[[], Searcher] | None = None

    @property
    def catalog(self) -> Catalog:
        return self.catalog_of()

    @classmethod
    def of(cls, catalog: Catalog, max_price_age_days: int = 180,
           retriever: Callable[[], Searcher] | None = None) -> Context:
        return cls(lambda: catalog, max_price_age_days, retriever)


class AnswerBase(BaseModel):
    """Every typed answer: `kind` names its type; fields the engine did not set are absent in JSON."""

    model_config = ConfigDict(extra="forbid")

    asked: str | None = Field(default=None, description="what the question asked (the frame's `asked`): the "
                              "first line answers it")

    def public(self) -> dict[str, object]:
        """The answer as JSON, without the fields the engine left unset (what renderers and clients read); its
        `kind` always."""
        out = self.model_dump(mode="json", exclude_unset=True)
        if "kind" in type(self).model_fields:
            out["kind"] = self.__dict__["kind"]
        return out

    def facts(self) -> dict[str, float]:
        """The answer's headline figures by the names the evals check (service/evals/questions/labels.py)."""
        return {}


class Asked(Workload):
    """A workload plus the question type it answers (kept so a follow-up continues the same question) and, when
    the reader was unsure, the other reading (said in one line of the answer)."""

    question: str | None = Field(default=None, description="the question type (kept for follow-ups)")
    also: str | None = Field(default=None, description="another reading of the question, to mention")
    asked: str | None = Field(default=None, description="what the question asks (the frame's `asked`: fits, count, "
                              "memory, time, cost ...): the answer's first line answers it")


@dataclass(frozen=True)
class Previous:
    """The last question of earlier turns: its type, its arguments, its workload and its frame."""

    type: str
    args: dict[str, object]
    workload: Workload | None
    frame: Frame | None = None


@dataclass(frozen=True)
class Missing:
    """Routing found the question type but not a slot that changes the answer: ask for it (one question).
    `name` is what the question names ('Hunyuan-Large 多大？')."""

    slot: str
    name: str | None = None


@dataclass(frozen=True)
class Ask:
    """What routing sees: the question's frame (the conversation's, when the message continues the last question),
    the previous question, the answer language and how the message was read (its type and confidence). Routes read
    the frame; `slots`, `text` and `extra` remain for the diagnosis's route until it reads the frame too."""

    frame: Frame
    prev: Previous | None = None
    lang: str = "zh"
    reading: Reading | None = None
    slots: dict[str, object] = field(default_factory=dict)
    text: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def same_type(self) -> bool:
        return self.prev is not None and self.reading is not None and self.prev.type == self.reading.type

    @property
    def read(self) -> Reading:
        """How the message was read (the diagnosis's route; the turn always sets it)."""
        if self.reading is None:
            raise RuntimeError("this route needs the message's reading")
        return self.reading


A = TypeVar("A", bound=BaseModel)
R = TypeVar("R", bound=AnswerBase)


@dataclass(frozen=True)
class QuestionModule(Generic[A, R]):
    """One question type (see the module docstring)."""

    name: str
    tool: str | None
    title: str
    args: type[A] | None
    answer: type[R]
    run: Callable[[Context, A], R] | None
    route: Callable[[Ask], A | dict[str, object] | Missing | None]
    render: Callable[[R, Phrases], str]
    summary: Callable[[R], str]
    description: str = ""
    follows: bool = True  # a follow-up without type words keeps this type
    frames: tuple[tuple[str, str], ...] = ()  # (task, asked) pairs of the question frame this type answers
    workload: bool = True  # its arguments are a job a follow-up continues ('那京东云呢' changes one field of it)

    def call(self, ctx: Context, raw: dict[str, object] | BaseModel) -> R:
        """Validate raw arguments (or take routed ones) and run the engine (InvalidInputError names a bad
        argument)."""
        if self.args is None or self.run is None:
            raise InvalidInputError(f"The question type {self.name} takes no tool call.", "Ask it in words.")
        try:
            args = raw if isinstance(raw, self.args) else self.args.model_validate(
                raw.model_dump(exclude_unset=True) if isinstance(raw, BaseModel) else raw)
        except ValidationError as exc:
            raise InvalidInputError(validation_line(exc), "Correct the argument named and call again.") from exc
        return self.run(ctx, args)


def tool_error(exc: Exception) -> tuple[str, dict[str, object]]:
    """An engine or validation error as a tool result the model (and the user) can act on."""
    if isinstance(exc, AdvisorError):
        return f"Error: {exc}", {"error": exc.to_dict()}
    if isinstance(exc, ValidationError):
        line = validation_line(exc)
        return f"Error: {line}", {"error": {"code": "invalid_input", "message": line, "fix": ""}}
    raise exc


def workload_of(args: BaseModel) -> Workload:
    """The workload fields of a question-type tool's arguments (the ones the caller set)."""
    return Workload.model_validate({k: v for k, v in args.model_dump(exclude_unset=True).items()
                                    if k not in EXTRA_ARGS and k in Workload.model_fields})
