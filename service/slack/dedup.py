"""Slack retries an event when our 2xx is late or lost (X-Slack-Retry-Num: 1, 2, 3; same event_id).

`SeenEvents.first_time(event_id)` is true once per event id within the TTL, across threads and processes that
share the data dir, or the Postgres database with DATABASE_URL (several workers, several hosts): an
INSERT ... ON CONFLICT DO NOTHING on the event id is the atomic test.
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


def is_duplicate(seen: SeenEvents, body: Mapping[str, Any], headers: Mapping[str, Any]) -> bool:
    """True for an Events API delivery whose event_id was already taken; other payloads are never duplicates."""
    event_id = body.get("event_id") if body.get("type") == "event_callback" else None
    if not isinstance(event_id, str) or not event_id:
        return False
    if seen.first_time(event_id):
        return False
    num, reason = retry_info(headers)
    log.info("dropping duplicate Slack event %s (retry %d, %s)", event_id, num, reason or "no reason given")
    return True
