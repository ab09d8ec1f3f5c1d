"""The previous turn's question: the last question-type or workload tool call of earlier turns (its type, its
arguments, its workload), so a follow-up ('那京东云呢', '两张呢', 'fp8 KV 呢') continues the same question."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import ValidationError

from service.assistant.intents.base import EXTRA_ARGS, Previous
from service.assistant.registry import BY_TOOL, WORKLOAD_TOOLS
from service.workload import Workload


def previous_call(messages: Sequence[BaseMessage]) -> Previous | None:
    """The latest earlier turn's question: its tool call when it made one, else the type its reading named (a
    turn answered with a question back or a scope note)."""
    seen: Previous | None = None
    for msg in reversed(messages):
        if isinstance(msg, HumanMessage):
            if seen is not None:
                return seen  # the latest turn had no tool call: its reading's type
            continue
        if not isinstance(msg, AIMessage):
            continue
        for call in reversed(msg.tool_calls):
            if call["name"] in WORKLOAD_TOOLS or call["name"] in BY_TOOL:
                args = dict(call["args"])
                fields = {k: v for k, v in args.items() if k not in EXTRA_ARGS and k in Workload.model_fields}
                try:
                    w: Workload | None = Workload.model_validate(fields)
                except ValidationError:
                    w = None
                qt = BY_TOOL.get(call["name"])
                kind = args.get("question") or (qt.name if qt is not None else "plan")
                return Previous(str(kind), args, w)
        reading = msg.additional_kwargs.get("reading")
        if seen is None and isinstance(reading, dict) and reading.get("type"):
            seen = Previous(str(reading["type"]), {}, None)
    return seen
