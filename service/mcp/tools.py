"""The MCP tools: the question spine's tools (service/questions/tools.py, derived from the question list: the
input schema is each module's Args, the output schema its Answer) and three catalog and serving look-ups that are
not question types (search_catalog, plan_serving, size_inference); MERGED names the spine's tools those answer.

A tool answers with a compact text summary (the pick per cloud, price and its date, memory, time, verdicts) and a
compact structured result (the answer with its long lists cut to what an agent reads: see `compact`); the whole
result only when the call asks `detail: "full"`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from service.catalog.loader import Catalog
from service.errors import InvalidInputError
from service.mcp import summaries
from service.mcp.args import CatalogSearchArgs, InferenceArgs
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingPlan
from service.questions.base import Context
from service.questions.tools import ToolSpec, tool_specs
from service.retrieval.types import Passage
from service.serving_workload import ServingWorkload
from service.workload import Workload

PLAN_CANDIDATES = 10  # as the assistant's plan


class Searcher(Protocol):
    """What search_knowledge needs from service.retrieval.hybrid.Retriever."""

    @property
    def warnings(self) -> list[str]: ...

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None) -> list[Passage]: ...


@dataclass(frozen=True)
class McpContext:
    """What the tools read. `catalog` and `retriever` are called on each use, so a server starts before either
    has loaded and a retriever that cannot load fails only search_knowledge, with the reason."""

    catalog: Callable[[], Catalog]
    guide_dir: Path
    max_price_age_days: int = 180
    retriever: Callable[[], Searcher] | None = None

    def spine(self) -> Context:
        return Context(self.catalog, self.max_price_age_days, self.retriever)


class CatalogRows(BaseModel):
    """search_catalog's answer: the rows matched (GPU specs, instances with prices, or prices), each with its
    source, date and confidence."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    filters: dict[str, str | int | float | bool] = Field(default_factory=dict)
    matched: int
    rows: list[dict[str, Any]]


def _serving_catalog(ctx: Context, w: ServingWorkload) -> tuple[Catalog, list[Any]]:
    """The catalog with a model outside models.yaml sized from its name ('llama70b'), as the chat's serving type."""
    return catalog_for(ctx.catalog, Workload(model=w.model, params_b=w.params_b))


def _plan_serving(ctx: Context, w: ServingWorkload) -> ServingPlan:
    from service.planner.serving_plan import capped, plan_serving

    cat, said = _serving_catalog(ctx, w)
    plan = capped(plan_serving(w, cat, max_price_age_days=ctx.max_price_age_days), PLAN_CANDIDATES)
    return ServingPlan.model_validate(with_assumptions(plan.model_dump(mode="json"), said))


def _size_inference(ctx: Context, args: InferenceArgs) -> InferenceResult:
    from service.planner.serving_inference import inference

    w = ServingWorkload.model_validate(args.model_dump())
    cat, said = _serving_catalog(ctx, w)
    return InferenceResult.model_validate(with_assumptions(inference(w, cat).model_dump(mode="json"), said))


def _search_catalog(ctx: Context, args: CatalogSearchArgs) -> CatalogRows:
    from service.mcp.catalog_search import search_catalog

    return CatalogRows.model_validate(search_catalog(ctx.catalog, args))


def _spec(name: str, title: str, args: type[BaseModel], output: type[BaseModel], run: Callable[[Context, Any], Any],
          summary: Callable[[Any], str], description: str) -> ToolSpec:
    return ToolSpec(name, title, " ".join(description.split()), args, output, run, summary)


EXTRA: tuple[ToolSpec, ...] = (
    _spec("search_catalog", "Search the catalog", CatalogSearchArgs, CatalogRows, _search_catalog, summaries.catalog,
          """
        List catalog rows: instance types (GPUs x memory, vCPU, RAM, network, RDMA, FP8) with the price of each
        billing rule (¥, ¥ per GPU-hour, ¥ per dense BF16 TFLOPS-hour), prices alone, or GPU specs; filtered by
        cloud, GPU family (A100 = every A100 SKU), memory per card (min_memory_gb), cards per instance
        (min_cards), RDMA, FP8 or billing (instances with a price under it), sorted by price, price per GPU-hour
        or price per TFLOPS-hour. Every price with its date (or when an undated page was captured), confidence
        and source; an instance sold only through sales is price_on_request with the quote link. Use it to show
        or compare catalog rows; use plan to choose for a job."""),
    _spec("plan_serving", "Plan a serving deployment", ServingWorkload, ServingPlan, _plan_serving,
          summaries.plan_serving, """
        Serve (deploy) a model behind vLLM, SGLang, TensorRT-LLM or LMDeploy on Tencent Cloud and JD Cloud: per
        instance, GPUs per replica x replicas for the load (concurrency or request_rate, input/output tokens,
        TTFT/TPOT limits), the KV-cache capacity and max concurrency, output tokens/s, TTFT, TPOT, cost per hour
        and per month (24x7) with the price's source, yuan per million output tokens and the vLLM and SGLang
        launch commands; each cloud's pick, ranked by the objective. Call it for deployment, inference, QPS and
        concurrency questions ('how many GPUs to serve a 70B model'); pin `gpu` (and `gpus`) to plan one GPU
        type. Not for training (plan) or for a GPU no cloud here rents (size_inference)."""),
    _spec("size_inference", "Size serving on one GPU", InferenceArgs, InferenceResult, _size_inference,
          summaries.size_inference, """
        One model served on one named GPU type, no instance search (POST /v1/inference): whether the engine
        starts and why not, weights per GPU, KV bytes per token, the KV pool in tokens, max concurrency, the
        longest sequence that fits, output tokens/s, TTFT and TPOT at the load, and the launch commands. `gpus`
        pins GPUs per replica ('does 2x L20 run Qwen2.5-72B int4'); without it, the fewest that meet the target.
        Works for cards the clouds do not rent (RTX 4090). Use plan_serving for where to rent it and the cost."""),
)


# The spine's tools an MCP tool already answers (three overlapped, and an agent paid for each on every request):
# the name, and what to call instead (an unknown-tool error says it).
MERGED: dict[str, str] = {
    "size_serving": "plan_serving (where to rent a serving deployment, GPUs per replica x replicas, cost) or "
                    "size_inference (one GPU type, rented or not)",
    "ask_knowledge": "search_knowledge (the guide's passages) and catalog (ask=fact: a catalog fact)",
    "catalog_fact": "catalog with ask=fact (the same fields: fact, gpu, clouds, exact, family, place)",
}


def _fact_named(spec: ToolSpec) -> ToolSpec:
    """The catalog tool, refusing a fact about a GPU the catalog does not have (the chat says so in words; a tool
    caller gets an error naming the field), as catalog_fact did."""

    def run(ctx: Context, args: Any) -> Any:
        out = spec.run(ctx, args)
        if getattr(args, "ask", None) == "fact" and getattr(out, "fact", None) is None and args.gpu:
            raise InvalidInputError(f"gpu: the catalog has no GPU '{args.gpu}' to answer '{args.fact}' about.",
                                    "Name a GPU from search_catalog (kind gpus), or ask search_knowledge.")
        return out

    return replace(spec, run=run)


@cache
def mcp_tools() -> tuple[ToolSpec, ...]:
    """Every MCP tool: the spine's (question types, estimate, search_knowledge) but those MERGED, then the catalog
    and serving look-ups."""
    return tuple(_fact_named(t) if t.name == "catalog" else t for t in (*tool_specs(), *EXTRA) if t.name not in MERGED)


def tools_by_name() -> dict[str, ToolSpec]:
    return {t.name: t for t in mcp_tools()}
