"""The pool heals: Postgres restarted (a 3 s and a 20 s outage) under load on 2 uvicorn workers (chats, session
lists, /readyz; tests/deploy/restart_load.py). From 5 s after Postgres is back every request is 200, and every
acknowledged turn is stored exactly once.

Before the fix (the pool handed out connections that had died with the server, and backed off for up to 32 s
before reconnecting): /readyz still failed 2 of 387 calls more than 5 s after a 20 s outage, and requests in flight
or arriving during a 3 s restart failed (10 chats, 4 session lists); now they wait for the database (up to 5 s)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.postgres import PgServer, find_pg_bin, start_postgres
from tests.deploy.restart_load import Run, restart_under_load, serve

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
GRACE_S = 5.0


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir, why = find_pg_bin()
    if bin_dir is None:
        pytest.skip(f"the restart test needs Postgres: {why}")
    server = start_postgres(bin_dir)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(postgres: PgServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(postgres, Path(tmp_path_factory.mktemp("restart"))) as url:
        yield url


def check(run: Run) -> None:
    summary = run.summary(GRACE_S)
    for kind in ("chat", "sessions", "readyz"):
        bad, n = run.failures(kind, run.up_at_s + GRACE_S)
        assert n > 20 and bad == 0, (kind, summary)
    assert run.lost == 0 and run.duplicated == 0, summary
    assert run.stored >= sum(s.status == 200 for s in run.sent if s.kind == "chat"), summary


@pytest.mark.parametrize("outage_s", [3.0, 20.0])
def test_requests_are_served_within_seconds_of_postgres_coming_back(postgres: PgServer, server: str,
                                                                    outage_s: float) -> None:
    check(restart_under_load(postgres, server, outage_s, before_s=6.0, after_s=12.0))
