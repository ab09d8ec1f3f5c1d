"""The question's subject, whatever its type: the GPUs named (and how many), the options a comparison could weigh
(two or more GPUs, clouds, methods or billing modes) and, when a change is named ('lora改成全参', 'full instead of
lora'), the option before and after it. A slot finder: the classifier (service/reader/read.py) decides the type,
and the type decides which of these the answer uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from service.reader.constraints import GPU_MARK

CompareKind = Literal["gpu", "cloud", "method", "billing"]


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Subject:
    """What the question is about, beyond the workload slots."""

    intent: None = None  # kept for callers of the old reader; the classifier decides the type now
    gpus: tuple[str, ...] = ()  # GPU ids named as the subject (not excluded), text order
    gpu_count: int | None = None  # the count named with the GPU ('单卡', '两张', '2x', 'a pair of')
    compare_kind: CompareKind | None = None
    options: tuple[str, ...] = ()  # GPU ids, clouds, methods or billing modes, when two or more are named
    before: dict[str, object] = field(default_factory=dict)  # a change named in one message: the slots before
    after: dict[str, object] = field(default_factory=dict)  # ... and after the change


def read_subject(work: str, text: str, gpus: list[str], clouds: list[str], methods: list[str],
                 billings: list[str], gpu_count: int | None) -> Subject:
    """`work` is the message with GPU names marked (GPU_MARK) and models blanked; `text` the message itself;
    `gpus` the GPU ids named and not excluded, `clouds`, `methods`, `billings` the ones mentioned, in order."""
    gpus = list(dict.fromkeys(gpus))
    clouds = list(dict.fromkeys(clouds))
    methods = list(dict.fromkeys(methods))
    billings = list(dict.fromkeys(billings))
    count = gpu_count if gpu_count is not None else _pair(text)
    kind: CompareKind | None = None
    options: tuple[str, ...] = ()
    for k, named in (("gpu", gpus), ("cloud", clouds), ("method", methods), ("billing", billings)):
        if len(named) >= 2:
            kind, options = k, tuple(named)  # type: ignore[assignment]
            break
    before: dict[str, object] = {}
    after: dict[str, object] = {}
    for key, named in (("method", methods), ("billing", billings), ("gpu_include", gpus)):
        if len(named) >= 2:
            first, last = named[0], named[-1]
            was, now = (last, first) if _BASE_BEFORE.search(work) else (first, last)
            if key == "gpu_include":
                before, after = {key: [was]}, {key: [now]}
            else:
                before, after = {key: was}, {key: now}
            break
    return Subject(None, tuple(gpus), count, kind, options, before, after)


# 'A vs B', 'A compared to B', 'A instead of B', '比B贵多少': the option named last is the base of the change.
_BASE_BEFORE = _c(r"(?<![A-Za-z])(?:vs\.?|versus|compared (?:to|with)|than|over|relative to|instead of|rather than)"
                  r"\s+(?:a\s+|an\s+|the\s+|going\s+|using\s+)?(?:q?lora|full|freeze|pay|on|spot|monthly|\x01)"
                  r"|(?:相比|比)\s*(?:q?lora|全参|全量|冻结|按量|包月|竞价|\x01)")
_PAIR = _c(r"(?<![A-Za-z])(?:a\s+pair\s+of|a\s+couple\s+of|couple\s+of|twin|dual|2\s+of\s+them)(?![A-Za-z])")


def _pair(text: str) -> int | None:
    return 2 if _PAIR.search(text) else None


__all__ = ["GPU_MARK", "CompareKind", "Subject", "read_subject"]
