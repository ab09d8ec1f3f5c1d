"""Routing helpers the question types share: the subject GPU (named, a memory size, or carried over from the
previous turn), the count asked about, and the workload slots without the subject."""

from __future__ import annotations

import re
from typing import Any

from service.questions.base import Ask

_FAST = re.compile(r"快|慢|速度|时间|(?<![A-Za-z])(?:faster|fastest|quicker|slower|speed|sooner|time)(?![A-Za-z])",
                   re.IGNORECASE)
SUBJECT_TYPES = ("feasibility", "min_gpus", "capacity", "diagnose", "serving")


def asks_time(text: str) -> bool:
    return bool(_FAST.search(text))


def subject_gpu(a: Ask) -> str | None:
    """The GPU the question is about: named in this message, a memory size said instead ('24G显存'), or the one
    the previous question was about."""
    gpus = a.read.parsed.subject.gpus
    if gpus:
        return gpus[0]
    memory = a.read.own_slots.get("gpu_memory_gb")
    if memory:
        return f"{memory:g}G"
    if a.prev is not None and a.prev.type in SUBJECT_TYPES and a.prev.args.get("gpu"):
        return str(a.prev.args["gpu"])
    included = a.slots.get("gpu_include") or []
    if included:
        return str(included[0])  # an earlier turn's '2卡4090 ...': the conversation's GPU
    return None


def subject_count(a: Ask, default: int | None = 1) -> int | None:
    """The count named with the GPU; a follow-up that names no GPU keeps the previous count."""
    own = a.read.own_slots.get("gpu_count") or a.read.parsed.subject.gpu_count
    if own:
        return int(own)
    if a.prev is not None and not a.read.parsed.subject.gpus and a.prev.args.get("gpu_count"):
        return int(a.prev.args["gpu_count"])
    if a.slots.get("gpu_count") and not a.read.parsed.subject.gpus:
        return int(a.slots["gpu_count"])
    return default


def without(slots: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in slots.items() if k not in keys}
