"""The MCP tools: one entry per engine function, each the function the assistant's tool of the same question
calls (service/assistant/tools.py, service/assistant/registry.py and intents/), with the same artifact.

A tool is a `ToolSpec`: its name, what it is for (written for the model: when to call it and when not), its
argument model (the input schema), the run function (arguments -> the artifact, every figure from the engine)
and its text summary (summaries.py); its output schema is `OUTPUTS[name]` (outputs.py). Adding a question type
is one entry in `TOOLS`, its summary and its output keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from service.catalog.loader import Catalog
from service.errors import DependencyUnavailableError, InvalidInputError
from service.mcp import summaries
from service.mcp.args import (
    CapacityArgs,
    CatalogSearchArgs,
    CompareArgs,
    DiagnoseArgs,
    EstimateArgs,
    FactArgs,
    FeasibilityArgs,
    InferenceArgs,
    KnowledgeArgs,
    MinGpusArgs,
    SavingsArgs,
)
from service.planner.lenient import Assumption, catalog_for, with_assumptions
from service.retrieval.types import Passage
from service.serving_workload import ServingWorkload
from service.workload import Workload

Artifact = dict[str, Any]
PLAN_CANDIDATES = 10  # as the assistant's plan_training


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


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args: type[BaseModel]
    run: Callable[[McpContext, Any], Artifact]
    summary: Callable[[Artifact], str]


def workload_of(args: BaseModel, extra: frozenset[str]) -> Workload:
    """The workload fields of a tool's arguments (those the caller set), as the assistant's intent tools do."""
    return Workload.model_validate(args.model_dump(exclude_unset=True, exclude=set(extra)))


def run_plan(ctx: McpContext, w: Workload) -> Artifact:
    """The training plan, validated against the plan contract (its outputSchema is TrainingPlan's)."""
    from service.planner.contract import training_json
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict

    cat, said = catalog_for(ctx.catalog(), w)  # a model outside models.yaml, sized from its name and said so
    return training_json(with_assumptions(plan_to_dict(plan(w, cat, max_price_age_days=ctx.max_price_age_days),
                                                       max_candidates=PLAN_CANDIDATES), said))


def _estimate(ctx: McpContext, args: EstimateArgs) -> Artifact:
    from service.planner.estimate import EstimateRequest, estimate

    w = workload_of(args, frozenset({"gpu", "gpus", "offload"}))
    cat, said = catalog_for(ctx.catalog(), w)
    return with_assumptions(estimate(EstimateRequest(w, args.gpu, args.gpus, args.offload), cat), said)


def _feasibility(ctx: McpContext, args: FeasibilityArgs) -> Artifact:
    from service.planner.questions.compare import plan_row
    from service.planner.questions.compare import run_plan as plan_top
    from service.planner.questions.fit import feasibility

    w = workload_of(args, frozenset({"gpu", "method_assumed"})).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog(), w)
    out = with_assumptions(feasibility(cat, w, args.gpu, args.gpu_count or 1), said)
    out["plan_pick"] = plan_row("plan", plan_top(cat, w, ctx.max_price_age_days))
    return out


def _min_gpus(ctx: McpContext, args: MinGpusArgs) -> Artifact:
    from service.planner.questions.fit import min_gpus

    w = workload_of(args, frozenset({"gpu", "method_assumed"})).model_copy(update={"gpu_count": None})
    cat, said = catalog_for(ctx.catalog(), w)
    return with_assumptions(min_gpus(cat, w, args.gpu, args.method_assumed), said)


def _compare(ctx: McpContext, args: CompareArgs) -> Artifact:
    from service.planner.questions.compare import compare

    w = workload_of(args, frozenset({"compare_kind", "options", "by"}))
    cat, _ = catalog_for(ctx.catalog(), w)
    return compare(cat, w, args.compare_kind, args.options, args.by, ctx.max_price_age_days)


def _savings(ctx: McpContext, args: SavingsArgs) -> Artifact:
    from service.api.errors import pydantic_message
    from service.planner.questions.compare import savings

    after = workload_of(args, frozenset({"before", "by"}))
    changes = dict(args.before)
    if changes.get("method", "qlora") != "qlora":
        changes.setdefault("quant_bits", None)
    try:
        before = Workload.model_validate({**after.model_dump(), **changes})
    except ValidationError as exc:
        raise InvalidInputError(f"before: {pydantic_message(exc)}",
                                "`before` holds workload fields only, e.g. {\"method\": \"full\"}.") from exc
    cat, _ = catalog_for(ctx.catalog(), after)
    return {**savings(cat, before, after, ctx.max_price_age_days), "by": args.by}


def _capacity(ctx: McpContext, args: CapacityArgs) -> Artifact:
    from service.planner.questions.capacity import capacity

    w = args.workload()
    cat, said = catalog_for(ctx.catalog(), w)
    return with_assumptions(capacity(cat, w, args.gpu, args.gpu_count, args.target,
                                     method_stated=args.method is not None), said)


