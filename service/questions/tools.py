"""The tools derived from the question list, for an LLM (LangChain) and for MCP: one per question type with an
engine call (its Args the input schema, its Answer the output schema, its summary the text beside the result),
plus the engine's own look-ups that are not question types (estimate one setup, search the guide).

    tool_specs()              -> every ToolSpec, question types first
    langchain_tools(ctx)      -> the LangChain tools over the specs (LLM backend only; the offline path calls
                                 the modules directly)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from service.errors import AdvisorError, DependencyUnavailableError
from service.questions.base import AnswerBase, Context, QuestionModule, tool_error
from service.questions.parts import PassageRef
from service.questions.registry import MODULES
from service.questions.summary_text import figure
from service.workload import MAX_NAME_CHARS, Workload


@dataclass(frozen=True)
class ToolSpec:
    """One tool: name, title, description (for the model: when to call it and when not), argument model, the
    run (Context, args) -> a typed result, and its compact summary."""

    name: str
    title: str
    description: str
    args: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[Context, Any], BaseModel]
    summary: Callable[[Any], str]
    question: str | None = None  # the question type, when the tool is one

    def call(self, ctx: Context, raw: Mapping[str, object]) -> BaseModel:
        """Validate the arguments and run (ValidationError and AdvisorError propagate to the adapter)."""
        return self.run(ctx, self.args.model_validate(raw))


class EstimateArgs(Workload):
    """A workload plus the one setup to size (the fields of POST /v1/estimate)."""

    gpu: str = Field(min_length=1, max_length=MAX_NAME_CHARS,
                     description="the GPU, any in the catalog: 4090, 3090, L20, L40S, A10, A100 80G, A800, H800, H20")
    gpus: int = Field(default=1, ge=1, le=4096, description="GPUs to shard over (gpu_count says the same)")
    offload: Literal["none", "optimizer", "all"] = Field(default="none", description="DeepSpeed CPU offload")

    @model_validator(mode="after")
    def _one_count(self) -> EstimateArgs:
        """The workload's gpu_count is the count to size on (it was ignored: 4 sized as 1); given with a different
        gpus, the two disagree."""
        if self.gpu_count is not None and "gpus" in self.model_fields_set and self.gpus != self.gpu_count:
            raise ValueError(f"gpus={self.gpus} and gpu_count={self.gpu_count} disagree; give one of them")
        if self.gpu_count is not None:
            self.gpus = self.gpu_count
        return self


class EstimateResult(BaseModel):
    """service/planner/estimate.py's object (its fields are documented by POST /v1/estimate)."""

    model_config = ConfigDict(extra="allow")

    gpu: str
    gpus: int
    fits: bool
    gpu_memory_gib: float
    training_hours: float


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="the question, in the user's language")
    k: int = Field(default=4, ge=1, le=10)
    lang: Literal["zh", "en"] | None = None
    cloud: Literal["tencent", "jdcloud"] | None = None


class SearchResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    passages: list[PassageRef]
    warnings: list[str] = Field(default_factory=list)


def _estimate(ctx: Context, args: EstimateArgs) -> EstimateResult:
    from service.planner.estimate import EstimateRequest, estimate
    from service.planner.lenient import catalog_for, with_assumptions

    w = Workload.model_validate(args.model_dump(exclude_unset=True, exclude={"gpu", "gpus", "offload"}))
    cat, said = catalog_for(ctx.catalog, w)
    return EstimateResult.model_validate(with_assumptions(
        estimate(EstimateRequest(w, args.gpu, args.gpus, args.offload), cat), said))


def _estimate_summary(e: EstimateResult) -> str:
    """The setup, memory per GPU against the card's, the verdict (fits, tight, does not fit) and the hours."""
    extra = e.model_extra or {}
    verdict = (extra.get("memory_verdict") or {}).get("status") or ("fits" if e.fits else "does_not_fit")
    return (f"{e.gpus}x {e.gpu}: {figure((extra.get('memory') or {}).get('per_gpu_gib'), 'GiB')} per GPU of "
            f"{figure(e.gpu_memory_gib, 'GiB')}, {str(verdict).replace('_', ' ')} (fits={e.fits}), "
            f"{figure(e.training_hours, 'h', ',.2f')}")


