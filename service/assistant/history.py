"""A conversation as the agent reads it, rebuilt from stored (or caller-given) turns on every request.

Each earlier turn becomes: the user's message; when the answer was planned from a workload, the plan_training call
with those arguments and a short tool result (so the offline model's follow-ups, and an LLM, see what was planned);
then the answer text. Nothing else is kept between turns: no growing checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from service.assistant.registry import WORKLOAD_TOOLS
from service.assistant.types import HistoryTurn

MAX_HISTORY_TURNS = 20  # the agent sees at most the last 20 turns; the store keeps them all
_RESULT_NOTE = "Earlier plan for this workload; its figures are in the answer that follows."


def to_messages(turns: Sequence[HistoryTurn]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for n, turn in enumerate(turns[-MAX_HISTORY_TURNS:]):
        out.append(HumanMessage(turn.user))
        if turn.workload:
            call_id = f"call_history_{n}"
            args = {k: v for k, v in turn.workload.items() if v is not None}
            out.append(AIMessage(content="", tool_calls=[
                {"name": "plan_training", "args": args, "id": call_id, "type": "tool_call"}]))
            out.append(ToolMessage(content=json.dumps({"note": _RESULT_NOTE, "workload": args}, ensure_ascii=False,
                                                      default=str), tool_call_id=call_id, name="plan_training"))
        kwargs = {"reading": {"type": turn.intent}} if turn.intent else {}
        out.append(AIMessage(content=turn.assistant or "…", additional_kwargs=kwargs))
    return out


def human_message(message: str, lang: str | None) -> HumanMessage:
    """The user's message; a requested answer language rides along for the offline model."""
    return HumanMessage(message, additional_kwargs={"answer_language": lang} if lang else {})


def turn_workload(turn_messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """The arguments of the turn's last workload tool call (without `lang`), or None."""
    for msg in reversed(turn_messages):
        if isinstance(msg, AIMessage):
            for call in reversed(msg.tool_calls):
                if call["name"] in WORKLOAD_TOOLS:
                    return {k: v for k, v in call["args"].items() if k != "lang"}
    return None


def current_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last human message: this turn's tool calls, results and answer."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return list(messages[last + 1:])


def split_turns(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """A legacy checkpoint's message list cut into turns, each starting at a human message."""
    turns: list[list[BaseMessage]] = []
    for msg in messages:
        if isinstance(msg, HumanMessage):
            turns.append([msg])
        elif turns:
            turns[-1].append(msg)
    return turns
