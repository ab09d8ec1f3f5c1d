"""Keeping the session store bounded, and moving sessions to a new owner.

- `prune(store, ttl_days)`: delete the sessions untouched for `ttl_days` (their turns and ratings with them). The
  server runs it at most once an hour after storing a turn when GPU_ADVISOR_SESSION_TTL_DAYS is set
  (`maybe_prune`); `gpu-advisor sessions prune` runs it now (and compacts a SQLite file).
- The cap on turns per session (GPU_ADVISOR_SESSION_MAX_TURNS) is checked when a turn starts
  (Assistant._begin: SessionFullError, HTTP 409); nothing here deletes turns of a session that is kept.
- `rekey(store, old, new)`: move every session scoped to owner `old` (and its clients, `old/client:...`) to `new`:
  after an API key rotation, or when GPU_ADVISOR_API_KEY_ID is set for the first time (service/api/owner.py says
  how owners are scoped). A session whose id the new owner already uses is left where it is, and counted.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.assistant.sessions import SessionStore

log = logging.getLogger(__name__)
PRUNE_EVERY_S = 3600.0
BATCH = 500
_last_prune = {"at": float("-inf")}
_prune_guard = threading.Lock()


@dataclass(frozen=True)
class Pruned:
    sessions: int
    turns: int
    cutoff: str  # sessions last updated before this (ISO, UTC) were deleted


@dataclass(frozen=True)
class Rekeyed:
    sessions: int
    turns: int
    skipped: tuple[str, ...]  # session ids the new owner already had


def cutoff_of(ttl_days: int, now: datetime | None = None) -> str:
    when = (now or datetime.now(UTC)) - timedelta(days=ttl_days)
    return when.isoformat(timespec="microseconds")


def prune(store: SessionStore, ttl_days: int, now: datetime | None = None) -> Pruned:
    """Delete the sessions last updated more than `ttl_days` days ago, a batch at a time (each in one
    transaction). ttl_days 0 deletes nothing."""
    cutoff = cutoff_of(ttl_days, now)
    if ttl_days <= 0:
        return Pruned(0, 0, cutoff)
    db, sessions, turns = store.db, 0, 0
    while rows := db.execute("SELECT owner, id, turns FROM advisor_sessions WHERE updated_at < ? LIMIT ?",
                             (cutoff, BATCH)):
        batch = [(str(owner), str(sid)) for owner, sid, _ in rows]
        db.atomic(partial(_delete, store, batch))
        sessions += len(rows)
        turns += sum(int(r[2] or 0) for r in rows)
    if sessions:
        log.info("retention: deleted %d sessions (%d turns) untouched since %s", sessions, turns, cutoff)
    return Pruned(sessions, turns, cutoff)


def _delete(store: SessionStore, batch: list[tuple[str, str]]) -> None:
    for owner, sid in batch:
        store.db.execute("DELETE FROM advisor_turns WHERE owner=? AND session_id=?", (owner, sid))
        store.db.execute("DELETE FROM advisor_feedback WHERE owner=? AND session_id=?", (owner, sid))
        store.db.execute("DELETE FROM advisor_sessions WHERE owner=? AND id=?", (owner, sid))


def maybe_prune(store: SessionStore, ttl_days: int) -> None:
    """Prune in the background at most once per PRUNE_EVERY_S in this process (called after a turn is stored)."""
    if ttl_days <= 0 or time.monotonic() - _last_prune["at"] < PRUNE_EVERY_S:
        return
    with _prune_guard:
        if time.monotonic() - _last_prune["at"] < PRUNE_EVERY_S:
            return
        _last_prune["at"] = time.monotonic()

    def run() -> None:
        try:
            prune(store, ttl_days)
        except Exception as exc:  # the store is down or busy: the next hour tries again
            log.warning("retention: prune failed: %s", exc)

    threading.Thread(target=run, name="session-prune", daemon=True).start()


def _move(store: SessionStore, owner: str, sid: str, target: str) -> None:
    for table, column in (("advisor_turns", "session_id"), ("advisor_feedback", "session_id"),
                          ("advisor_sessions", "id")):
        store.db.execute(f"UPDATE {table} SET owner=? WHERE owner=? AND {column}=?", (target, owner, sid))


def rekey(store: SessionStore, old: str, new: str, dry_run: bool = False) -> Rekeyed:
    """Move the sessions of owner `old` and of its clients (`old/...`) to `new` (and `new/...`), each session with
    its turns and ratings in one transaction. A session whose id the target owner has already is skipped."""
    if not old or not new or old == new:
        return Rekeyed(0, 0, ())
    db = store.db
    rows = db.execute("SELECT owner, id, turns FROM advisor_sessions WHERE owner=? OR substr(owner, 1, ?)=? "
                      "ORDER BY owner, id", (old, len(old) + 1, old + "/"))
    moved = turns = 0
    skipped: list[str] = []
    for owner, sid, n in rows:
        target = new + str(owner)[len(old):]
        clash = db.execute("SELECT 1 FROM advisor_sessions WHERE owner=? AND id=?", (target, sid)) or db.execute(
            "SELECT 1 FROM advisor_turns a JOIN advisor_turns b ON b.owner=? AND b.request_id=a.request_id "
            "WHERE a.owner=? AND a.session_id=? AND a.request_id IS NOT NULL LIMIT 1", (target, owner, sid))
        if clash:
            skipped.append(str(sid))
            continue
        if not dry_run:
            db.atomic(partial(_move, store, str(owner), str(sid), target))
        moved += 1
        turns += int(n or 0)
    if moved and not dry_run:
        log.info("rekey: moved %d sessions (%d turns) to a new owner; %d skipped", moved, turns, len(skipped))
    return Rekeyed(moved, turns, tuple(skipped))

