"""Two setups in one post: "TP4 works, TP8 OOMs", "单卡可以跑，两张反而OOM", "HF runs it, vLLM OOMs". A finder: it
returns the knob that differs between the clauses, each clause's value and outcome, and which one the question is
about (the one that failed, else the last named). It never decides the question type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLAUSE = re.compile(r"[，,。;；\n]|(?<![A-Za-z])(?:but|however|while|whereas|yet)(?![A-Za-z])|但是|可是|不过|然而",
                     re.IGNORECASE)
_WORKED = re.compile(r"能跑|可以跑|能起|正常|没问题|可以|跑得动|跑通|成功|(?<![A-Za-z])(?:works?|worked|working|runs?|"
                     r"ran|fine|ok|succeeds?|loads?|starts?)(?![A-Za-z])", re.IGNORECASE)
_FAILED = re.compile(r"oom|爆显存|显存不足|显存不够|报错|失败|跑不动|起不来|挂了|崩|(?<![A-Za-z])(?:out of memory|fails?|failed|"
                     r"crash\w*|errors?|hangs?|stuck|cannot|can't|won't|doesn't)(?![A-Za-z])", re.IGNORECASE)
_SLOWER = re.compile(r"慢|(?<![A-Za-z])slower(?![A-Za-z])", re.IGNORECASE)
_KNOBS: dict[str, re.Pattern[str]] = {
    "tp": re.compile(r"(?<![A-Za-z])(?:tp|tensor[-_ ]parallel(?:[-_ ]size)?)\s*[=:]?\s*(\d{1,2})(?!\d)", re.IGNORECASE),
    "gpu_count": re.compile(r"(?<![\d.])(\d{1,2})\s*(?:张|块|卡)|(?<![\d.])(\d{1,2})\s*(?:x\s*gpus?|gpus?|cards?)"
                            r"(?![A-Za-z0-9])|(单|双|一|两|四|八)\s*(?:张|块|卡)", re.IGNORECASE),
    "engine": re.compile(r"(?<![A-Za-z])(vllm|sglang|lmdeploy|ollama|tgi|transformers|hf|huggingface|llama\.cpp|"
                         r"trt-?llm|tensorrt-llm)(?![A-Za-z])", re.IGNORECASE),
    "seq_len": re.compile(r"(?<![A-Za-z\d])(\d{1,3})\s*k(?![A-Za-z])(?:\s*(?:上下文|长度|context|seq))?", re.IGNORECASE),
}
_CN_NUM = {"单": 1, "一": 1, "双": 2, "两": 2, "四": 4, "八": 8}


@dataclass(frozen=True)
class SetupSpan:
    knob: str
    value: str | int
    outcome: str  # worked | oom | error | slow | unknown


@dataclass(frozen=True)
class Contrast:
    knob: str
    setups: tuple[SetupSpan, ...]
    asked: int  # index of the setup the question is about


def _value(knob: str, m: re.Match[str]) -> str | int:
    if knob == "gpu_count":
        digits = m.group(1) or m.group(2)
        return int(digits) if digits else _CN_NUM[m.group(3)]
    if knob == "engine":
        name = m.group(1).lower()
        return {"huggingface": "hf", "transformers": "hf", "tensorrt-llm": "trtllm", "trt-llm": "trtllm",
                "trtllm": "trtllm"}.get(name, name)
    if knob == "seq_len":
        return int(m.group(1)) * 1024
    return int(m.group(1))


def _outcome(clause: str) -> str:
    if _FAILED.search(clause):
        return "oom" if re.search(r"oom|显存|out of memory", clause, re.IGNORECASE) else "error"
    if _SLOWER.search(clause):
        return "slow"
    if _WORKED.search(clause):
        return "worked"
    return "unknown"


def _segments(text: str, pattern: re.Pattern[str]) -> list[tuple[re.Match[str], str]]:
    """Each value of the knob with the words that go with it: from the clause's start (or the previous value) to
    the clause's end (or the next value)."""
    out: list[tuple[re.Match[str], str]] = []
    for clause in (c for c in _CLAUSE.split(text) if c and c.strip()):
        found = list(pattern.finditer(clause))
        for i, m in enumerate(found):
            start = 0 if i == 0 else m.start()
            end = found[i + 1].start() if i + 1 < len(found) else len(clause)
            out.append((m, clause[start:end]))
    return out


def find_contrast(text: str) -> Contrast | None:
    """The knob whose two values the post sets against each other with their outcomes, or None. A comparison
    ("8张比4张还慢") is not two setups with outcomes: the diagnosis of scaling reads it."""
    if re.search(r"比.{0,8}(?:还|更)?慢|slower than", text, re.IGNORECASE):
        return None
    for knob, pattern in _KNOBS.items():
        spans = [SetupSpan(knob, _value(knob, m), _outcome(seg)) for m, seg in _segments(text, pattern)]
        values = {s.value for s in spans}
        outcomes = {s.outcome for s in spans}
        if len(values) >= 2 and len(outcomes) >= 2 and outcomes & {"oom", "error", "slow"}:
            failed = [i for i, s in enumerate(spans) if s.outcome in ("oom", "error", "slow")]
            return Contrast(knob, tuple(spans), failed[-1] if failed else len(spans) - 1)
    return None
