"""Slack retries an event when our 2xx is late or lost (X-Slack-Retry-Num: 1, 2, 3; same event_id); a signed slash
command or button click replayed within the five minutes its signature is valid is the same request again (same
trigger_id). Each is answered once.

`SeenEvents.first_time(key)` is true once per key within the TTL, across threads and processes that share the data
dir, or the Postgres database with DATABASE_URL (several workers, several hosts): an INSERT ... ON CONFLICT DO
NOTHING on the key is the atomic test. Keys: the event id; `command:<trigger_id>` for a slash command;
`action:<trigger_id>` for an interactive payload (Slack makes a new trigger_id for every invocation and click).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from service.slack.threads import SlackDb

log = logging.getLogger(__name__)
DEFAULT_TTL_S = 3600.0  # Slack retries within minutes; an hour is ample


class SeenEvents:
    def __init__(self, db: SlackDb, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.time) -> None:
        self.db, self.ttl_s, self.clock = db, ttl_s, clock

    def first_time(self, event_id: str) -> bool:
        now = self.clock()
        self.db.changes("DELETE FROM slack_events WHERE seen_at < ?", (now - self.ttl_s,))
        return self.db.changes("INSERT INTO slack_events VALUES (?, ?) ON CONFLICT DO NOTHING", (event_id, now)) == 1


def retry_info(headers: Mapping[str, Any]) -> tuple[int, str]:
    """(retry number, reason) from the request headers; (0, "") for a first delivery or Socket Mode."""

    def first(name: str) -> str:
        value = headers.get(name)
        if isinstance(value, list | tuple):
            value = value[0] if value else ""
        return str(value or "")

    num = first("x-slack-retry-num")
    return (int(num) if num.isdigit() else 0), first("x-slack-retry-reason")


def dedup_key(body: Mapping[str, Any]) -> str | None:
    """What makes this request the same as one seen: the event id, or the command's or click's trigger id."""
    if body.get("type") == "event_callback":
        key = body.get("event_id")
        return key if isinstance(key, str) and key else None
    trigger = body.get("trigger_id")
    if not isinstance(trigger, str) or not trigger:
        return None
    return f"command:{trigger}" if body.get("command") else f"action:{trigger}" if body.get("type") else None


def is_duplicate(seen: SeenEvents, body: Mapping[str, Any], headers: Mapping[str, Any]) -> bool:
    """True for an event, slash command or click already taken (dedup_key); other payloads are never duplicates."""
    key = dedup_key(body)
    if key is None or seen.first_time(key):
        return False
    num, reason = retry_info(headers)
    log.info("dropping duplicate Slack request %s (retry %d, %s)", key, num, reason or "no reason given")
    return True
