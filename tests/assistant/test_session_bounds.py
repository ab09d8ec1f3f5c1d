"""Bounded sessions on the store (SQLite): a turn reads only the last turns it needs, history comes a page at a
time, a stored turn is the compact answer (its whole plan recomputed on request), a transaction run again after a
lost connection stores its turn once, old stores get the type column, and the cap on turns says what to do."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from service.assistant import compact
from service.assistant.db import SqliteDatabase
from service.assistant.service import CONTEXT_TURNS, Assistant
from service.assistant.sessions import SessionFullError, SessionStore, TurnRecord
from service.settings import Settings
from tests.assistant.test_agent import FakeRetriever

T = TypeVar("T")
FIRST = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


def store_with(tmp_path: Path, turns: int, *, intent: str | None = "plan") -> SessionStore:
    store = SessionStore(SqliteDatabase(tmp_path / "s.sqlite"))
    for n in range(1, turns + 1):
        workload = {"model": "Qwen2-7B", "budget_cny": 1000 + n} if n == 1 else None
        store.append("s", "alice", TurnRecord(user=f"q{n}", assistant=f"a{n}", workload=workload,
                                              intent=intent if n == 1 else "knowledge"))
    return store


def test_a_turn_reads_the_last_turns_and_the_question_it_continues(tmp_path: Path) -> None:
    store = store_with(tmp_path, 60)
    context = store.context("s", "alice", 20)
    assert [t.user for t in context] == [f"q{n}" for n in range(41, 61)]
    # none of the last 20 carries a workload but each has a type: that is what the next turn continues
    store2 = SessionStore(SqliteDatabase(tmp_path / "t.sqlite"))
    store2.append("s", "alice", TurnRecord(user="q1", assistant="a1", workload={"model": "Qwen2-7B"}, intent="plan"))
    for n in range(2, 30):
        store2.append("s", "alice", TurnRecord(user=f"q{n}", assistant=f"a{n}"))  # legacy: no type, no workload
    carried = store2.context("s", "alice", 20)
    assert carried[0].user == "q1" and carried[0].workload == {"model": "Qwen2-7B"} and len(carried) == 21


def test_history_pages_oldest_first_with_the_next_page_named(tmp_path: Path) -> None:
    store = store_with(tmp_path, 7)
    page, more = store.page("s", "alice", 3)
    assert [t.seq for t in page] == [5, 6, 7] and more
    page, more = store.page("s", "alice", 3, before=5)
    assert [t.seq for t in page] == [2, 3, 4] and more
    page, more = store.page("s", "alice", 3, before=2)
    assert [t.seq for t in page] == [1] and not more


def test_a_transaction_run_again_after_its_commit_stores_the_turn_once(tmp_path: Path) -> None:
    """Postgres runs a transaction again when its connection dies, also when the commit went through and only its
    acknowledgement was lost: the second run must find the turn, not add it again."""

    class RunsTwice(SqliteDatabase):
        def atomic(self, fn: Callable[[], T]) -> T:
            with self.transaction():
                fn()  # committed ...
            with self.transaction():
                return fn()  # ... and run again, as after a lost acknowledgement

    store = SessionStore(RunsTwice(tmp_path / "s.sqlite"))
    first = store.append("s", "alice", TurnRecord(user="q1", assistant="a1"))
    second = store.append("s", "alice", TurnRecord(user="q2", assistant="a2"))
    assert (first.seq, second.seq) == (1, 2)
    assert [t.user for t in store.turns("s", "alice")] == ["q1", "q2"]
    info = store.get("s", "alice")
    assert info is not None and info.turns == 2


def test_a_store_from_before_gets_its_types_from_the_stored_results(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    store = SessionStore(SqliteDatabase(path))
    store.append("s", "alice", TurnRecord(user="q1", assistant="a1", result={"intent": "serving"}))
    conn = sqlite3.connect(path)  # as schema version 2 left it: no type column values
    conn.execute("UPDATE advisor_turns SET intent=NULL")
    conn.execute("UPDATE advisor_meta SET value='2' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    reopened = SessionStore(SqliteDatabase(path))
    assert reopened.db.execute("SELECT intent FROM advisor_turns") == [("serving",)]
    assert reopened.context("s", "alice", 5)[0].intent == "serving"


@pytest.fixture
def assistant(tmp_path: Path) -> Assistant:
    return Assistant(Settings(data_dir=tmp_path, llm="offline", DATABASE_URL="", session_max_turns=3),
                     retriever_factory=FakeRetriever)


def test_a_stored_plan_turn_is_compact_and_its_whole_plan_comes_back_on_request(assistant: Assistant) -> None:
    full = assistant.ask(FIRST).model_dump(mode="json")
    sid = full["session_id"]
    stored = json.loads(assistant.db.execute("SELECT result FROM advisor_turns")[0][0])
    assert "recommendation" not in stored and stored["answer_markdown"] == compact.TEXT_REF  # the plan once
    kept = stored["answer"]["plan"]
    plan = full["answer"]["plan"]
    assert len(kept["candidates"]) < len(plan["candidates"]) and kept["frontier"] == {} and plan["frontier"]
    assert {c["instance_type"] for c in kept["candidates"]} == compact.chosen_types(plan) & {
        c["instance_type"] for c in plan["candidates"]}
    assert kept["n_candidates"] == plan["n_candidates"] and kept["picks"] == plan["picks"]
    for c in kept["candidates"]:
        assert list(c["cost_cny"]) == [c["billing"]]
    # a cost line's price that is its candidate's own is stored once: a reference, put back on read
    assert any(c["cost_cny"][c["billing"]]["price"] == compact.PRICE_REF for c in kept["candidates"])
    shown = assistant.session_page(sid, detail="compact").messages[1]
    assert shown.answer is not None and shown.content == full["answer_markdown"]
    assert shown.answer["plan"] == compact.answer(full["answer"])["plan"]  # read back as answered (compact)
    whole = assistant.session_page(sid, detail="full").messages[1]
    assert whole.answer is not None and whole.answer["plan"] == plan  # recomputed from the stored workload


def test_a_full_session_says_so_and_stores_nothing(assistant: Assistant) -> None:
    sid = assistant.ask(FIRST).session_id
    assistant.ask("预算改成8000呢", sid)
    assistant.ask("预算改成9000呢", sid)
    with pytest.raises(SessionFullError) as err:
        assistant.ask("预算改成10000呢", sid)
    assert "3 turns" in err.value.message and "without session_id" in err.value.fix
    assert [t.user for t in assistant.sessions.turns(sid)][-1] == "预算改成9000呢"
    assert assistant.ask("预算改成10000呢").session_id != sid  # a new chat is answered


def test_context_turns_bound_what_a_turn_reads(assistant: Assistant, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = assistant.sessions.context

    def context(sid: str, owner: str, turns: int) -> Any:
        seen.append(turns)
        return real(sid, owner, turns)

    monkeypatch.setattr(assistant.sessions, "context", context)
    sid = assistant.ask(FIRST).session_id
    assistant.ask("预算改成8000呢", sid)
    assert seen == [CONTEXT_TURNS, CONTEXT_TURNS]


def test_a_stored_turn_keeps_its_documents_once_and_gives_them_back(assistant: Assistant) -> None:
    asked = assistant.ask(FIRST + "，生成申请说明和启动脚本").model_dump(mode="json")
    assert asked["documents"]["request_document"] and asked["documents"]["launch_bundle"]
    stored = json.loads(assistant.db.execute("SELECT result FROM advisor_turns")[0][0])
    assert stored["documents"] == compact.DOCS_REF and stored["answer"]["documents"] == asked["answer"]["documents"]
    again = assistant.sessions.turns(asked["session_id"])[0].result
    assert again is not None and again["documents"] == asked["documents"]


def test_a_stored_serving_turn_keeps_its_card_and_three_options_per_cloud(assistant: Assistant) -> None:
    full = assistant.ask("部署Qwen2.5-72B推理，100并发，用什么卡").model_dump(mode="json")
    assert full["intent"] == "serving" and full["answer"]["plan"]["rejected"]
    stored = json.loads(assistant.db.execute("SELECT result FROM advisor_turns")[0][0])
    kept = stored["answer"]["plan"]
    clouds = [c["cloud"] for c in kept["candidates"]]
    assert kept["rejected"] == [] and all(clouds.count(c) <= compact.SERVING_PER_CLOUD for c in clouds)
    assert set(kept["picks"].values()) <= {c["instance_type"] for c in kept["candidates"]}
    assert "serving_plan" not in stored  # the card draws the answer's plan: its options are stored once
    read = assistant.sessions.turns(full["session_id"])[0].result
    assert read is not None and read["answer"]["plan"] == kept  # the card's options, as stored
    again = assistant.ask("部署Qwen2.5-72B推理，100并发，用什么卡", request_id="r1")
    replay = assistant.ask("部署Qwen2.5-72B推理，100并发，用什么卡", request_id="r1")
    assert replay.model_dump(mode="json")["answer"]["plan"] == again.model_dump(mode="json")["answer"]["plan"]