def _diagnose(ctx: McpContext, args: DiagnoseArgs) -> Artifact:
    from service.planner.questions.diagnose import diagnose

    w = workload_of(args, frozenset({"gpu", "observation"}))
    cat, said = catalog_for(ctx.catalog(), w)
    return with_assumptions(diagnose(cat, w, args.gpu, w.gpu_count or 1, args.observation), said)


def _fact(ctx: McpContext, args: FactArgs) -> Artifact:
    from service.planner.questions.facts import catalog_fact

    out = catalog_fact(ctx.catalog(), args.fact, args.gpu, list(args.clouds), args.exact)
    if out is None:
        raise InvalidInputError(
            f"gpu: the catalog has no GPU '{args.gpu}' to answer '{args.fact}' about." if args.gpu else
            f"gpu: the fact '{args.fact}' is about one GPU; none was given.",
            "Name a GPU from search_catalog (kind gpus), or ask search_knowledge.")
    return out


def _serving_catalog(ctx: McpContext, w: ServingWorkload) -> tuple[Catalog, list[Assumption]]:
    """The catalog with a model outside models.yaml sized from its name ('llama70b'), as the chat's serving type."""
    return catalog_for(ctx.catalog(), Workload(model=w.model, params_b=w.params_b))


def _plan_serving(ctx: McpContext, w: ServingWorkload) -> Artifact:
    from service.planner.serving_plan import capped, plan_serving

    cat, said = _serving_catalog(ctx, w)
    plan = capped(plan_serving(w, cat, max_price_age_days=ctx.max_price_age_days), PLAN_CANDIDATES)
    return with_assumptions(plan.model_dump(mode="json"), said)


def _size_inference(ctx: McpContext, args: InferenceArgs) -> Artifact:
    from service.planner.serving_inference import inference

    w = ServingWorkload.model_validate(args.model_dump())
    cat, said = _serving_catalog(ctx, w)
    return with_assumptions(inference(w, cat).model_dump(mode="json"), said)


def _search_catalog(ctx: McpContext, args: CatalogSearchArgs) -> Artifact:
    from service.mcp.catalog_search import search_catalog

    return search_catalog(ctx.catalog(), args)


def _search_knowledge(ctx: McpContext, args: KnowledgeArgs) -> Artifact:
    from service.mcp.guide import passage_dict

    if ctx.retriever is None:
        raise DependencyUnavailableError("Knowledge search is not configured on this server.",
                                         "Read the guide sections as resources (resources/list) instead.")
    try:
        retriever = ctx.retriever()
        passages = retriever.search(args.query, k=args.k, lang=args.lang, cloud=args.cloud)
    except ImportError as exc:
        raise DependencyUnavailableError(
            f"Knowledge search is unavailable: {exc.name} is not installed.",
            "Install the service extra (pip install -e '.[service]'), or read the guide sections as resources.",
        ) from exc
    except DependencyUnavailableError as exc:
        raise DependencyUnavailableError(f"Knowledge search is unavailable: {exc.message}",
                                         "Read the guide sections as resources (resources/list) meanwhile. "
                                         + exc.fix) from exc
    return {"query": args.query, "passages": [passage_dict(p) for p in passages],
            "warnings": list(getattr(retriever, "warnings", []))}


def _spec(name: str, title: str, args: type[BaseModel], run: Callable[[McpContext, Any], Artifact],
          summary: Callable[[Artifact], str], description: str) -> ToolSpec:
    return ToolSpec(name, title, " ".join(description.split()), args, run, summary)


