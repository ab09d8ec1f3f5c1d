"""The LLM backend's turn: an agent (LangChain create_agent) over the tools derived from the question list
(service/questions/tools.py). The LLM picks the tool and writes the prose; every figure comes from the tools, and
the turn's typed answer is the question tool's result, read back by its module's Answer model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import ValidationError

from service.assistant.types import HistoryTurn
from service.questions.base import AnswerBase
from service.questions.parts import PassageRef
from service.questions.registry import BY_TOOL
from service.questions.turn import ReadingInfo, Turn

MAX_HISTORY_TURNS = 20  # the agent sees at most the last 20 turns; the store keeps them all


def to_messages(turns: Sequence[HistoryTurn], message: str) -> list[BaseMessage]:
    """The conversation as the agent reads it: each earlier user message and its answer, then this message."""
    out: list[BaseMessage] = []
    for turn in turns[-MAX_HISTORY_TURNS:]:
        out += [HumanMessage(turn.user), AIMessage(content=turn.assistant or "…")]
    return [*out, HumanMessage(message)]


def current_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last human message: this turn's tool calls, results and answer."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return list(messages[last + 1:])


def llm_turn(state: dict[str, Any], lang: str) -> Turn:
    """The agent's final state as a Turn: the last question tool's result is the typed answer."""
    turn = current_turn(state["messages"])
    tools = [m for m in turn if isinstance(m, ToolMessage)]
    final = next((m for m in reversed(turn) if isinstance(m, AIMessage) and not m.tool_calls), None)
    text = str(final.content) if final is not None else ""
    answer: AnswerBase | None = None
    qtype, args = "knowledge", None
    passages: list[PassageRef] = []
    calls = {c["id"]: c for m in turn if isinstance(m, AIMessage) for c in m.tool_calls}
    for m in tools:
        art = m.artifact if isinstance(m.artifact, dict) else {}
        for p in art.get("passages") or []:
            try:
                passages.append(PassageRef.model_validate(p))
            except ValidationError:
                continue
        module = BY_TOOL.get(m.name or "")
        if module is None or "error" in art:
            continue
        try:
            answer = module.answer.model_validate(art)
        except ValidationError:
            continue
        qtype = module.name
        call = calls.get(m.tool_call_id)
        args = {**dict(call["args"]), "question": module.name} if call else None
    return Turn(type=qtype, reading=ReadingInfo(type=qtype, confidence="sure"), args=args, answer=answer, text=text,
                citations=passages, language=lang)
