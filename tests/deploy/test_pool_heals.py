"""The Postgres pool (service/assistant/postgres.py) against a real server: a connection that dies under a held
session lock is replaced and the lock taken again; a transaction whose connection dies is run again once and its
turn stored once; after an outage longer than the pool's reconnection back-off, the first ping after the server is
back succeeds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from service.assistant.postgres import PostgresDatabase
from service.assistant.sessions import SessionStore, TurnRecord
from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"the pool tests need Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


@pytest.fixture
def db(postgres: PgServer) -> Iterator[PostgresDatabase]:
    database = PostgresDatabase(postgres.url, max_connections=4)
    yield database
    database.close()


def terminate(url: str, pid: int) -> None:
    """What a server restart does to one connection: the backend ends ("terminating connection due to
    administrator command")."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def advisory_holders(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").fetchone()
        return int(row[0]) if row else 0


def test_a_connection_lost_under_a_session_lock_is_replaced_and_the_lock_taken_again(
        db: PostgresDatabase, postgres: PgServer) -> None:
    with db.lock("session:alice:s1"):
        bound = db._local.bound
        first = bound.conn.info.backend_pid
        terminate(postgres.url, first)
        assert db.execute("SELECT 41 + 1") == [(42,)]  # retried on a new connection
        assert bound.conn.info.backend_pid != first
        assert advisory_holders(postgres.url) == 1  # the lock is held again, on the new connection
    assert advisory_holders(postgres.url) == 0


def test_a_turn_whose_connection_dies_mid_transaction_is_stored_once(db: PostgresDatabase, postgres: PgServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(db)
    real = db.execute
    killed: list[int] = []

    def execute(sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        rows = real(sql, args)
        if sql.startswith("INSERT INTO advisor_turns") and not killed:  # after the insert, before the commit
            killed.append(db._local.bound.conn.info.backend_pid)
            terminate(postgres.url, killed[0])
        return rows

    monkeypatch.setattr(db, "execute", execute)
    with db.lock("session:bob:s2"):
        stored = store.append("s2", "bob", TurnRecord(user="用Qwen2-7B做LoRA", assistant="答"))
    monkeypatch.undo()
    assert killed and stored.seq == 1
    assert [(t.seq, t.user) for t in store.turns("s2", "bob")] == [(1, "用Qwen2-7B做LoRA")]
    info = store.get("s2", "bob")
    assert info is not None and info.turns == 1


def test_the_first_ping_after_a_long_outage_succeeds(db: PostgresDatabase, postgres: PgServer) -> None:
    """psycopg_pool's reconnection backs off 1, 2, 4, 8 s...: after 10 s down its next attempt may be seconds after
    the server is back. The pool is replaced as soon as the server accepts a connection."""
    db.ping()
    postgres.pause()
    try:
        with pytest.raises(Exception, match="cannot be reached|failed"):
            db.ping(1.0)
        time.sleep(10)
    finally:
        postgres.resume()
    start = time.monotonic()
    db.ping(2.0)
    assert time.monotonic() - start < 2.0
    assert db.execute("SELECT 1") == [(1,)]


def test_a_request_long_into_an_outage_gets_its_503_promptly(db: PostgresDatabase, postgres: PgServer,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Long after the last dead connection was seen (the trouble window passed), a request waiting for the pool is
    still told the database is away once the pool's own connection attempts fail, not made to wait as for a busy
    pool (BUSY_WAIT_S)."""
    from service.assistant import postgres as pg
    from service.errors import DependencyUnavailableError

    monkeypatch.setattr(pg, "TROUBLE_WINDOW_S", 0.5)
    monkeypatch.setattr(pg, "POOL_WAIT_S", 1.0)
    monkeypatch.setattr(pg, "BUSY_WAIT_S", 60.0)
    db.ping()
    postgres.pause()
    try:
        with pytest.raises(DependencyUnavailableError):
            db.execute("SELECT 1")  # finds the dead connections: trouble seen now
        time.sleep(1.0)  # the window passes; the pool keeps trying to connect in the background
        start = time.monotonic()
        with pytest.raises(DependencyUnavailableError, match="cannot be reached"):
            db.execute("SELECT 1", ())
        assert time.monotonic() - start < 10
    finally:
        postgres.resume()
    assert db.execute("SELECT 1") == [(1,)]