def _search(ctx: Context, args: SearchArgs) -> SearchResult:
    if ctx.retriever is None:
        raise DependencyUnavailableError("Knowledge search is not configured on this server.",
                                         "Read the guide sections as resources instead.")
    try:
        retriever = ctx.retriever()
        found = retriever.search(args.query, k=args.k, lang=args.lang, cloud=args.cloud)
    except ImportError as exc:
        raise DependencyUnavailableError(
            f"Knowledge search is unavailable: {exc.name} is not installed.",
            "Install the service extra (pip install -e '.[service]'), or read the guide sections as resources.",
        ) from exc
    passages = [PassageRef.model_validate({**p.to_dict(), "title": f"{p.title} — {p.section}"}) for p in found]
    return SearchResult(query=args.query, passages=passages, warnings=list(getattr(retriever, "warnings", [])))


def _question_spec(m: QuestionModule[Any, Any]) -> ToolSpec:
    assert m.tool is not None and m.args is not None and m.run is not None
    return ToolSpec(m.tool, m.title, " ".join(m.description.split()), m.args, m.answer, m.run, m.summary, m.name)


@cache
def tool_specs() -> tuple[ToolSpec, ...]:
    """The question types' tools (from the registry), then the engine's look-ups."""
    questions = [_question_spec(m) for m in MODULES if m.tool and m.run is not None and m.args is not None]
    extra = [
        ToolSpec("estimate", "Size one setup", " ".join(["Size", "one", "explicit", "setup", "(model", "x", "method", "x", "GPU", "x", "count,", "optional", "CPU", "offload)", "without", "searching", "the", "catalog:", "memory", "per", "GPU", "(weights,", "gradients,", "optimizer,", "activations,", "overhead),", "fit,", "throughput", "and", "hours.", "Use", "plan", "to", "choose", "instances", "and", "check_feasibility", "for", "a", "yes/no", "with", "what", "would", "fit."]),
                 EstimateArgs, EstimateResult, _estimate, _estimate_summary),
        ToolSpec("search_knowledge", "Search the guide", " ".join(["Search", "the", "selection", "guide,", "its", "errata", "and", "the", "catalog", "documents;", "returns", "passages", "with", "their", "ids", "and", "sources.", "Call", "it", "for", "'why'", "/", "'what", "is'", "questions", "(FP8,", "NVLink,", "ZeRO,", "billing", "rules,", "instance", "families)", "and", "to", "cite", "sources.", "No", "figures", "for", "a", "workload:", "use", "plan", "or", "the", "question", "tools."]),
                 SearchArgs, SearchResult, _search,
                 lambda r: "\n\n".join(f"[{p.id}] {p.title}\n{p.text[:600]}" for p in r.passages) or "No passage found."),
    ]
    return (*questions, *extra)


def artifact_of(result: BaseModel) -> dict[str, object]:
    """A tool result as the JSON an LLM turn keeps beside its text (unset fields left out)."""
    if isinstance(result, AnswerBase):
        return result.public()
    return result.model_dump(mode="json", exclude_unset=True)


def langchain_tools(ctx: Context) -> list[Any]:
    """One LangChain StructuredTool per spec, returning (summary, artifact)."""
    from langchain_core.tools import StructuredTool

    def runner(spec: ToolSpec) -> Callable[..., tuple[str, dict[str, object]]]:
        def run(**kwargs: Any) -> tuple[str, dict[str, object]]:
            try:
                result = spec.call(ctx, kwargs)
            except (AdvisorError, ValidationError) as exc:
                return tool_error(exc)
            return spec.summary(result), artifact_of(result)

        return run

    return [StructuredTool.from_function(func=runner(s), name=s.name, description=s.description, args_schema=s.args,
                                         response_format="content_and_artifact") for s in tool_specs()]
