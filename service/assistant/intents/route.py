"""Which intent tool the offline model calls for a message, with which arguments: the reader's subject, the
previous turn's question type and subject (a follow-up such as '那京东云呢' keeps them), and the workload."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import ValidationError

from service.assistant.intents.tools import EXTRA_ARGS, INTENT_TOOLS
from service.reader import ParsedMessage
from service.workload import Workload

FOLLOWED = ("feasibility", "min_gpus", "compare", "savings")
TOOL_OF = {"feasibility": "check_feasibility", "min_gpus": "find_min_gpus", "compare": "compare_options",
           "savings": "estimate_savings"}
_FAST = re.compile(r"快|慢|速度|时间|(?<![A-Za-z])(?:faster|fastest|quicker|slower|speed|sooner|time)(?![A-Za-z])",
                   re.IGNORECASE)


@dataclass(frozen=True)
class PreviousCall:
    intent: str
    args: dict[str, Any]
    workload: Workload | None


def previous_call(messages: Sequence[BaseMessage], tools: Sequence[str]) -> PreviousCall | None:
    """The last question-type or workload tool call of earlier turns, with its workload."""
    for msg in reversed(messages):
        if isinstance(msg, AIMessage):
            for call in reversed(msg.tool_calls):
                if call["name"] in tools or call["name"] in INTENT_TOOLS:
                    args = dict(call["args"])
                    fields = {k: v for k, v in args.items() if k not in EXTRA_ARGS}
                    try:
                        w: Workload | None = Workload.model_validate(fields)
                    except ValidationError:
                        w = None
                    intent = args.get("question") or INTENT_TOOLS.get(call["name"], "plan")
                    return PreviousCall(str(intent), args, w)
    return None


def question_type(parsed: ParsedMessage, prev: PreviousCall | None) -> str | None:
    """The message's intent; a follow-up without intent words and without a new model keeps the previous one."""
    intent = parsed.subject.intent
    if intent is None and prev is not None and prev.intent in FOLLOWED and prev.workload is not None \
            and "model" not in parsed.slots:
        return prev.intent
    return intent


def intent_call(intent: str, slots: dict[str, Any], parsed: ParsedMessage, prev: PreviousCall | None,
                text: str) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) for a question type, or None when its subject is missing (then: plan). The
    arguments name the question type (`question`), so a follow-up replayed from stored turns keeps it."""
    routed = _intent_call(intent, slots, parsed, prev, text)
    return None if routed is None else (routed[0], {**routed[1], "question": intent})


def _intent_call(intent: str, slots: dict[str, Any], parsed: ParsedMessage, prev: PreviousCall | None,
                 text: str) -> tuple[str, dict[str, Any]] | None:
    subject = parsed.subject
    same = prev is not None and prev.intent == intent
    # the GPU asked about carries over between feasibility and min_gpus ('is an L20 enough?' -> 'how many?')
    carried = prev.args.get("gpu") if prev is not None and prev.intent in ("feasibility", "min_gpus") else None
    if intent == "feasibility":
        gpu = subject.gpus[0] if subject.gpus else carried
        if not gpu:
            return None
        count = subject.gpu_count or (prev.args.get("gpu_count") if same and prev and not subject.gpus else None)
        return TOOL_OF[intent], {**slots, "gpu": gpu, "gpu_count": count or 1}
    if intent == "min_gpus":
        gpu = subject.gpus[0] if subject.gpus else carried
        return TOOL_OF[intent], {**{k: v for k, v in slots.items() if k != "gpu_count"}, "gpu": gpu}
    if intent == "compare":
        kind, options = subject.compare_kind, list(subject.options)
        if not options and same and prev is not None:
            kind, options = prev.args.get("compare_kind"), list(prev.args.get("options") or [])
        if not options:
            return None
        by = "hours" if _FAST.search(text) else (prev.args.get("by", "cost") if same and prev and
                                                  not subject.options else "cost")
        drop = {"gpu": ("gpu_include", "gpu_count"), "cloud": ("clouds",), "method": ("method", "quant_bits"),
                "billing": ("billing",)}.get(str(kind), ())
        return TOOL_OF[intent], {**{k: v for k, v in slots.items() if k not in drop}, "compare_kind": kind,
                                 "options": options, "by": by}
    if intent == "savings":
        before = dict(subject.before)
        if not before and same and subject.intent is None and prev is not None and prev.args.get("before"):
            # '换成全参要贵多少' -> '那京东云呢': the same change, on the follow-up's workload
            before = {**{k: v for k, v in slots.items() if k in ("clouds", "gpu_include", "billing")},
                      **dict(prev.args["before"])}
        if not before and prev is not None and prev.workload is not None:
            old = prev.workload.model_dump()
            before = {k: old.get(k) for k, v in slots.items() if old.get(k) != v and k in Workload.model_fields}
        if not before:  # one message: 'how much cheaper is spot', '包月能便宜多少' against the default choice
            defaults: dict[str, Any] = {"billing": None, "epochs": None, "clouds": [], "gpu_include": []}
            before = {k: v for k, v in defaults.items() if k in parsed.slots}
        if not before:
            return None
        if _FAST.search(text):  # 'V100换成A100能快多少': the fastest pick on both sides, the time first
            fastest = {} if "objective" in parsed.slots else {"objective": "fastest"}
            return TOOL_OF[intent], {**slots, **fastest, "before": before, "by": "hours"}
        return TOOL_OF[intent], {**slots, "before": before, "by": "cost"}
    return None
