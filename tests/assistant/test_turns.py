"""Stored turns: concurrent turns to one session are all kept in order, a retry with the same request id is
answered once, storage grows linearly, a dropped stream is recorded consistently, history alone carries a
follow-up, and a pre-turn-store session file is migrated."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from service.assistant.service import Assistant
from service.assistant.sessions import SessionNotFoundError
from service.assistant.types import HistoryTurn
from service.settings import Settings
from tests.assistant.test_agent import FakeRetriever

FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


@pytest.fixture
def assistant(tmp_path: Path) -> Assistant:
    return Assistant(Settings(data_dir=tmp_path, llm="offline", DATABASE_URL=""), retriever_factory=FakeRetriever)


def test_concurrent_turns_to_one_session_are_all_kept_in_order(assistant: Assistant) -> None:
    sid = assistant.ask(FIRST).session_id
    budgets = [4000 + 500 * i for i in range(8)]
    errors: list[BaseException] = []

    def turn(budget: int) -> None:
        try:
            assistant.ask(f"预算改成{budget}呢", sid)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=turn, args=(b,)) for b in budgets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    turns = assistant.sessions.turns(sid)
    assert [t.seq for t in turns] == list(range(1, 10))
    assert sorted(t.user for t in turns[1:]) == sorted(f"预算改成{b}呢" for b in budgets)
    assert assistant.sessions.get(sid) is not None and assistant.sessions.get(sid).turns == 9  # type: ignore[union-attr]
    # each follow-up was planned from the model of the first turn, with its own budget
    for t in turns[1:]:
        assert t.workload is not None and t.workload["model"] == "Qwen2-7B"
        assert str(int(t.workload["budget_cny"])) in t.user


def test_a_retry_with_the_same_request_id_is_answered_once(assistant: Assistant) -> None:
    first = assistant.ask(FIRST, request_id="req-1", owner="alice")
    again = assistant.ask(FIRST, request_id="req-1", owner="alice")
    assert again.session_id == first.session_id and again.answer_markdown == first.answer_markdown
    follow = assistant.ask("预算改成8000呢", first.session_id, request_id="req-2", owner="alice")
    assert assistant.ask("预算改成8000呢", first.session_id, request_id="req-2", owner="alice") == follow
    assert len(assistant.sessions.turns(first.session_id)) == 2
    other = assistant.ask(FIRST, request_id="req-1", owner="bob")  # request ids are per caller
    assert other.session_id != first.session_id


def test_a_session_is_unknown_to_another_owner(assistant: Assistant) -> None:
    sid = assistant.ask(FIRST, owner="alice").session_id
    assert assistant.has_session(sid, "alice") and not assistant.has_session(sid, "bob")
    assert [s.session_id for s in assistant.list_sessions("bob")] == []
    for call in (lambda: assistant.ask("预算改成8000呢", sid, owner="bob"),
                 lambda: assistant.session_messages(sid, "bob"),
                 lambda: assistant.rename_session(sid, "x", "bob"),
                 lambda: assistant.delete_session(sid, "bob")):
        with pytest.raises(SessionNotFoundError):
            call()
    assert len(assistant.sessions.turns(sid)) == 1
    # create=True (an OpenAI `user`) names bob's own session of that id: alice's is untouched (ids are per owner)
    assert assistant.ask("预算改成8000呢", sid, owner="bob", create=True).session_id == sid
    assert [len(assistant.sessions.turns(sid, who)) for who in ("alice", "bob")] == [1, 1]
    msgs = assistant.session_messages(sid, "alice")
    assert [m.role for m in msgs] == ["user", "assistant"]
    assert (msgs[1].answer or {}).get("kind") == "plan" and msgs[1].workload is not None


def test_storage_per_turn_does_not_grow_with_the_session(assistant: Assistant) -> None:
    sid = assistant.ask(FIRST).session_id
    for budget in range(4000, 4000 + 500 * 9, 500):
        assistant.ask(f"预算改成{budget}呢", sid)
    db = sqlite3.connect(assistant.settings.data_dir / "sessions.sqlite")
    sizes = [r[0] for r in db.execute("SELECT LENGTH(result) + LENGTH(answer) FROM advisor_turns "
                                      "WHERE session_id=? ORDER BY seq", (sid,))]
    assert len(sizes) == 10
    intents = [r[0] for r in db.execute("SELECT json_extract(result, '$.intent') FROM advisor_turns "
                                        "WHERE session_id=? ORDER BY seq", (sid,))]
    assert intents == ["plan"] * 10  # the premise: each budget follow-up is the same plan, changed
    assert max(sizes[1:]) < 1.5 * min(sizes[1:])  # turn 10 stores about what turn 2 does
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not tables & {"checkpoints", "writes"}


def test_history_alone_carries_a_follow_up(assistant: Assistant) -> None:
    from_text = assistant.ask("预算改成8000呢", history=[HistoryTurn(user=FIRST, assistant="（略）")])
    assert from_text.workload is not None
    assert from_text.workload["model"] == "Qwen2-7B" and from_text.workload["budget_cny"] == 8000
    assert from_text.workload["samples"] == 100000
    planned = {"model": "Llama-3-8B", "method": "qlora", "budget_cny": 5000}
    from_workload = assistant.ask("只看京东云", history=[HistoryTurn(user="plan it", workload=planned)])
    assert from_workload.workload is not None and from_workload.workload["model"] == "Llama-3-8B"
    assert from_workload.workload["method"] == "qlora"


def test_a_dropped_stream_is_recorded_once_marked_stopped_or_complete(assistant: Assistant) -> None:
    events = assistant.stream(FIRST, owner="alice")
    first = next(events)
    assert first.type in ("tool", "token")
    events.close()  # the client went away
    deadline = threading.Event()
    for _ in range(200):
        listed = assistant.list_sessions("alice")
        if listed:
            break
        deadline.wait(0.05)
    assert len(listed) == 1 and listed[0].turns == 1
    turns = assistant.sessions.turns(listed[0].session_id)
    assert len(turns) == 1 and turns[0].user == FIRST
    follow = assistant.ask("预算改成8000呢", listed[0].session_id, owner="alice")
    assert follow.workload is not None and follow.workload["budget_cny"] == 8000
    assert assistant.sessions.get(listed[0].session_id).turns == 2  # type: ignore[union-attr]


def test_a_legacy_checkpoint_file_is_migrated_to_turns(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    path = tmp_path / "sessions.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("CREATE TABLE advisor_sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, "
                 "updated_at TEXT, turns INTEGER)")
    conn.execute("INSERT INTO advisor_sessions VALUES ('old', 'qwen', '2026-01-01T00:00:00+00:00', "
                 "'2026-01-01T00:00:00+00:00', 2)")
    conn.commit()
    graph = StateGraph(MessagesState)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    graph.add_edge("noop", END)
    app = graph.compile(checkpointer=SqliteSaver(conn))
    call = {"name": "plan_training", "args": {"model": "Qwen2-7B", "budget_cny": 3000}, "id": "c1",
            "type": "tool_call"}
    app.invoke({"messages": [HumanMessage("用Qwen2-7B做LoRA，预算3000"), AIMessage("", tool_calls=[call]),
                             ToolMessage("{}", tool_call_id="c1", name="plan_training"), AIMessage("第一次回答"),
                             HumanMessage("换成A100呢"), AIMessage("第二次回答")]},
               {"configurable": {"thread_id": "old"}})
    conn.close()

    a = Assistant(Settings(data_dir=tmp_path, llm="offline", DATABASE_URL=""), retriever_factory=FakeRetriever)
    turns = a.sessions.turns("old")
    assert [(t.user, t.assistant) for t in turns] == [("用Qwen2-7B做LoRA，预算3000", "第一次回答"),
                                                     ("换成A100呢", "第二次回答")]
    assert turns[0].workload == {"model": "Qwen2-7B", "budget_cny": 3000}
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "checkpoints" not in tables and "advisor_turns" in tables
    r = a.ask("预算改成8000呢", "old")
    assert r.workload is not None and r.workload["model"] == "Qwen2-7B" and r.workload["budget_cny"] == 8000


def test_a_streamed_retry_with_the_same_request_id_replays_the_stored_answer(assistant: Assistant) -> None:
    first = list(assistant.stream(FIRST, request_id="stream-1"))
    again = list(assistant.stream(FIRST, request_id="stream-1"))
    assert [e.type for e in again] == ["final"]  # no second run: the stored result
    assert again[0].data["session_id"] == first[-1].data["session_id"]
    assert again[0].data["answer_markdown"] == first[-1].data["answer_markdown"]
    assert len(assistant.sessions.turns(first[-1].data["session_id"])) == 1


def test_a_request_id_reused_in_another_session_is_refused_not_crashed(assistant: Assistant) -> None:
    from service.errors import InvalidInputError

    assistant.ask(FIRST, request_id="key-1", owner="alice")
    other = assistant.ask(FIRST, owner="alice").session_id
    with pytest.raises(InvalidInputError, match="already used in another session"):
        assistant.ask("预算改成8000呢", other, request_id="key-1", owner="alice")
    assert len(assistant.sessions.turns(other)) == 1


def test_asking_back_for_the_model_also_gives_the_guide_in_general(assistant: Assistant) -> None:
    # '一个epoch要20小时正常吗' names no model: one precise question, and meanwhile what the guide says, cited
    r = assistant.ask("一个epoch要20小时正常吗")
    assert r.answer is not None and r.answer.kind == "clarify" and r.answer.slot == "model"
    assert r.answer.passages and r.answer_markdown.startswith("要训练或部署哪个模型")
    assert "一般情况" in r.answer_markdown and r.answer.passages[0].id in {c.id for c in r.citations}


def test_a_stated_load_on_a_pinned_setup_is_the_first_line(assistant: Assistant) -> None:
    # '200并发能扛住吗' on one L20 was answered '能起来' (it starts): the load asked decides the verdict
    over = assistant.ask("Qwen2.5-14B 单卡L20 部署 200并发 能扛住吗").answer_markdown.splitlines()
    assert over[0].startswith("不够，扛不住 200 并发") and "排队" in over[0]
    under = assistant.ask("Qwen2.5-14B 单卡L20 部署 20并发 能扛住吗").answer_markdown.splitlines()
    assert under[0].startswith("能扛住 20 并发")
