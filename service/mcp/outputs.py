"""Each tool's `outputSchema`: the top-level keys of its artifact (always present, so listed as required), with
what they hold. Nested shapes are the engine's and are not repeated here; the SDK's client checks every result
against these (tests/mcp call every tool). The tools that return a typed contract have that model's own schema,
nested shapes included: `plan` the training plan (TrainingPlan), the serving tools ServingPlan and
InferenceResult."""

from __future__ import annotations

from typing import Any

from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingPlan
from service.planner.training_types import TrainingPlan

Prop = tuple[str | list[str] | None, str]  # (JSON type, description); None: any type

OBJ, ARR, NUM, STR, BOOL = "object", "array", "number", "string", "boolean"
NUM_OR_NULL, STR_OR_NULL, BOOL_OR_NULL = [NUM, "null"], [STR, "null"], [BOOL, "null"]

_WORKLOAD: dict[str, Prop] = {
    "workload": (OBJ, "the workload as sized (the plan input's fields, defaults filled)"),
    "assumptions": (ARR, "what the engine assumed, in English"),
}
_ZH: dict[str, Prop] = {"assumptions_zh": (ARR, "the assumptions in Chinese")}
_SIZED: dict[str, Prop] = {
    "gpu": (STR_OR_NULL, "the catalog GPU id"),
    "memory": (OBJ, "per-GPU memory by term: weights, gradients, optimizer, activations, overhead (GiB)"),
    "strategy": (OBJ, "method, quantisation, ZeRO stage, offload, checkpointing, precision, lengths"),
    "model": (OBJ, "the model as sized, with its source"),
}
_PER_GPU: dict[str, Prop] = {"per_gpu_gib": (NUM, "memory needed per GPU, GiB (memory.per_gpu_gib)")}


def _schema(description: str, props: dict[str, Prop]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key, (kind, text) in props.items():
        properties[key] = {"description": text} if kind is None else {"type": kind, "description": text}
    return {"type": "object", "description": description, "properties": properties, "required": list(props)}


OUTPUTS: dict[str, dict[str, Any]] = {
    "plan": TrainingPlan.model_json_schema(mode="serialization"),  # POST /v1/plan's answer for training
    "estimate": _schema("One setup sized (the POST /v1/estimate object)", {
        **_SIZED, **_WORKLOAD,
        "gpus": (NUM, "GPUs sized"),
        "fits": (BOOL, "per-GPU memory within the usable share of the GPU's memory"),
        "gpu_memory_gib": (NUM, "the GPU's memory"),
        "training_hours": (NUM, "estimated hours for the whole job"),
        "throughput_tokens_per_s": (NUM, "tokens per second, all GPUs"),
        "host_ram_needed_gib": (NUM, "host RAM the setup needs (offload)"),
        "warnings": (ARR, "does_not_fit and GPU notes"),
    }),
    "check_feasibility": _schema("Does the workload fit on gpu_count x gpu", {
        **_SIZED, **_PER_GPU, **_WORKLOAD, **_ZH,
        "fits": (BOOL, "yes/no on the GPUs asked about"),
        "gpu_count": (NUM, "the count asked about"),
        "gpu_memory_gib": (NUM, "the GPU's memory"),
        "usable_gib": (NUM, "the usable share of it"),
        "gpus_needed": (NUM_OR_NULL, "the fewest cards of this GPU that fit"),
        "fits_with": (ARR, "changes that make it fit on the same cards, or more cards"),
        "rent": (ARR, "instance types that carry this GPU, per cloud"),
        "plan_pick": (OBJ, "the plan's top pick for the workload"),
    }),
    "find_min_gpus": _schema("The fewest GPUs, or the least GPU memory", {
        **_SIZED, **_PER_GPU, **_WORKLOAD, **_ZH,
        "gpus_needed": (NUM_OR_NULL, "the fewest cards of the GPU named"),
        "fits": (BOOL_OR_NULL, "whether any count up to 64 fits (null: no GPU named)"),
        "single_gpu_gib": (NUM, "what one card would need"),
    }),
    "compare_options": _schema("Options side by side", {
        "comparison": (ARR, "per option: fits, hours, cost, instance, GPUs"),
        "winner": (STR_OR_NULL, "the cheapest priced option that fits, or the fastest"),
        "by": (STR, "cost or hours"),
        "unpriced": (ARR, "options that fit but no cloud here prices"),
        "workload": (OBJ, "the workload compared"),
    }),
    "estimate_savings": _schema("Before and after a change", {
        "before": (OBJ, "the plan's pick before"), "after": (OBJ, "the plan's pick after"),
        "changed": (OBJ, "the fields that differ"),
        "delta_cny": (NUM_OR_NULL, "after - before in yuan (negative: a saving)"),
        "delta_hours": (NUM_OR_NULL, "after - before in hours"),
        "saving_cny": (NUM_OR_NULL, "before - after in yuan"),
        "workload": (OBJ, "after"), "before_workload": (OBJ, "before"), "by": (STR, "cost or hours"),
    }),
    "capacity": _schema("The limit on the GPUs", {
        **_WORKLOAD, **_ZH,
        "target": (STR, "model_size, context or batch"),
        "gpu": (STR, "the catalog GPU id"), "gpu_count": (NUM, "GPUs"),
        "usable_gib": (NUM, "usable memory per GPU"),
    }),
    "diagnose": _schema("The observation against the engine", {
        **_SIZED, **_PER_GPU, **_WORKLOAD, **_ZH,
        "observation": (OBJ, "what the user saw"),
        "expected": (BOOL_OR_NULL, "whether the engine expects it (null: no figure to compare)"),
        "causes": (ARR, "cause codes that re-sizing confirms, with the figures"),
        "fixes": (ARR, "changes that fit, with the figures"),
        "fits": (BOOL, "whether the stated setup fits"),
        "training_hours": (NUM, "the engine's hours for the workload"),
    }),
    "catalog_fact": _schema("A catalog fact", {
        "fact": (STR, "the fact asked"),
        "answer": (STR_OR_NULL, "yes / no / a value / on_request; null when rows answer it"),
        "gpu": (STR_OR_NULL, "the catalog GPU id"),
        "gpu_source": (STR_OR_NULL, "the GPU spec's source"),
        "clouds": (ARR, "the clouds asked about"),
    }),
    "search_catalog": _schema("Catalog rows", {
        "kind": (STR, "gpus, instances or prices"),
        "matched": (NUM, "rows that matched (rows holds at most `limit`)"),
        "rows": (ARR, "the rows, each with source, as_of and confidence"),
    }),
    "search_knowledge": _schema("Guide passages", {
        "query": (STR, "the query"),
        "passages": (ARR, "id, title, section, text, score, lang, sources, resource_uri (guide://...)"),
        "warnings": (ARR, "why results come from BM25 alone, when they do"),
    }),
    "plan_serving": ServingPlan.model_json_schema(mode="serialization"),
    "size_inference": InferenceResult.model_json_schema(mode="serialization"),
}
