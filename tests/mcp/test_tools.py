"""The tools through the SDK's client (in memory): the list (derived from the question list: each question type's
Args is its input schema, less what the tool does not take; no output schemas: service/mcp/outputs.py), the
guide's workload planned on both clouds, the questions' verdicts, structured output that is the answer model's,
compact by default and whole on request, and errors that name the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp import types

from service.catalog.loader import Catalog
from service.errors import DependencyUnavailableError
from service.mcp.args import InferenceArgs
from service.mcp.fields import HIDDEN, NOT_TAKEN
from service.mcp.tools import MERGED, mcp_tools
from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan
from service.questions.plan import PlanAnswer, PlanArgs
from service.questions.registry import MODULES
from service.questions.tools import EstimateArgs
from service.serving_workload import ServingWorkload
from tests.mcp.conftest import GUIDE_WORKLOAD, LORA_14B_ON_4090, in_memory, make_context

pytestmark = [pytest.mark.slow]

Call = Callable[[str, dict[str, Any]], types.CallToolResult]
NAMES = [*(m.tool for m in MODULES if m.tool and m.tool not in MERGED), "estimate", "search_knowledge",
         "search_catalog", "plan_serving", "size_inference"]


def test_lists_every_tool_with_schemas(context: Any) -> None:
    listed = in_memory(context, lambda s: s.list_tools()).tools
    assert [t.name for t in listed] == NAMES == [t.name for t in mcp_tools()]
    by_name = {t.name: t for t in listed}
    # each input schema is its argument model's (the plan's: the API's workload, POST /v1/plan, plus the documents
    # asked for), less the chat's follow-up bookkeeping, the workload's constant `kind` and the fields the tool does
    # not take, plus `detail`
    for name, model in (("plan", PlanArgs), ("estimate", EstimateArgs), ("plan_serving", ServingWorkload),
                        ("size_inference", InferenceArgs)):
        fields = set(model.model_json_schema()["properties"]) - HIDDEN - {"kind"} - NOT_TAKEN.get(name, (frozenset(), ""))[0]
        assert set(by_name[name].inputSchema["properties"]) == fields | {"detail"}
        assert by_name[name].inputSchema["additionalProperties"] is False
    # its rules between fields are said in the description, not as a root allOf: Anthropic's and OpenAI's APIs
    # refuse a tool input schema with allOf/anyOf/oneOf at the top level
    assert "give model or params_b" in by_name["plan"].inputSchema["description"]
    assert "give concurrency or request_rate, not both" in by_name["plan_serving"].inputSchema["description"]
    for t in listed:
        assert not {"allOf", "anyOf", "oneOf", "not", "if", "enum"} & set(t.inputSchema), t.name
        assert t.inputSchema["type"] == "object" and t.outputSchema is None
        assert t.description and t.annotations and t.annotations.readOnlyHint


def test_plan_guide_workload_on_both_clouds(mcp_call: Call) -> None:
    r = mcp_call("plan", GUIDE_WORKLOAD)
    assert not r.isError
    assert r.structuredContent is not None and r.structuredContent["kind"] == "plan"
    plan = r.structuredContent["plan"]
    assert set(plan["picks"]) == {"tencent", "jdcloud"}
    assert plan["workload"]["samples"] == 100000 and plan["workload"]["budget_period"] == "month"
    summary = r.content[0].text  # type: ignore[union-attr]
    assert all(f"{cloud}: {itype}" in summary for cloud, itype in plan["picks"].items())
    assert "(price " in summary and "GiB per GPU" in summary  # the price's date and the memory, in the text
    picked = [c for c in plan["candidates"] if c["instance_type"] in plan["picks"].values()]
    assert all(c["price"]["source"] and (c["price"]["as_of"] or c["price"]["captured"]) for c in picked)  # every price with source and date


def test_plan_results_are_agent_sized_and_whole_on_request(mcp_call: Call) -> None:
    r = mcp_call("plan", GUIDE_WORKLOAD)
    text = sum(len(c.text) for c in r.content if isinstance(c, types.TextContent))
    assert text <= 8000 and len(json.dumps(r.structuredContent, ensure_ascii=False)) <= 30000
    full = mcp_call("plan", {**GUIDE_WORKLOAD, "detail": "full"}).structuredContent
    assert full is not None and len(full["plan"]["candidates"]) > len(r.structuredContent["plan"]["candidates"])
    for name, args in (("size_inference", {"model": "Qwen2.5-72B", "gpu": "H800", "request_rate": 15}),
                       ("plan_serving", {"model": "Qwen2.5-72B", "request_rate": 15})):
        s = mcp_call(name, args)
        assert sum(len(c.text) for c in s.content if isinstance(c, types.TextContent)) <= 8000, name
        assert len(json.dumps(s.structuredContent, ensure_ascii=False)) <= 30000, name


def test_plan_structured_output_is_the_plan_answer(mcp_call: Call) -> None:
    full = mcp_call("plan", {**GUIDE_WORKLOAD, "detail": "full"}).structuredContent
    assert PlanAnswer.model_validate(full).kind == "plan"
    plan = mcp_call("plan", GUIDE_WORKLOAD).structuredContent["plan"]
    assert TrainingPlan.model_validate(plan).kind == plan["kind"] == "training"
    serving = mcp_call("plan_serving", {"model": "Qwen2.5-7B", "detail": "full"}).structuredContent
    assert ServingPlan.model_validate(serving).kind == "serving"
    inference = mcp_call("size_inference", {"model": "Qwen2.5-7B", "gpu": "A10", "detail": "full"}).structuredContent
    assert InferenceResult.model_validate(inference).starts


def test_14b_lora_does_not_fit_one_4090(mcp_call: Call) -> None:
    r = mcp_call("check_feasibility", LORA_14B_ON_4090)
    assert not r.isError
    out = r.structuredContent
    assert out is not None and out["fits"] is False and out["gpu"] == "RTX-4090" and out["gpu_count"] == 1
    assert out["per_gpu_gib"] > out["usable_gib"]
    assert "fits=False" in r.content[0].text  # type: ignore[union-attr]
    assert any(f["change"] == "qlora" for f in out["fits_with"])


# (tool, arguments, a key of the artifact and its expected value, or None for the key only)
CALLS: list[tuple[str, dict[str, Any], str, Any]] = [
    ("estimate", {"model": "Qwen2-7B", "gpu": "A100 80G", "gpus": 2}, "gpus", 2),
    ("find_min_gpus", {"model": "Qwen2-72B", "method": "full", "gpu": "A800"}, "fits", True),
    ("find_min_gpus", {"model": "Qwen2-7B", "method": "qlora"}, "gpu", None),  # no GPU: the least memory
    ("find_min_gpus", {"params_b": 72, "method_assumed": True}, "other_methods", None),  # full and QLoRA counts too
    ("compare_options", {"model": "Qwen2-7B", "samples": 100000, "compare_kind": "cloud",
                         "options": ["tencent", "jdcloud"]}, "by", "cost"),
    ("estimate_savings", {"model": "Qwen2-7B", "samples": 100000, "before": {"method": "full"}}, "by", "cost"),
    ("capacity", {"gpu": "RTX 4090"}, "target", "model_size"),  # per method: full, LoRA, QLoRA
    ("capacity", {"gpu": "A100 80G", "target": "context", "model": "Qwen2-7B"}, "target", "context"),
    ("diagnose", {"model": "Qwen2-7B", "gpu": "A100 80G", "observation": {"kind": "oom"}}, "expected", False),
    ("catalog", {"ask": "fact", "fact": "supports_fp8", "gpu": "A10"}, "answer", "no"),  # the guide's error, corrected
    ("search_catalog", {"kind": "prices", "gpu": "A100", "billing": "on_demand"}, "kind", "prices"),
    ("search_catalog", {"kind": "gpus", "gpu": "H800"}, "kind", "gpus"),
    ("search_knowledge", {"query": "A10 支持 FP8 吗", "k": 1}, "query", "A10 支持 FP8 吗"),
    ("plan_serving", {"model": "Qwen2.5-7B", "concurrency": 8}, "kind", "serving"),
    ("plan_serving", {"model": "Qwen2.5-14B", "gpu": "L20", "gpus": 1, "clouds": ["tencent"]}, "kind", "serving"),
    ("size_inference", {"model": "Qwen2.5-7B", "gpu": "A10", "weights": "int4"}, "starts", True),
    ("size_inference", {"model": "Qwen2.5-72B", "gpu": "RTX 4090", "gpus": 1}, "starts", False),  # not rented here
]


@pytest.mark.parametrize(("name", "arguments", "key", "expected"), CALLS, ids=[f"{c[0]}-{n}" for n, c in enumerate(CALLS)])
def test_every_tool_answers_with_structured_output(mcp_call: Call, name: str, arguments: dict[str, Any], key: str,
                                                   expected: Any) -> None:
    r = mcp_call(name, arguments)  # the SDK's client validates structuredContent against the outputSchema
    assert not r.isError, r.content
    assert r.structuredContent is not None and key in r.structuredContent
    if expected is not None:
        assert r.structuredContent[key] == expected


def test_diagnose_runs_the_cause_model_from_the_callers_fields(mcp_call: Call) -> None:
    # an MCP client sends no frame: the cause model still ranks the causes, each with its number (issue 37)
    r = mcp_call("diagnose", {"model": "Qwen2.5-7B", "gpu": "A10", "seq_len": 8192, "observation": {"kind": "oom"}})
    assert not r.isError, r.content
    d = r.structuredContent["diagnosis"]
    assert d is not None and d["observed_kind"] == "train_oom" and d["causes"]
    assert all(c["explains"] is None or c["explains"]["unit"] == "GiB" for c in d["causes"])
    assert "top cause" in r.content[0].text  # type: ignore[union-attr]


def test_catalog_rows_carry_source_and_date(mcp_call: Call) -> None:
    for kind in ("gpus", "instances", "prices"):
        rows = mcp_call("search_catalog", {"kind": kind, "cloud": "tencent", "limit": 5}).structuredContent["rows"]
        assert rows and all(r["source"] and (r.get("as_of") or r.get("captured")) for r in rows), kind


def test_knowledge_passages_link_to_guide_resources(mcp_call: Call) -> None:
    out = mcp_call("search_knowledge", {"query": "FP8", "lang": "zh"}).structuredContent
    p = out["passages"][0]
    assert p["resource_uri"].startswith("guide://03-gpu-specs-precision.zh.md#")
    assert p["sources"] == [{"title": "NVIDIA A10 datasheet", "ref": "https://x"}]


# (tool, arguments, text the error must contain: the field and the fix)
BAD: list[tuple[str, dict[str, Any], list[str]]] = [
    # a value outside the enum
    ("check_feasibility", {**LORA_14B_ON_4090, "method": "lorra"}, ["method:", "'lorra'", "Fix the named field"]),
    # a required field missing
    ("check_feasibility", {"model": "Qwen2.5-14B"}, ["gpu: Field required"]),
    # a field the tool does not take
    ("plan", {**GUIDE_WORKLOAD, "budget": 3000}, ["budget: plan does not take this field"]),
    # a number out of range
    ("plan", {**GUIDE_WORKLOAD, "samples": -5}, ["samples: Input should be greater than 0"]),
    # neither model nor params_b: a rule between fields
    ("plan", {"samples": 1000}, ["arguments:", "give a model name"]),
    # an unknown GPU: the catalog's suggestions
    ("estimate", {"model": "Qwen2-7B", "gpu": "RTX 9090"}, ["Unknown GPU 'RTX 9090'", "Did you mean", "RTX-4090"]),
    # an unknown model
    ("plan", {"model": "Qwen9-7X"}, ["unknown_name", "Qwen9-7X"]),
    # capacity of a context needs the model
    ("capacity", {"gpu": "A100", "target": "context"}, ["model: target context needs the model", "Qwen2-7B"]),
    # savings: `before` holds workload fields only
    ("estimate_savings", {"model": "Qwen2-7B", "before": {"methd": "full"}}, ["before:", "methd"]),
    # a diagnosis needs what was seen
    ("diagnose", {"model": "Qwen2-7B", "gpu": "A10"}, ["observation: Field required"]),
    ("catalog", {"ask": "fact", "fact": "memory", "gpu": "Gaudi2"}, ["gpu:", "Gaudi2", "search_knowledge"]),
    ("search_catalog", {"instance_type": "GT4.4XLARGE9"}, ["Unknown instance type", "GT4.4XLARGE96"]),
    ("no_such_tool", {}, ["No tool 'no_such_tool'", "plan"]),
    # serving: a training field, both loads, the GPU required to size one GPU type, an encoder
    ("plan_serving", {"model": "Qwen2.5-7B", "method": "lora"}, ["method: plan_serving does not take this field"]),
    ("plan_serving", {"model": "Qwen2.5-7B", "concurrency": 4, "request_rate": 2}, ["arguments:", "not both"]),
    ("size_inference", {"model": "Qwen2.5-7B"}, ["gpu: Field required"]),
    ("size_inference", {"model": "Qwen2.5-7B", "gpu": "RTX 9090"}, ["Unknown GPU 'RTX 9090'", "Did you mean"]),
    ("plan_serving", {"model": "ResNet-50"}, ["not a generative LLM"]),
]


@pytest.mark.parametrize(("name", "arguments", "expected"), BAD, ids=[f"{b[0]}-{n}" for n, b in enumerate(BAD)])
def test_bad_arguments_are_tool_errors_naming_the_field(mcp_call: Call, name: str, arguments: dict[str, Any],
                                                        expected: list[str]) -> None:
    r = mcp_call(name, arguments)
    assert r.isError
    text = r.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    for part in expected:
        assert part in text, text
    assert r.structuredContent is not None and set(r.structuredContent["error"]) == {"code", "message", "fix"}


def test_search_knowledge_degrades_with_the_reason(catalog: Catalog) -> None:
    def down() -> Any:
        raise DependencyUnavailableError("Chroma at chroma:8000 is unreachable.", "Start the Chroma server.")

    for ctx, expected in ((make_context(catalog, down), "Chroma at chroma:8000 is unreachable"),
                          (make_context(catalog, None), "not configured")):
        r = in_memory(ctx, lambda s: s.call_tool("search_knowledge", {"query": "FP8"}))
        assert r.isError and expected in r.content[0].text  # type: ignore[union-attr]
        assert "resources" in r.content[0].text  # type: ignore[union-attr]  # where to read the guide meanwhile
        plan = in_memory(ctx, lambda s: s.call_tool("plan", GUIDE_WORKLOAD))  # the other tools still answer
        assert not plan.isError


def test_plan_serving_counts_first_and_prices_each_pick(mcp_call: Call, catalog: Catalog) -> None:
    """A 14B chat service at 20 concurrent requests: the same plan as POST /v1/plan/serving, picks on both clouds,
    each with GPUs per replica x replicas, a dated price with its source, yuan per million tokens and the launch
    commands; the summary quotes the picks."""
    from service.planner.serving_plan import plan_serving

    args = {"model": "Qwen2.5-14B", "concurrency": 20}
    r = mcp_call("plan_serving", args)
    assert not r.isError, r.content
    plan = r.structuredContent
    assert plan is not None and set(plan["picks"]) == {"tencent", "jdcloud"}
    ServingPlan.model_validate(plan)  # the typed contract, round-tripped
    truth = plan_serving(ServingWorkload.model_validate(args), catalog)
    assert plan["picks"] == truth.picks and plan["candidates"][0] == truth.candidates[0].model_dump(mode="json")
    assert len(plan["candidates"]) <= 10 + len(plan["picks"])
    summary = r.content[0].text  # type: ignore[union-attr]
    for cloud, itype in plan["picks"].items():
        c = next(c for c in plan["candidates"] if c["instance_type"] == itype)
        assert f"{cloud}: {itype}" in summary and f"{c['sizing']['gpus_per_replica']}x {c['gpu']} per replica" in summary
        assert c["price"]["source"] and (c["price"]["as_of"] or c["price"]["captured"]) and c["cny_per_million_output_tokens"] > 0
        assert c["launch"]["vllm"].startswith("vllm serve ")
        # SGLang's command, or why SGLang cannot run on this GPU (JD's V100: compute capability 7.0)
        assert "--tp " in c["launch"]["sglang"] or c["launch"]["sglang"].startswith("# SGLang needs")


def test_size_inference_is_the_inference_route(mcp_call: Call, catalog: Catalog) -> None:
    """The same object as POST /v1/inference for the same body; a model outside the catalog is sized from its
    name and the assumption said, as the chat does."""
    from service.planner.serving_inference import inference

    body = {"model": "Qwen2.5-14B", "gpu": "L20", "max_model_len": 32768, "concurrency": 40}
    r = mcp_call("size_inference", body)
    assert not r.isError, r.content
    want = inference(ServingWorkload.model_validate(body), catalog).model_dump(mode="json")
    assert r.structuredContent == want
    assert r.content[0].text.startswith(f"{want['gpus']}x L20 per replica")  # type: ignore[union-attr]
    named = mcp_call("size_inference", {"model": "acme-llm-2b", "gpu": "A10"}).structuredContent
    assert named is not None and named["starts"] is True and named["model"]["estimated"] is True
    assert named["assumptions"][0].startswith("'acme-llm-2b' is not in the catalog: estimated")
