"""LangChain tools over the engine, retrieval and documents. Each returns (short text, structured artifact);
the artifact is what answers, the API and the evals show: the model never writes a figure itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field, ValidationError

from service.assistant.intents.base import tool_error
from service.catalog.loader import Catalog
from service.errors import AdvisorError
from service.workload import Workload

Artifact = dict[str, Any]


@dataclass
class ToolContext:
    catalog: Catalog
    max_price_age_days: int = 180
    retriever: Callable[[], Any] | None = None  # lazily built; raises DependencyUnavailableError when down


def _error(exc: Exception) -> tuple[str, Artifact]:
    return tool_error(exc)


def run_plan(ctx: ToolContext, w: Workload) -> Artifact:
    """The training plan artifact, validated against the plan contract (TrainingPlan) before it leaves the tool."""
    from service.planner.contract import training_json
    from service.planner.lenient import catalog_for, with_assumptions
    from service.planner.plan import plan
    from service.planner.report import plan_to_dict

    cat, said = catalog_for(ctx.catalog, w)  # a model outside models.yaml, sized from its name and said so
    return training_json(with_assumptions(plan_to_dict(plan(w, cat, max_price_age_days=ctx.max_price_age_days),
                                                       max_candidates=10), said))


def plan_summary(p: Artifact) -> str:
    if p.get("infeasible"):
        return f"Infeasible: {p['infeasible']}"
    lines = []
    by_type = {c["instance_type"]: c for c in p["candidates"]}
    for cloud, itype in p["picks"].items():
        c = by_type[itype]
        lines.append(f"{cloud}: {itype} ({c['gpu_count']:g}x {c['gpu']}, {c['strategy']['label']}), "
                     f"{c['memory_per_gpu_gib']}/{c['gpu_memory_gib']} GiB per GPU, {c['training_hours']} h, "
                     + (f"¥{c['total_cost_cny']:,.0f} {c['billing']}" if c['total_cost_cny'] is not None
                      else "price on request") + f", within_budget={c['within_budget']}")
    return "\n".join(lines) or "No candidate."


class EstimateArgs(BaseModel):
    model: str = Field(description="model name or size, e.g. Qwen2-7B or 13B")
    gpu: str = Field(description="GPU name, e.g. A100-80G, A10, T4, 4090")
    method: Literal["full", "lora", "qlora", "freeze", "pretrain"] = "lora"
    quant_bits: Literal[4, 8] | None = None
    gpus: int = Field(default=1, ge=1, le=4096)
    seq_len: int | None = Field(default=None, ge=16)
    micro_batch: int | None = Field(default=None, ge=1)
    zero_stage: Literal[0, 1, 2, 3] | None = None


class SearchArgs(BaseModel):
    query: str = Field(description="the question, in the user's language")
    k: int = Field(default=4, ge=1, le=10)
    lang: Literal["zh", "en"] | None = None
    cloud: Literal["tencent", "jdcloud"] | None = None


class LookupArgs(BaseModel):
    name: str = Field(description="a GPU (A10, H800, 4090) or an instance type (GT4.4XLARGE96)")


class DocumentArgs(Workload):
    lang: Literal["zh", "en"] = "zh"


def make_tools(ctx: ToolContext) -> list[BaseTool]:
    @tool(args_schema=Workload, response_format="content_and_artifact")
    def plan_training(**kwargs: Any) -> tuple[str, Artifact]:
        """Plan a training job on Tencent Cloud and JD Cloud: the instance per cloud, GPU count, strategy
        (full/LoRA/QLoRA, ZeRO, checkpointing), memory check, hours, cost by billing mode with the price's
        source, budget and deadline verdicts, alternatives and warnings. Call it for every question that
        describes a training workload, and whenever a figure (instance, memory, hours, yuan) is needed.
        Do not call it for pure 'what is' questions: use search_knowledge."""
        try:
            p = run_plan(ctx, Workload.model_validate(kwargs))
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return plan_summary(p), p

    @tool(args_schema=EstimateArgs, response_format="content_and_artifact")
    def estimate_memory(**kwargs: Any) -> tuple[str, Artifact]:
        """Memory per GPU (weights, gradients, optimizer, activations, overhead), fit, throughput and hours for
        one explicit setup (model x method x GPU x count). Use it when the user names a GPU and asks whether
        a model fits; use plan_training to choose instances."""
        from service.planner.estimate import EstimateRequest, estimate

        try:
            args = EstimateArgs.model_validate(kwargs)
            w = Workload(model=args.model, method=args.method, quant_bits=args.quant_bits,
                         seq_len=args.seq_len, micro_batch=args.micro_batch, zero_stage=args.zero_stage)
            out = estimate(EstimateRequest(w, args.gpu, args.gpus), ctx.catalog)
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        mem = out["memory"]
        assert isinstance(mem, dict)
        return (f"{out['gpu']} x{args.gpus}: {mem['per_gpu_gib']} GiB per GPU of {out['gpu_memory_gib']} GiB, "
                f"fits={out['fits']}, {out['training_hours']} h"), out

    @tool(args_schema=SearchArgs, response_format="content_and_artifact")
    def search_knowledge(query: str, k: int = 4, lang: str | None = None, cloud: str | None = None,
                         ) -> tuple[str, Artifact]:
        """Search the selection guide, the errata and the catalog documents; returns passages with citation
        ids. Call it for 'why' / 'what is' questions (FP8, NVLink, ZeRO, billing rules, instance families)
        and to cite sources in a recommendation."""
        if ctx.retriever is None:
            return "Knowledge search is not configured.", {"passages": [], "unavailable": "not configured"}
        try:
            retriever = ctx.retriever()
            passages = retriever.search(query, k=k, lang=lang, cloud=cloud)
        except AdvisorError as exc:
            return f"Knowledge search unavailable: {exc}", {"passages": [], "unavailable": str(exc)}
        items = [{**p.to_dict(), "title": f"{p.title} — {p.section}"} for p in passages]
        text = "\n\n".join(f"[{p['id']}] {p['title']}\n{p['text'][:600]}" for p in items)
        return text or "No passage found.", {"passages": items}

    @tool(args_schema=LookupArgs, response_format="content_and_artifact")
    def lookup_catalog(name: str) -> tuple[str, Artifact]:
        """Look up one GPU's specs (memory, BF16/FP8 support, NVLink, CUDA minimum) or one instance type with
        its prices and their sources. Use it when the user asks about a specific GPU or instance."""
        from service.catalog.queries import find_instance, prices_for, resolve_gpu
        from service.cli.catalog_cmd import instance_dict

        inst = find_instance(name, ctx.catalog.instances)
        if inst is not None:
            d = instance_dict(inst, list(prices_for(inst.instance_type, ctx.catalog.prices)))
            return f"{inst.instance_type}: {inst.gpu_count:g}x {inst.gpu}, {inst.vcpus} vCPU, {inst.memory_gib} GiB", {
                "instance": d}
        try:
            g, note = resolve_gpu(name, ctx.catalog.gpus)
        except AdvisorError as exc:
            return _error(exc)
        sold = sorted(r.instance_type for r in ctx.catalog.instances if r.gpu == g.id)
        gd = {**g.model_dump(mode="json"), "resolution_note": note, "sold_as": sold}
        cuda = f"min CUDA {g.min_cuda}" if g.min_cuda else f"not NVIDIA: no CUDA, runs {g.software_stack}"
        rented = "" if sold else "; no instance in this catalog rents it"
        return (f"{g.name}: {g.memory_gib:g} GiB, BF16={g.supports_bf16}, FP8={g.supports_fp8}, "
                f"{g.link_name}={g.nvlink_gb_s:g} GB/s, {cuda}{rented}"), {"gpu": gd}

    @tool(args_schema=Workload, response_format="content_and_artifact")
    def compare_clouds(**kwargs: Any) -> tuple[str, Artifact]:
        """Compare Tencent Cloud and JD Cloud for one workload: each cloud's best instance, hours and cost."""
        try:
            p = run_plan(ctx, Workload.model_validate({**kwargs, "clouds": []}))
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        by_type = {c["instance_type"]: c for c in p["candidates"]}
        picks = {cloud: by_type[t] for cloud, t in p["picks"].items()}
        return plan_summary(p), {"picks": picks, "plan": p}

    @tool(args_schema=DocumentArgs, response_format="content_and_artifact")
    def generate_request_document(lang: str = "zh", **kwargs: Any) -> tuple[str, Artifact]:
        """Write the resource-request document 《AI训练资源申请说明》 (or its English version) for a workload, in
        Markdown (DOCX from the API). Call it only when the user asks for the document."""
        from service.documents import render_request_markdown

        try:
            p = run_plan(ctx, Workload.model_validate(kwargs))
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        md = render_request_markdown(p, "en" if lang == "en" else "zh")
        return md[:400], {"markdown": md, "plan": p, "lang": lang}

    @tool(args_schema=DocumentArgs, response_format="content_and_artifact")
    def generate_launch_bundle(lang: str = "zh", **kwargs: Any) -> tuple[str, Artifact]:
        """Write the launch bundle for a workload: LLaMA-Factory YAML, DeepSpeed JSON, launch and monitoring
        scripts matched to the plan. Call it only when the user asks for a launch script or config."""
        from service.documents import build_launch_bundle

        try:
            p = run_plan(ctx, Workload.model_validate(kwargs))
            bundle = build_launch_bundle(p, ctx.catalog, "en" if lang == "en" else "zh")
        except (AdvisorError, ValidationError) as exc:
            return _error(exc)
        return f"Bundle files: {', '.join(bundle.files)}", {"files": dict(bundle.files), "plan": p}

    from service.assistant.registry import make_question_tools

    return [plan_training, estimate_memory, search_knowledge, lookup_catalog, compare_clouds,
            generate_request_document, generate_launch_bundle, *make_question_tools(ctx)]