TOOLS: tuple[ToolSpec, ...] = (
    _spec("plan", "Plan a training job", Workload, run_plan, summaries.plan, """
        Plan a training job on Tencent Cloud and JD Cloud: the instance per cloud (picks), GPU count, strategy
        (full/LoRA/QLoRA, ZeRO, checkpointing), memory per GPU, hours, cost by billing mode with each price's
        source and date, budget and deadline verdicts, alternatives, rejected options and warnings. Call it for
        any question that describes a training workload and whenever an instance, memory figure, hour or yuan
        is needed; quote its figures, never your own. Not for 'can GPU X run it' (check_feasibility) or
        'what is' questions (search_knowledge)."""),
    _spec("estimate", "Size one setup", EstimateArgs, _estimate, summaries.estimate, """
        Size one explicit setup (model x method x GPU x count, optional CPU offload) without searching the
        catalog: memory per GPU (weights, gradients, optimizer, activations, overhead), fit, throughput and
        hours. Use plan to choose instances and check_feasibility for a yes/no with what would fit."""),
    _spec("check_feasibility", "Does it fit on this GPU?", FeasibilityArgs, _feasibility, summaries.feasibility, """
        Can this model x method run on a named GPU x count (rented or the user's own: 4090, 3090, L40S ...)?
        Returns fits yes/no, the per-GPU memory arithmetic, the fewest cards that fit, the changes that make it
        fit (QLoRA, LoRA, shorter context, offload, more cards), where the GPU can be rented and the plan's
        pick. Call it when the user names a GPU and asks whether it is enough; use plan to choose instances."""),
    _spec("find_min_gpus", "Fewest GPUs", MinGpusArgs, _min_gpus, summaries.min_gpus, """
        The fewest cards of a GPU for a model x method ('how many A100s'), or with no GPU named the least GPU
        memory ('how much VRAM at least'), with the memory arithmetic."""),
    _spec("compare_options", "Compare GPUs, clouds, methods or billing", CompareArgs, _compare,
          summaries.compare, """
        Compare two or more GPUs, clouds, methods or billing modes on the same workload: time, cost and fit side
        by side, and the winner (by cost, or by hours). A GPU no cloud here prices still compares on time and
        fit."""),
    _spec("estimate_savings", "What a change saves", SavingsArgs, _savings, summaries.savings, """
        How much a change saves or costs (method, billing, GPU, cloud, epochs): the plan before (the workload
        with `before` applied) and after, and the difference in yuan and hours."""),
    _spec("capacity", "Largest model, context or batch", CapacityArgs, _capacity, summaries.capacity, """
        The limit on given GPUs x count: the largest model (per method when none is given), the longest
        context, or the largest micro-batch that fits, with the memory arithmetic at the limit."""),
    _spec("diagnose", "Is what I saw expected?", DiagnoseArgs, _diagnose, summaries.diagnose, """
        Check an observed run against the engine: an OOM, the hours per epoch, the memory shown by nvidia-smi,
        low GPU utilisation or host-RAM overflow, for a workload on gpu_count x gpu. Returns the engine's
        figure, whether the observation is expected, the causes that re-sizing confirms, and fixes that fit."""),
    _spec("catalog_fact", "A fact from the catalog", FactArgs, _fact, summaries.fact, """
        One fact answered from the sourced catalog, not from memory: who rents a GPU, its FP8/BF16/FlashAttention
        support, NVLink, memory, bandwidth, TFLOPS, CUDA minimum, RDMA instances, billing rules, regions, the
        price, or the GPUs a cloud sells. Each row carries its source."""),
    _spec("search_catalog", "Search the catalog", CatalogSearchArgs, _search_catalog, summaries.catalog, """
        List catalog rows: GPU specs, instance types (vCPU, RAM, GPUs, RDMA, regions) with their prices, or
        prices alone, filtered by GPU family, cloud, instance type or billing mode; every row with its source,
        date and confidence. Use it to show or check catalog data; use plan to choose."""),
    _spec("search_knowledge", "Search the guide", KnowledgeArgs, _search_knowledge, summaries.knowledge, """
        Search the selection guide, its errata and the catalog documents; returns passages with their ids,
        sources and a guide:// resource to read the whole section. Call it for 'why' / 'what is' questions
        (FP8, NVLink, ZeRO, billing rules, instance families) and to cite sources. No figures for a workload:
        use plan or the question tools."""),
    _spec("plan_serving", "Plan a serving deployment", ServingWorkload, _plan_serving, summaries.plan_serving, """
        Serve (deploy) a model behind vLLM, SGLang, TensorRT-LLM or LMDeploy on Tencent Cloud and JD Cloud: per
        instance, GPUs per replica x replicas for the load (concurrency or request_rate, input/output tokens,
        TTFT/TPOT limits), the KV-cache capacity and max concurrency, output tokens/s, TTFT, TPOT, cost per hour
        and per month (24x7) with the price's source, yuan per million output tokens and the vLLM and SGLang
        launch commands; each cloud's pick, ranked by the objective. Call it for deployment, inference, QPS and
        concurrency questions ('how many GPUs to serve a 70B model'); pin `gpu` (and `gpus`) to plan one GPU
        type. Not for training (plan) or for a GPU no cloud here rents (size_inference)."""),
    _spec("size_inference", "Size serving on one GPU", InferenceArgs, _size_inference, summaries.size_inference, """
        One model served on one named GPU type, no instance search (POST /v1/inference): whether the engine
        starts and why not, weights per GPU, KV bytes per token, the KV pool in tokens, max concurrency, the
        longest sequence that fits, output tokens/s, TTFT and TPOT at the load, and the launch commands. `gpus`
        pins GPUs per replica ('does 2x L20 run Qwen2.5-72B int4'); without it, the fewest that meet the target.
        Works for cards the clouds do not rent (RTX 4090). Use plan_serving for where to rent it and the cost."""),
)
TOOLS_BY_NAME = {t.name: t for t in TOOLS}
