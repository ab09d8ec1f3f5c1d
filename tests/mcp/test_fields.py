"""Every MCP tool honours or refuses every field it lists, and `tools/list` stays affordable (issue 40 item 3).

- Each tool is called with each field of its input schema, alone over a typical call: the answer changes (the
  figures, the picks, the verdicts: the workload's echo and the assumptions' wording left aside) or the call is a
  tool error that names the field. A field no case covers fails here, so a new field needs its case.
- A field a tool does not list (another tool's, or a typo) is an error naming it, never ignored: `estimate` with
  `gpu_count: 4` answered for 1 card; it now sizes 4.
- The summary beside each result carries units and never prints None, for typical and for sparse calls.
- `tools/list` is at most 60,000 characters of JSON (321,000 before; scripts/bench_mcp_sizes.py prints it).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import types

from service.catalog.loader import Catalog
from service.mcp.fields import HIDDEN
from service.mcp.server import _tool, call, listed_fields
from service.mcp.tools import MERGED, McpContext, mcp_tools, tools_by_name
from tests.mcp.conftest import FakeRetriever, make_context

pytestmark = [pytest.mark.slow]  # every tool, every field: about 200 engine calls

TOOLS_LIST_LIMIT = 60_000
GUIDE = {"model": "Qwen2-7B", "samples": 100000, "budget_cny": 3000}
# A typical call per tool.
BASE: dict[str, dict[str, Any]] = {
    "plan": GUIDE,
    "check_feasibility": {"model": "Qwen2.5-14B", "gpu": "RTX 4090"},
    "find_min_gpus": {"model": "Qwen2-72B", "method": "full", "gpu": "A800"},
    "compare_options": {"model": "Qwen2-7B", "samples": 100000, "compare_kind": "gpu", "options": ["A100", "A10"]},
    "estimate_savings": {"model": "Qwen2-7B", "samples": 100000, "before": {"method": "full"}},
    "capacity": {"gpu": "RTX 4090"},
    "diagnose": {"model": "Qwen2-7B", "gpu": "A100 80G", "observation": {"kind": "oom"}},
    "catalog": {"ask": "price", "gpu": "A100"},
    "estimate": {"model": "Qwen2-7B", "gpu": "A100 80G"},
    "search_knowledge": {"query": "FP8"},
    "search_catalog": {"gpu": "A100"},
    "plan_serving": {"model": "Qwen2.5-7B"},
    "size_inference": {"model": "Qwen2.5-7B", "gpu": "A10"},
}
# A value for each field, different from the typical call's.
VALUE: dict[str, Any] = {
    "model": "Qwen2-72B", "method": "full", "quant_bits": 4, "samples": 5_000_000, "avg_tokens_per_sample": 2048,
    "tokens": 1e10, "dataset_gb": 50, "epochs": 10, "seq_len": 8192, "budget_cny": 50, "budget_period": "total",
    "deadline_hours": 1, "clouds": ["jdcloud"], "gpu_include": ["H800"], "gpu_exclude": ["A100-40G-SXM", "A10"],
    "gpu_count": 4, "billing": "spot", "objective": "fastest", "micro_batch": 8, "lora_rank": 256, "grad_ckpt": False,
    "zero_stage": 3, "framework": "trl", "precision": "fp16", "optimizer": "adamw-8bit",
    "activation_checkpointing": "selective", "lora_targets": "qv", "lora_modules_to_save": ["lm_head", "embed_tokens"],
    "attention": "eager", "loss": "chunked", "stage": "dpo", "documents": ["launch_bundle"], "gpu": "H800",
    "gpus": 4, "offload": "all", "by": "hours", "weights": "int4", "kv_dtype": "fp8", "engine": "sglang",
    "mem_fraction": 0.5, "max_model_len": 2048, "input_tokens": 8000, "output_tokens": 2000, "concurrency": 64,
    "request_rate": 20, "ttft_ms": 100, "tpot_ms": 10, "k": 2, "lang": "en", "cloud": "jdcloud", "limit": 2,
    "min_memory_gb": 80, "min_cards": 8, "rdma": True, "fp8": True, "sort": "price", "instance_type": "GT4.4XLARGE96",
    "instance": "GT4.4XLARGE96", "family": "GN7", "families": ["GN7", "GT4"], "use": "serve",
    "compare_kind": "method", "options": ["lora", "full"], "kind": "prices", "before": {"method": "qlora"}, "query": "NVLink",
    "ask": "cheapest", "target": "context", "method_assumed": True, "method_stated": False,
    "observed_hours": 20, "observation": {"kind": "hours", "hours": 50},
}
# A field that only shows in a context: (tool, field) -> (the typical call for it, the value).
CONTEXT: dict[tuple[str, str], tuple[dict[str, Any], Any]] = {
    **{(t, "params_b"): ({k: v for k, v in BASE[t].items() if k != "model"} | {"params_b": 7}, 70)
       for t in ("plan", "check_feasibility", "find_min_gpus", "compare_options", "estimate_savings", "diagnose",
                 "estimate", "plan_serving", "size_inference")},
    **{(t, "kbit_upcast"): ({**BASE[t], "method": "qlora"}, True)
       for t in ("plan", "check_feasibility", "find_min_gpus", "compare_options", "estimate_savings", "diagnose",
                 "estimate")},
    **{(t, "sharding"): ({**BASE[t], "model": "Qwen2-72B", "method": "full", "zero_stage": 3}, "fsdp2")
       for t in ("plan", "check_feasibility", "find_min_gpus", "compare_options", "estimate_savings", "diagnose",
                 "estimate")},
    **{(t, "dataset_gb"): ({k: v for k, v in BASE[t].items() if k != "samples"}, 50)
       for t in ("plan", "compare_options", "estimate_savings")},
    # a job of many months: ¥20,000 a month holds it, ¥20,000 in all does not
    ("plan", "budget_period"): ({"model": "Qwen2-7B", "samples": 20_000_000, "gpu_include": ["T4"],
                                 "budget_cny": 20_000}, "total"),
    ("plan", "lang"): (GUIDE | {"documents": ["request_document"]}, "en"),
    ("capacity", "model"): ({"gpu": "RTX 4090", "target": "context", "model": "Qwen2-7B"}, "Qwen2.5-14B"),
    ("capacity", "params_b"): ({"gpu": "RTX 4090", "target": "context", "params_b": 7}, 13),
    ("capacity", "grad_ckpt"): ({"gpu": "RTX 4090", "target": "context", "model": "Qwen2-7B"}, False),
    ("capacity", "activation_checkpointing"): ({"gpu": "RTX 4090", "target": "context", "model": "Qwen2-7B"},
                                               "none"),
    ("find_min_gpus", "method"): (BASE["find_min_gpus"], "lora"),
    ("find_min_gpus", "model"): (BASE["find_min_gpus"], "Qwen2-7B"),
    **{("find_min_gpus", f): ({**BASE["find_min_gpus"], "method": "lora", "model": "Qwen2-7B", "gpu": "RTX 4090"},
                              VALUE[f]) for f in ("lora_targets", "lora_modules_to_save")},
    **{(t, "grad_ckpt"): ({**BASE[t]}, True) for t in ("plan", "compare_options", "estimate_savings")},
    **{("compare_options", f): (BASE["compare_options"] | {"compare_kind": "cloud", "options": ["tencent", "jdcloud"]},
                                VALUE[f]) for f in ("gpu_count", "gpu_include")},
    ("capacity", "weights"): ({"gpu": "RTX 4090", "use": "serve"}, "int4"),
    ("capacity", "method_stated"): ({"gpu": "RTX 4090", "method": "lora"}, False),  # full, LoRA, QLoRA side by side
    ("capacity", "kbit_upcast"): ({"gpu": "RTX 4090", "method": "qlora"}, True),
    ("capacity", "sharding"): ({"gpu": "RTX 4090", "method": "full", "zero_stage": 3, "gpu_count": 8}, "fsdp2"),
    ("compare_options", "options"): (BASE["compare_options"], ["H800", "A10"]),
    ("compare_options", "compare_kind"): (BASE["compare_options"], "cloud"),  # A100 is no cloud: refused
    ("compare_options", "clouds"): (BASE["compare_options"], ["jdcloud"]),
    ("estimate_savings", "before"): (BASE["estimate_savings"], {"method": "qlora"}),
    ("diagnose", "engine"): ({"model": "Qwen2.5-7B", "gpu": "A100 80G", "observation": {"kind": "memory",
                                                                                          "memory_gb": 70}}, "sglang"),
    ("diagnose", "serving"): (BASE["diagnose"], {"model": "Qwen2.5-72B", "asked": "oom", "setups": [
        {"engine": "vllm", "gpu": "A100 80G", "gpus": 2, "outcome": "oom"}]}),
    ("diagnose", "samples"): (BASE["diagnose"] | {"observation": {"kind": "hours", "hours": 20}}, 1_000_000),
    ("diagnose", "tokens"): (BASE["diagnose"] | {"observation": {"kind": "hours", "hours": 20}}, 1e10),
    ("diagnose", "epochs"): (BASE["diagnose"] | {"observation": {"kind": "hours", "hours": 20}}, 10),
    ("diagnose", "avg_tokens_per_sample"): (BASE["diagnose"] | {"samples": 100000,
                                                               "observation": {"kind": "hours", "hours": 20}}, 2048),
    ("diagnose", "dataset_gb"): (BASE["diagnose"] | {"observation": {"kind": "hours", "hours": 20}}, 50),
    ("catalog", "fact"): ({"ask": "fact", "gpu": "A10", "fact": "supports_fp8"}, "memory"),
    ("catalog", "exact"): ({"ask": "fact", "gpu": "A100 80G", "fact": "sells"}, True),
    ("catalog", "place"): ({"ask": "fact", "fact": "regions", "gpu": "A10"}, "beijing"),
    ("catalog", "gpus"): ({"ask": "side_by_side", "gpus": ["A10", "L20"]}, ["A100", "H800"]),
    ("catalog", "families"): ({"ask": "families", "families": ["GN7", "GT4"]}, ["PNV4", "GT4"]),
    ("catalog", "family"): ({"ask": "family", "family": "GT4"}, "GN7"),
    ("catalog", "min_memory_gb"): ({"ask": "cheapest"}, 80),
    ("catalog", "min_cards"): ({"ask": "cheapest"}, 8),
    ("catalog", "rdma"): ({"ask": "cheapest"}, True),
    ("catalog", "fp8"): ({"ask": "cheapest"}, True),
    ("catalog", "hours_per_month"): ({"ask": "breakeven", "gpu": "A100"}, 200),
    ("catalog", "total_gpus"): ({"ask": "breakeven", "gpu": "A100", "hours_per_month": 200}, 16),
    ("catalog", "units"): ({"ask": "breakeven", "gpu": "A100", "hours_per_month": 200}, 4),
    ("search_catalog", "sort"): ({}, "price"),
    ("catalog", "instance"): ({"ask": "price", "instance": "GT4.8XLARGE192"}, "GT4.4XLARGE96"),
    ("search_catalog", "min_memory_gb"): ({}, 80),
    ("search_catalog", "min_cards"): ({}, 8),
    ("search_catalog", "rdma"): ({}, True),
    ("plan_serving", "concurrency"): (BASE["plan_serving"], 200),
    ("plan_serving", "request_rate"): (BASE["plan_serving"], 50),
    ("size_inference", "concurrency"): (BASE["size_inference"], 200),
    ("size_inference", "request_rate"): (BASE["size_inference"], 50),
    ("size_inference", "ttft_ms"): (BASE["size_inference"] | {"concurrency": 64}, 50),
    ("size_inference", "tpot_ms"): (BASE["size_inference"] | {"concurrency": 64}, 10),
    ("plan_serving", "ttft_ms"): (BASE["plan_serving"] | {"concurrency": 64}, 50),
    ("plan_serving", "tpot_ms"): (BASE["plan_serving"] | {"concurrency": 64}, 10),
}
# What a result echoes of its call (the fields themselves, their wording): left aside when comparing.
ECHO = {"workload", "assumptions", "assumptions_zh", "said", "request", "args", "filters", "query", "notes"}


class Retriever(FakeRetriever):
    """Passages that depend on every argument (the fake one echoes only the query)."""

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None) -> list[Any]:
        found = super().search(query, k, lang, cloud)
        tag = "&".join(f"{n}-{v}" for n, v in (("q", query), ("lang", lang), ("cloud", cloud), ("k", k)) if v)
        return [p.__class__(**{**p.__dict__, "id": f"{p.id}?{tag}"}) for p in found * k]


@pytest.fixture(scope="module")
def ctx(catalog: Catalog) -> McpContext:
    return make_context(catalog, lambda: Retriever())


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in ECHO}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _answer(ctx: McpContext, tool: str, args: dict[str, Any]) -> types.CallToolResult:
    return call(ctx, tool, {**args, "detail": "full"})


def cases() -> list[tuple[str, str]]:
    return [(t.name, f) for t in mcp_tools() for f in sorted(listed_fields(t) - {"detail"})]


@pytest.mark.parametrize(("tool", "field"), cases(), ids=[f"{t}.{f}" for t, f in cases()])
def test_every_listed_field_changes_the_answer_or_is_refused(ctx: McpContext, tool: str, field: str) -> None:
    assert (tool, field) in CONTEXT or field in VALUE, f"no case for {tool}.{field}: add one to this file"
    base, value = CONTEXT.get((tool, field), (BASE[tool], VALUE.get(field)))
    before = _answer(ctx, tool, base)
    assert not before.isError, before.content
    after = _answer(ctx, tool, {**base, field: value})
    if after.isError:
        assert field in after.content[0].text, after.content  # type: ignore[union-attr]
        return
    changed = json.dumps(_strip(after.structuredContent), sort_keys=True) != json.dumps(
        _strip(before.structuredContent), sort_keys=True)
    assert changed, f"{tool} ignored {field}={value!r}"


def test_estimate_sizes_the_gpu_count_it_is_given(ctx: McpContext) -> None:
    # Regression: estimate with gpu_count 4 answered for 1 card, silently
    four = _answer(ctx, "estimate", {"model": "Qwen2-7B", "gpu": "A10", "gpu_count": 4})
    assert not four.isError and four.structuredContent is not None and four.structuredContent["gpus"] == 4
    assert four.content[0].text.startswith("4x A10")  # type: ignore[union-attr]
    both = _answer(ctx, "estimate", {"model": "Qwen2-7B", "gpu": "A10", "gpu_count": 4, "gpus": 2})
    assert both.isError and "gpu_count=4" in both.content[0].text  # type: ignore[union-attr]


# (tool, a field it does not list): the error names the field
UNLISTED = [("estimate", "budget_cny"), ("estimate", "clouds"), ("check_feasibility", "budget_cny"),
            ("find_min_gpus", "gpu_count"), ("capacity", "samples"), ("diagnose", "objective"),
            ("size_inference", "clouds"), ("plan", "gpu"), ("plan", "budget"), ("search_knowledge", "top_k"),
            ("plan", "question"), ("diagnose", "model_named"), ("plan", "kind")]


@pytest.mark.parametrize(("tool", "field"), UNLISTED, ids=[f"{t}.{f}" for t, f in UNLISTED])
def test_a_field_the_tool_does_not_take_is_an_error_naming_it(ctx: McpContext, tool: str, field: str) -> None:
    assert field not in listed_fields(tools_by_name()[tool])
    r = call(ctx, tool, {**BASE[tool], field: VALUE.get(field, "x")})
    assert r.isError
    text = r.content[0].text  # type: ignore[union-attr]
    assert f"{field}:" in text or f"{field}," in text, text
    assert r.structuredContent is not None and r.structuredContent["error"]["code"] == "invalid_input"


def test_hidden_fields_are_never_listed() -> None:
    for t in mcp_tools():
        assert not listed_fields(t) & HIDDEN, t.name


def test_merged_tools_are_gone_and_say_where_they_went(ctx: McpContext) -> None:
    names = {t.name for t in mcp_tools()}
    assert not names & set(MERGED) and len(names) == 13
    r = call(ctx, "size_serving", {"model": "Qwen2.5-7B"})
    assert r.isError and "plan_serving" in r.content[0].text  # type: ignore[union-attr]


def test_tools_list_is_affordable() -> None:
    listed = types.ListToolsResult(tools=[_tool(t) for t in mcp_tools()])
    size = len(json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False))
    print(f"\ntools/list: {len(listed.tools)} tools, {size:,} characters")
    assert size <= TOOLS_LIST_LIMIT
    for t in listed.tools:  # one-line field descriptions; a definition used once is written in place
        schema = t.inputSchema
        assert all("\n" not in str(p.get("description", "")) and len(str(p.get("description", ""))) <= 81
                   for p in schema["properties"].values()), t.name
        used = json.dumps({k: v for k, v in schema.items() if k != "$defs"}) + json.dumps(schema.get("$defs", {}))
        assert all(used.count(f'"#/$defs/{d}"') > 1 for d in schema.get("$defs", {})), t.name


# (tool, a sparse call): the least a caller may send
SPARSE = [("plan", {"params_b": 7}), ("check_feasibility", {"params_b": 200, "gpu": "T4"}),
          ("find_min_gpus", {"params_b": 7}), ("compare_options", {"params_b": 7, "options": ["A10"]}),
          ("estimate_savings", {"params_b": 7}), ("capacity", {"gpu": "T4"}),
          ("diagnose", {"params_b": 7, "gpu": "T4"}), ("catalog", {"ask": "price", "gpu": "H800"}),
          ("catalog", {"ask": "fact", "fact": "list", "clouds": ["jdcloud"]}), ("estimate", {"params_b": 7, "gpu": "T4"}),
          ("search_knowledge", {"query": "x"}), ("search_catalog", {"kind": "gpus", "gpu": "H800"}),
          ("plan_serving", {"params_b": 700}), ("size_inference", {"params_b": 200, "gpu": "T4"}),
          ("plan_serving", {"model": "Qwen2.5-7B", "concurrency": 5000, "ttft_ms": 1})]
# a figure a reader cannot read without its unit: '¥None', 'None', a number glued to '=' or ending a line
NONE = re.compile(r"None|null|nan|¥—")
UNITLESS = re.compile(r"(?:TTFT|TPOT|latency|limit[^:]*:|weights|KV pool|\bof)\s*[=:]?\s*\d[\d,.]*(?![\d,.])"
                      r"(?!\s*(?:ms|GiB|GB|B parameters|tokens|sequences|%|h\b))")


@pytest.mark.parametrize(("tool", "args"), [*((t, a) for t, a in BASE.items()), *SPARSE],
                         ids=[f"{t}-{n}" for n, (t, _) in enumerate([*BASE.items(), *SPARSE])])
def test_summaries_carry_units_and_never_none(ctx: McpContext, tool: str, args: dict[str, Any]) -> None:
    r = call(ctx, tool, args)
    text = r.content[0].text  # type: ignore[union-attr]
    assert not NONE.search(text), text
    assert not UNITLESS.search(text), text
