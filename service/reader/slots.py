"""The reader's slots in the question schema (evals/questions/README.md): what the words state, whatever the
question type, in one flat dict. The workload slots (service.workload) are a subset; the others are the subject
(the GPU and count asked about), serving load and dtypes, the observation, the capacity target, the objective."""

from __future__ import annotations

from typing import Any

from service.reader.message import ParsedMessage

_WORKLOAD_KEYS = ("model", "params_b", "method", "stage", "quant_bits", "samples", "tokens", "epochs",
                  "avg_tokens_per_sample",
                  "dataset_gb", "seq_len", "micro_batch", "zero_stage", "lora_rank", "budget_cny", "budget_period",
                  "deadline_hours", "clouds", "billing", "objective")
_EXTRA_KEYS = ("gpu_memory_gb", "observed", "weights", "kv_dtype", "engine", "concurrency", "request_rate",
               "input_tokens", "output_tokens", "max_model_len", "ttft_ms", "tpot_ms", "target", "stage", "fact")
ONE_CARD_TYPES = ("feasibility", "diagnose", "capacity")  # a GPU named without a count is one card
SERVING_KEYS = ("weights", "kv_dtype", "engine", "concurrency", "request_rate", "input_tokens", "output_tokens",
                "max_model_len", "ttft_ms", "tpot_ms")


def question_slots(parsed: ParsedMessage) -> dict[str, Any]:
    """All the slots one message states, in the question schema."""
    every = {**parsed.question_slots, **parsed.slots}
    out: dict[str, Any] = {k: every[k] for k in _WORKLOAD_KEYS if k in every}
    included = every.get("gpu_include")
    gpus = list(parsed.subject.gpus) or (list(included) if isinstance(included, list) else [])
    if gpus:
        out["gpu"] = gpus[0]
    count = every.get("gpu_count") or parsed.subject.gpu_count
    if count:
        out["gpu_count"] = count
    out.update({k: parsed.extra[k] for k in _EXTRA_KEYS if k in parsed.extra})
    if "model" not in out and "model_mention" in parsed.extra:
        out["model"] = parsed.extra["model_mention"]  # named without a size: a label, not a workload
    if out.get("clouds") == ["tencent", "jdcloud"] and parsed.named.get("clouds", 0) < 2:
        out.pop("clouds")  # 'exclude JD' on its own leaves Tencent; the default 'both' is no slot
    return out


def for_type(slots: dict[str, Any], qtype: str) -> dict[str, Any]:
    """The slots as the question type reads them: a serving question's context is `max_model_len` (not a training
    `seq_len`) and its int4/fp8 is the weights' dtype (not QLoRA); a training question's 'ctx 4k' is `seq_len`."""
    out = dict(slots)
    if qtype == "serving":
        if "seq_len" in out:
            out.setdefault("max_model_len", out.pop("seq_len"))
        if out.get("method") == "qlora":
            out.pop("method")
            out.pop("quant_bits", None)
            out.setdefault("weights", "int4")
        for key in ("samples", "epochs"):
            out.pop(key, None)
    else:
        if "max_model_len" in out:
            out.setdefault("seq_len", out.pop("max_model_len"))
    if qtype not in ("knowledge", "catalog"):
        out.pop("fact", None)
    if qtype != "capacity":
        out.pop("target", None)
    return out


def with_defaults(slots: dict[str, Any], qtype: str) -> dict[str, Any]:
    """The conversation's slots with what the question type assumes when a slot is unsaid: a GPU named without a
    count is one card for a fit, a diagnosis or a capacity question ('I have a 4090', 'OOM on an A100'), as the
    engine checks it."""
    if qtype in ONE_CARD_TYPES and "gpu" in slots and "gpu_count" not in slots:
        return {**slots, "gpu_count": 1}
    return slots
