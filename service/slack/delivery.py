"""Whether the bot's calls to Slack's Web API get through, and what to do when they do not.

    delivery = SlackDelivery()
    client = WebClient(token=..., retry_handlers=delivery.retry_handlers(), logger=quiet_sdk_logger())
    delivery.state()       # "ready", or "failing: <cause> (3 calls since 09:12:04 UTC); fix: allow egress ..."

On an egress-restricted network slack.com cannot be reached: Slack's requests still arrive (they are inbound) and
are acknowledged at once, but every answer the bot tries to post fails. The retry handler sees every call the Web
API client makes (it is consulted on each response and each error): a connection error is retried with a doubling
back-off, and when the last try fails the call counts as failed; any answer from Slack (even an error status) means
delivery works. The first failure of an outage is logged once, with its cause and the fix; /readyz shows the state
(`slack: failing: ...`) until a call gets through again, which is logged too.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from datetime import UTC, datetime
from http.client import RemoteDisconnected
from typing import Any
from urllib.error import HTTPError, URLError

from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.handler import RetryHandler

log = logging.getLogger(__name__)
FIX = "allow egress to slack.com (HTTPS, port 443), or use Socket Mode through a proxy (docs/slack.md)"
RETRIES = 3  # after the first try: 1 + 3 tries per call, 1 s, 2 s, 4 s apart
BACKOFF_S = 1.0
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (URLError, OSError, RemoteDisconnected, TimeoutError,
                                                      socket.timeout)
# slack_sdk logs each failed try at ERROR and each retry at INFO; SlackDelivery reports an outage once instead
SDK_PER_TRY = ("Failed to send a request to Slack API server", "Going to retry the same request",
               "A retry handler found")


def is_connection_error(exc: BaseException) -> bool:
    """A failure to reach Slack at all (refused, unreachable, DNS, TLS, timeout), not an answer from it."""
    return isinstance(exc, CONNECTION_ERRORS) and not isinstance(exc, HTTPError)


def cause_of(exc: BaseException) -> str:
    reason = exc.reason if isinstance(exc, URLError) and not isinstance(exc, HTTPError) else exc
    text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
    return f"{type(reason).__name__}: {text}"[:200]


class SlackDelivery:
    """The bot's delivery health, shared by every Web API client of one Bolt app (thread-safe)."""

    def __init__(self, retries: int = RETRIES, backoff_s: float = BACKOFF_S) -> None:
        self.retries, self.backoff_s = retries, backoff_s
        self.attempts = 0  # tries that could not reach Slack
        self.failures = 0  # calls that failed after their last try, in this outage
        self.cause = ""
        self.since = 0.0
        self._last: BaseException | None = None
        self._lock = threading.Lock()

    def retry_handlers(self) -> list[RetryHandler]:
        """For WebClient(retry_handlers=...): ours first (it sees every call), then Slack's 429 handling."""
        return [DeliveryRetry(self), RateLimitErrorRetryHandler(max_retry_count=2)]

    def failed(self, exc: BaseException) -> None:
        """A call failed after its last try (or a listener with it: counted once). The first failure of an
        outage is logged, with its cause and fix."""
        with self._lock:
            if exc is self._last:
                return
            self._last = exc
            first = self.failures == 0
            self.failures += 1
            self.cause = cause_of(exc)
            if first:
                self.since = time.time()
        if first:
            log.warning("Slack delivery is failing: the Web API (slack.com) cannot be reached (%s); requests are "
                        "still acknowledged, answers are not posted. Fix: %s. Logged once until it recovers; "
                        "/readyz shows the state.", self.cause, FIX)

    def tried(self) -> None:
        with self._lock:
            self.attempts += 1

    def succeeded(self) -> None:
        with self._lock:
            recovered, self.failures, self.cause = self.failures > 0, 0, ""
        if recovered:
            log.info("Slack delivery recovered: the Web API answers again")

    def state(self, detail: bool = True) -> str:
        """/readyz's `slack`: "ready" or "failing: ...; fix: ..." (the cause only in the detailed view)."""
        with self._lock:
            if not self.failures:
                return "ready"
            since = datetime.fromtimestamp(self.since, UTC).strftime("%H:%M:%S UTC")
            calls = "call" if self.failures == 1 else "calls"
            cause = f"{self.cause} " if detail else "slack.com cannot be reached "
            return f"failing: {cause}({self.failures} {calls} since {since}); fix: {FIX}"


class DeliveryRetry(RetryHandler):
    """Retries a call that could not reach Slack, with a doubling back-off, and reports each outcome."""

    def __init__(self, delivery: SlackDelivery) -> None:
        super().__init__(delivery.retries, BackoffRetryIntervalCalculator(backoff_factor=delivery.backoff_s))
        self.delivery = delivery

    def can_retry(self, *, state: Any, request: Any, response: Any = None, error: Exception | None = None) -> bool:
        if response is not None or error is None:  # Slack answered (any status): it is reachable
            self.delivery.succeeded()
            return False
        if not is_connection_error(error):
            return False
        self.delivery.tried()
        if state.current_attempt >= self.max_retry_count:
            self.delivery.failed(error)
            return False
        return True

    def _can_retry(self, **_: Any) -> bool:  # pragma: no cover - can_retry decides
        return False

    def __deepcopy__(self, memo: dict[int, Any]) -> DeliveryRetry:
        return self  # Bolt deep-copies each request (client included) for its lazy listeners: keep one state


class _DropPerTry(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(SDK_PER_TRY)


def quiet_sdk_logger() -> logging.Logger:
    """The Web API client's logger, without its per-try 'Failed to send' errors (Bolt copies it per request)."""
    logger = logging.getLogger("service.slack.webapi")
    if not any(isinstance(f, _DropPerTry) for f in logger.filters):
        logger.addFilter(_DropPerTry())
    return logger
