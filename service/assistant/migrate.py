"""One-time migration of a session file from before turns were stored: LangGraph checkpoints (the full state at
every step, which grew with the square of the session length) become one turn row each, then the checkpoint
tables are dropped and the file compacted. Runs on open; a file without checkpoint tables is left alone."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from service.assistant.sessions import SessionStore, TurnRecord

log = logging.getLogger(__name__)
CHECKPOINT_TABLES = ("checkpoints", "writes", "checkpoint_blobs", "checkpoint_writes")
# (session id, the messages up to and including one turn) -> that turn's AskResult as a dict
Summarise = Callable[[str, list[BaseMessage]], dict[str, Any]]


def split_turns(messages: list[BaseMessage]) -> list[list[BaseMessage]]:
    """A legacy checkpoint's message list cut into turns, each starting at a human message."""
    turns: list[list[BaseMessage]] = []
    for msg in messages:
        if isinstance(msg, HumanMessage):
            turns.append([msg])
        elif turns:
            turns[-1].append(msg)
    return turns


def turn_workload(turn: list[BaseMessage]) -> dict[str, Any] | None:
    """The arguments of the turn's last tool call that planned a workload (without `lang`), or None."""
    for msg in reversed(turn):
        if isinstance(msg, AIMessage):
            for call in reversed(msg.tool_calls):
                if call["name"] not in ("search_knowledge", "lookup_catalog", "lookup_fact"):
                    return {k: v for k, v in call["args"].items() if k != "lang"}
    return None


def legacy_tables(path: Path) -> list[str]:
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [t for t in CHECKPOINT_TABLES if t in names]


def _messages(conn: sqlite3.Connection, session_id: str) -> list[BaseMessage]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn)
    found = saver.get_tuple({"configurable": {"thread_id": session_id}})
    if found is None:
        return []
    messages = found.checkpoint.get("channel_values", {}).get("messages", [])
    return [m for m in messages if isinstance(m, BaseMessage)]


def migrate_checkpoints(path: Path, store: SessionStore, summarise: Summarise) -> int:
    """Turn every legacy session's checkpoint into turn rows; returns how many turns were written."""
    tables = legacy_tables(path)
    if not tables:
        return 0
    written = 0
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        for info in store.list():
            if store.turns(info.session_id):
                continue
            messages = _messages(conn, info.session_id)
            done: list[BaseMessage] = []
            owner = store.owner_of(info.session_id)
            for turn in split_turns(messages):
                done += turn
                try:
                    result = summarise(info.session_id, done)
                except Exception as exc:  # an unreadable old turn: keep its text, not its plan
                    log.warning("migrating session %s: turn not summarised: %s", info.session_id, exc)
                    result = {}
                text = str(result.get("answer_markdown", "")) or str(turn[-1].content if len(turn) > 1 else "")
                store.append(info.session_id, owner, TurnRecord(
                    user=str(turn[0].content), assistant=text, workload=turn_workload(turn),
                    result=result or None, created_at=info.updated_at))
                written += 1
        for table in tables:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    log.info("migrated %d turns from LangGraph checkpoints in %s", written, path)
    return written
