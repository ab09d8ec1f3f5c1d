"""Pieces of an answer that need no agent: the prose check (figures the artifacts do not contain), citation links,
stored turns shown as messages, and the agent's stream chunks as our events."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage

from service.assistant.sessions import TurnRecord
from service.assistant.types import Citation, SessionMessage, StreamEvent

_INSTANCE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*\.[A-Za-z0-9]*[0-9][A-Za-z0-9.\-]*\b")
_YUAN = re.compile(r"(?:¥|￥)\s*([0-9][0-9,]*(?:\.[0-9]+)?)|([0-9][0-9,]*(?:\.[0-9]+)?)\s*元")


def _money_values(obj: Any) -> Iterator[float]:
    """Every yuan figure in the artifacts: values of keys ending in _cny, or opening with cny_ (a serving plan's
    cny_per_million_output_tokens)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and (k.endswith("_cny") or k.startswith("cny_")) and isinstance(v, int | float):
                yield float(v)
            else:
                yield from _money_values(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _money_values(v)


def prose_check(text: str, artifacts: list[Any], known_instances: set[str]) -> list[str]:
    """Instance names and yuan figures in the prose that no tool artifact of this turn contains."""
    blob = repr(artifacts)
    numbers = set(_money_values(artifacts))
    flags = [f"instance {m}" for m in dict.fromkeys(_INSTANCE.findall(text))
             if m in known_instances and m not in blob]
    for m in _YUAN.finditer(text):
        if m.group(0).strip() in blob:  # quoted verbatim from an artifact (e.g. a price note)
            continue
        raw = (m.group(1) or m.group(2)).replace(",", "")
        value = float(raw)
        if not any(abs(value - n) <= max(1.0, 0.005 * n) for n in numbers):
            flags.append(f"yuan {m.group(0).strip()}")
    return flags



def turn_messages(turns: list[TurnRecord]) -> list[SessionMessage]:
    """Stored turns as the user and assistant messages a page shows, with each answer's structured plan."""
    out: list[SessionMessage] = []
    for t in turns:
        res = t.result or {}
        out.append(SessionMessage(role="user", content=t.user, turn=t.seq, created_at=t.created_at))
        out.append(SessionMessage(role="assistant", content=t.assistant, turn=t.seq, created_at=t.created_at,
                                  stopped=t.stopped, workload=res.get("workload") or t.workload,
                                  answer=res.get("answer"),
                                  citations=[Citation.model_validate(c) for c in res.get("citations", [])]))
    return out


def citation_url(passage: dict[str, Any]) -> str:
    """Where a person reads the cited section: the API's /knowledge route, or the passage's external link."""
    source, _, anchor = str(passage["id"]).partition("#")
    if source.startswith(("guide/", "catalog/")) and source.endswith(".md"):
        return f"/knowledge/{source}" + (f"#{anchor}" if anchor else "")
    return str(passage.get("ref", ""))


def stream_events(mode: str, chunk: Any) -> Iterator[StreamEvent]:
    """LangGraph stream chunks ("messages" and "updates" modes) as our token and tool events."""
    if mode == "messages":
        msg, meta = chunk
        if meta.get("langgraph_node") == "model" and isinstance(msg, AIMessageChunk | AIMessage) and msg.content:
            for line in str(msg.content).splitlines(keepends=True):
                yield StreamEvent(type="token", text=line)
    elif mode == "updates":
        for node, update in chunk.items():
            for m in (update or {}).get("messages", []):
                if node == "model" and isinstance(m, AIMessage):
                    for call in m.tool_calls:
                        yield StreamEvent(type="tool", name=call["name"], data={"args": call["args"]})
                elif isinstance(m, ToolMessage):
                    yield StreamEvent(type="tool", name=m.name or "", text=str(m.content)[:300])
