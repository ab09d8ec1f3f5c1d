"""Retention: sessions untouched for GPU_ADVISOR_SESSION_TTL_DAYS are deleted with their turns and ratings (by
`gpu-advisor sessions prune`, and hourly by the server after a turn), the rest are kept whole, and a SQLite file
gives the space back."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.assistant import retention
from service.assistant.db import SqliteDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from service.cli.app import build_app
from service.settings import get_settings

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def stamp(days_ago: float) -> str:
    return (NOW - timedelta(days=days_ago)).isoformat(timespec="microseconds")


def fill(store: SessionStore) -> None:
    """old (100 days, 3 turns, rated), recent (10 days, 2 turns), and a second owner's old one with the same id."""
    for owner, sid, days, turns in (("alice", "old", 100, 3), ("alice", "recent", 10, 2), ("bob", "old", 95, 1)):
        for n in range(turns):
            store.append(sid, owner, TurnRecord(user=f"{sid} {n}", assistant="a" * 2000, created_at=stamp(days)))
    store.rate("old", 1, "up", rater="U1", owner="alice")


def test_prune_deletes_what_is_past_the_ttl_and_keeps_the_rest_whole(tmp_path: Path) -> None:
    store = SessionStore(SqliteDatabase(tmp_path / "s.sqlite"))
    fill(store)
    assert retention.prune(store, 0, NOW).sessions == 0  # 0: keep everything
    done = retention.prune(store, 30, NOW)
    assert (done.sessions, done.turns) == (2, 4) and done.cutoff == stamp(30)
    assert [(s.session_id, s.turns) for s in store.list()] == [("recent", 2)]
    assert store.db.execute("SELECT COUNT(*) FROM advisor_turns") == [(2,)]
    assert store.db.execute("SELECT COUNT(*) FROM advisor_feedback") == [(0,)]
    assert retention.prune(store, 30, NOW).sessions == 0


def test_the_prune_command_deletes_and_gives_the_space_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.sqlite"
    store = SessionStore(SqliteDatabase(path))
    for n in range(200):  # ~1 MB of old turns
        store.append("big", "alice", TurnRecord(user=f"q{n}", assistant="答" * 2000, created_at=stamp(400)))
    store.append("kept", "alice", TurnRecord(user="q", assistant="a"))
    store.db.close()
    before = path.stat().st_size
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", "")
    monkeypatch.setenv("GPU_ADVISOR_SESSION_TTL_DAYS", "365")
    get_settings.cache_clear()
    try:
        dry = CliRunner().invoke(build_app(), ["sessions", "prune", "--dry-run"])
        done = CliRunner().invoke(build_app(), ["sessions", "prune"])
        stats = CliRunner().invoke(build_app(), ["sessions", "stats", "--json"])
    finally:
        get_settings.cache_clear()
    assert dry.exit_code == 0 and "would delete 1 sessions (200 turns)" in dry.output, dry.output
    assert done.exit_code == 0 and "deleted 1 sessions (200 turns)" in done.output, done.output
    assert '"sessions": 1' in stats.output and '"ttl_days": 365' in stats.output
    assert path.stat().st_size < before / 4
    assert [s.session_id for s in SessionStore(SqliteDatabase(path)).list()] == ["kept"]


def test_the_server_prunes_at_most_hourly_after_a_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(SqliteDatabase(tmp_path / "s.sqlite"))
    store.append("ancient", "alice", TurnRecord(user="q", assistant="a", created_at=stamp(5000)))
    monkeypatch.setitem(retention._last_prune, "at", float("-inf"))
    retention.maybe_prune(store, 0)  # no TTL: nothing runs
    assert retention._last_prune["at"] == float("-inf")
    retention.maybe_prune(store, 30)
    deadline = time.monotonic() + 10
    while store.list() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.list() == []
    for thread in [t for t in threading.enumerate() if t.name == "session-prune"]:
        thread.join(10)  # the first prune has run its last batch query before the next append
    store.append("ancient", "alice", TurnRecord(user="q", assistant="a", created_at=stamp(5000)))
    retention.maybe_prune(store, 30)  # within the hour: not again
    time.sleep(0.2)
    assert [s.session_id for s in store.list()] == ["ancient"]
