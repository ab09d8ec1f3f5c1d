"""The Postgres store (DATABASE_URL): a connection pool that heals after the server restarts.

- Every connection is checked before use (an empty statement): one that died with the server is dropped, with every
  other idle connection of the pool checked at once, so a restart costs each worker one round of checks, not one
  failed request per dead connection.
- A pool whose connections died and whose reconnection attempts back off (psycopg_pool doubles its wait up to
  minutes) is replaced as soon as the server accepts a connection again, so requests and /readyz recover within
  a second of the database, not at the pool's next attempt.
- A request waits up to POOL_WAIT_S for the database (a short restart is ridden out), then gets
  DependencyUnavailableError (HTTP 503).
- A statement whose connection dies under it is retried once on a new connection: reads and the idempotent
  writes (UPDATE/DELETE by key, INSERT ... ON CONFLICT) as they are; `atomic(fn)` runs fn again in a new
  transaction (fn must be safe to run twice: SessionStore.append checks whether the first attempt committed); a
  session lock held on the dead connection is taken again on the new one first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from service.assistant import db as dbmod
from service.assistant.db import KeyedLocks, Row, redacted
from service.errors import DependencyUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")
POOL_WAIT_S = 5.0  # how long a request waits for a database that is away before its 503
BUSY_WAIT_S = 120.0  # how long it waits while every connection is in use (the server answers)
SLICE_S = 0.5  # ... in slices, checking between them whether the server is back and the pool must be replaced
TROUBLE_WINDOW_S = 60.0  # a pool is replaced only after a connection failed within this long
HEAL_EVERY_S = 2.0  # at most one replacement per this long
PROBE_EVERY_S = 0.25  # at most one probe connection per this long
POOL_CONNECT_TIMEOUT_S = 10  # a pooled connection's connect timeout (a loaded server may take seconds to accept)


class ConnectionLost(DependencyUnavailableError):
    """The statement's connection died (the server restarted or went away): safe to retry on a new one."""


@dataclass
class _Binding:
    """The connection a thread holds for its session locks and transaction, and the locks taken on it."""

    pool: Any
    conn: Any
    keys: list[str] = field(default_factory=list)
    depth: int = 0  # nested lock()/atomic() users of this binding
    in_tx: bool = False


class PostgresDatabase:
    """A connection pool. `lock(key)` holds a Postgres advisory lock on one pooled connection, and statements run
    by the same thread inside it use that connection, so a turn never waits for a second connection. 20
    connections per worker at most: 4 workers fit Postgres's default max_connections (100)."""

    kind = "postgres"

    def __init__(self, url: str, max_connections: int = 20) -> None:
        import psycopg

        self.url = url
        self._max = max_connections
        self._errors: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
        self._keys = KeyedLocks()
        self._local = threading.local()
        self._heal_lock = threading.Lock()
        self._trouble_at = float("-inf")  # when a connection last failed its check or its statement
        self._probe_lock = threading.Lock()
        self._probed: tuple[float, bool] = (float("-inf"), False)
        self._healed_at = float("-inf")
        self._connect_errors: dict[int, int] = {}  # the pool's failed connection attempts seen, by pool
        self.replaced = 0  # pools replaced after the server came back (for logs and tests)
        last: Exception | None = None
        for delay in (*dbmod.CONNECT_BACKOFF_S, None):
            pool = self._new_pool()
            try:
                pool.open(wait=True, timeout=dbmod.CONNECT_TIMEOUT_S)
                self.pool = pool
                return
            except Exception as exc:  # server down, bad URL, wrong password
                last = exc
                pool.close()
                if delay is not None:
                    time.sleep(delay)
        raise DependencyUnavailableError(
            f"The session database {redacted(url)} cannot be reached: {type(last).__name__}: {str(last)[:200]}",
            "Start Postgres or fix DATABASE_URL; the service retries and /readyz reports the state.",
        )

    def _new_pool(self) -> Any:
        from psycopg_pool import ConnectionPool

        return ConnectionPool(self.url, min_size=1, max_size=self._max, open=False, timeout=POOL_WAIT_S,
                              kwargs={"autocommit": True, "prepare_threshold": None,
                                      "connect_timeout": POOL_CONNECT_TIMEOUT_S})

    def _unavailable(self, exc: BaseException, lost: bool = False) -> DependencyUnavailableError:
        kind = ConnectionLost if lost else DependencyUnavailableError
        return kind(f"The session database {redacted(self.url)} failed: {str(exc)[:200]}",
                    "Check that Postgres is running; /readyz reports the state.")

    # -- connections ---------------------------------------------------------------------------------
    def _alive(self, conn: Any) -> bool:
        try:
            conn.execute("")
            return True
        except Exception:  # a connection the server closed (restart, admin shutdown, network)
            return False

    def _getconn(self, down_s: float | None = None, busy_s: float | None = None) -> tuple[Any, Any]:
        """(pool, a checked connection). Waits up to `down_s` (POOL_WAIT_S) for a database that is away and up to
        `busy_s` (BUSY_WAIT_S) for a pool whose connections are all in use; then DependencyUnavailableError."""
        from psycopg_pool import PoolClosed, PoolTimeout

        down_s = POOL_WAIT_S if down_s is None else down_s
        busy_s = BUSY_WAIT_S if busy_s is None else busy_s

        start = time.monotonic()
        swept = False
        while True:
            pool, waited = self.pool, time.monotonic() - start
            try:
                conn = pool.getconn(timeout=SLICE_S)
            except (PoolTimeout, PoolClosed):
                # Only after a connection died lately is an empty-handed wait the database's fault: then ask the
                # server, and when it answers while the pool still backs off, replace the pool. Otherwise every
                # connection is busy with requests (or being opened): wait.
                errors = pool.get_stats().get("connections_errors", 0)  # the pool's own failed attempts
                if errors > self._connect_errors.get(id(pool), 0):
                    self._connect_errors = {id(pool): errors}
                    self._trouble_at = time.monotonic()
                troubled = time.monotonic() - self._trouble_at <= TROUBLE_WINDOW_S or pool.closed
                up = self._server_up() if troubled else True
                if troubled and up:
                    self._heal(pool)
                if waited >= (busy_s if up else down_s):
                    why = "has no free connection" if up else "cannot be reached"
                    raise DependencyUnavailableError(
                        f"The session database {redacted(self.url)} {why} (waited {waited:.0f} s).",
                        "Check that Postgres is running; /readyz reports the state.") from None
                continue
            if self._alive(conn):
                return pool, conn
            self._trouble_at = time.monotonic()
            pool.putconn(conn)  # broken: the pool drops it and opens another
            if not swept:  # the others died with it: check every idle connection now, once
                swept = True
                pool.check()

    def _putconn(self, pool: Any, conn: Any) -> None:
        try:
            pool.putconn(conn)
        except Exception:  # the pool was replaced and closed meanwhile: the connection just closes
            conn.close()

    def _heal(self, stale: Any) -> None:
        """Replace `stale` (whose connections died with the server, and which gave none for a while) with a new
        pool; the caller saw the server accept a connection now."""
        now = time.monotonic()
        with self._heal_lock:
            if self.pool is not stale or now - self._healed_at < HEAL_EVERY_S:
                return  # another thread replaced it just now
            fresh = self._new_pool()
            fresh.open(wait=False)
            self.pool, self._healed_at = fresh, now
            self._trouble_at = float("-inf")  # a fresh start: new trouble is seen anew
            self.replaced += 1
        log.warning("session database %s is back: connection pool replaced", redacted(self.url))
        threading.Thread(target=stale.close, kwargs={"timeout": 5.0}, name="pg-pool-close", daemon=True).start()

    def _server_up(self) -> bool:
        """Whether the server accepts a connection now (one probe per PROBE_EVERY_S at most, shared)."""
        import psycopg

        with self._probe_lock:
            at, up = self._probed
            if time.monotonic() - at < PROBE_EVERY_S:
                return up
            try:
                with psycopg.connect(self.url, connect_timeout=int(dbmod.CONNECT_TIMEOUT_S) or 1):
                    up = True
            except Exception:  # still down
                up = False
            self._probed = (time.monotonic(), up)
            return up

    # -- statements ----------------------------------------------------------------------------------
    def _binding(self) -> _Binding | None:
        bound: _Binding | None = getattr(self._local, "bound", None)
        return bound

    def _lost(self, conn: Any) -> bool:
        return bool(conn.closed or conn.broken)

    def _run(self, sql: str, args: tuple[Any, ...], fetch: bool) -> Any:
        sql = sql.replace("?", "%s")
        for attempt in (0, 1):
            bound = self._binding()
            if bound is not None:
                conn, pool, release = bound.conn, None, False
            else:
                pool, conn = self._getconn()
                release = True
            try:
                cur = conn.execute(sql, args)
                return cur.fetchall() if fetch and cur.description else cur.rowcount
            except self._errors as exc:
                lost = self._lost(conn)
                if lost:
                    self._trouble_at = time.monotonic()
                if not lost or attempt or (bound is not None and bound.in_tx):
                    raise self._unavailable(exc, lost) from exc
                if bound is not None:
                    self._rebind(bound)
                log.info("session database connection lost; statement retried on a new one")
            finally:
                if release:
                    self._putconn(pool, conn)
        raise AssertionError("unreachable")

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> list[Row]:
        rows = self._run(sql, args, True)
        return rows if isinstance(rows, list) else []

    def changes(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        return int(self._run(sql, args, False))

    # -- binding, locks, transactions ----------------------------------------------------------------
    @contextmanager
    def _bound(self) -> Iterator[_Binding]:
        bound = self._binding()
        if bound is None:
            pool, conn = self._getconn()
            bound = _Binding(pool, conn)
            self._local.bound = bound
        bound.depth += 1
        try:
            yield bound
        finally:
            bound.depth -= 1
            if bound.depth == 0:
                self._local.bound = None
                if bound.conn is not None:
                    self._putconn(bound.pool, bound.conn)

    def _rebind(self, bound: _Binding) -> None:
        """The bound connection died: a new one, with the advisory locks taken again (the server released them)."""
        self._trouble_at = time.monotonic()
        self._putconn(bound.pool, bound.conn)
        bound.conn = None
        bound.pool, bound.conn = self._getconn()
        for key in bound.keys:
            bound.conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))

    @contextmanager
    def lock(self, key: str) -> Iterator[None]:
        # threads of this process queue on a local lock first, so waiting holds no connection
        with self._keys.hold(key), self._bound() as bound:
            try:
                bound.conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            except self._errors as exc:
                if not self._lost(bound.conn):
                    raise self._unavailable(exc) from exc
                self._rebind(bound)
                bound.conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            bound.keys.append(key)
            try:
                yield
            finally:
                bound.keys.remove(key)
                try:
                    if bound.conn is not None:
                        bound.conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
                except self._errors:  # the connection died: the server released the lock with it
                    pass

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._bound() as bound:
            try:
                with bound.conn.transaction():
                    bound.in_tx = True
                    try:
                        yield
                    finally:
                        bound.in_tx = False
            except self._errors as exc:
                raise self._unavailable(exc, self._lost(bound.conn)) from exc

    def atomic(self, fn: Callable[[], T]) -> T:
        """fn's statements in one transaction; run again once (in a new transaction, on a new connection) when the
        connection dies under it. fn must be safe to run twice."""
        for attempt in (0, 1):
            with self._bound() as bound:
                try:
                    with self.transaction():
                        return fn()
                except ConnectionLost:
                    if attempt:
                        raise
                    if bound.depth > 1:  # a lock holds this binding: a new connection, the locks taken again
                        self._rebind(bound)
                    else:  # ours alone: released broken when this block ends; the next attempt takes a new one
                        self._trouble_at = time.monotonic()
            log.info("session database connection lost in a transaction; running it again")
        raise AssertionError("unreachable")

    def describe(self) -> str:
        return f"postgres ({redacted(self.url)})"

    def ping(self, timeout_s: float = 2.0) -> None:
        """SELECT 1 on a pooled connection, now: /readyz asks at each call (Postgres may stop after the start). A
        pool busy with requests while the server answers is fine."""
        try:
            pool, conn = self._getconn(timeout_s, timeout_s)
        except DependencyUnavailableError:
            if self._server_up():
                return
            raise
        try:
            conn.execute("SELECT 1")
        except Exception as exc:  # server down (OperationalError)
            self._trouble_at = time.monotonic()
            raise self._unavailable(exc) from exc
        finally:
            self._putconn(pool, conn)

    def close(self) -> None:
        self.pool.close()

