"""What every cloud fetcher shares: per-region results, skipped rows, errors and a bounded backoff.

A fetcher asks one cloud's official API about one region at a time and returns catalog rows
(`service.catalog.schema`); it writes nothing. `service.catalog.sync` merges the rows into the catalog.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

from service.catalog.schema import Billing, Cloud, InstanceRow, PriceRow

T = TypeVar("T")


class FetchError(Exception):
    """Base for fetcher errors. Messages are shown to the user and never contain a secret."""


class CredentialsError(FetchError):
    """Keys missing, rejected, or without read permission: the whole sync stops and nothing is written."""


class RegionFetchError(FetchError):
    """One region could not be read; the other regions still sync and this one is reported."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code  # the cloud's error code, or "Throttled" when retries ran out


class ThrottledError(FetchError):
    """The cloud asked us to slow down; retried with backoff by `call_with_backoff`."""


@dataclass(frozen=True)
class Skipped:
    """A row the API returned that we could not turn into a catalog row, and why."""

    cloud: Cloud
    region: str
    instance_type: str
    reason: str


@dataclass(frozen=True)
class RegionResult:
    cloud: Cloud
    region: str
    instances: tuple[InstanceRow, ...]
    prices: tuple[PriceRow, ...]
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff for throttled calls: base_s, 2·base_s, … capped at cap_s, at most `attempts` tries."""

    attempts: int = 5
    base_s: float = 1.0
    cap_s: float = 16.0
    sleep: Callable[[float], None] = time.sleep

    def delays_s(self) -> list[float]:
        return [min(self.cap_s, self.base_s * 2**i) for i in range(max(self.attempts, 1) - 1)]


def call_with_backoff(
    fn: Callable[[], T], is_throttled: Callable[[Exception], bool], backoff: Backoff, what: str
) -> T:
    """Call fn; when it raises a throttling error, wait and retry. Gives up as a RegionFetchError."""
    delays = backoff.delays_s()
    for attempt in range(len(delays) + 1):
        try:
            return fn()
        except Exception as exc:
            if not is_throttled(exc):
                raise
            if attempt == len(delays):
                raise RegionFetchError(
                    f"{what}: still throttled after {attempt + 1} attempts ({exc}). Retry later.", "Throttled"
                ) from exc
            backoff.sleep(delays[attempt])
    raise AssertionError("unreachable")  # pragma: no cover


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret in text with '***' (API error messages can echo what was sent). Strings shorter
    than 6 characters are no real key and would garble the message."""
    for s in secrets:
        if len(s) >= 6:
            text = text.replace(s, "***")
    return text


@contextmanager
def quiet_logger(name: str, level: int = logging.WARNING) -> Iterator[None]:
    """Hold a library logger at `level` for the duration: SDK debug logs carry request headers and key ids."""
    logger = logging.getLogger(name)
    before = logger.level
    logger.setLevel(max(level, before))
    try:
        yield
    finally:
        logger.setLevel(before)


class RegionFetcher(Protocol):
    """One cloud's fetcher, as the sync drives it."""

    @property
    def cloud(self) -> Cloud: ...

    @property
    def default_regions(self) -> tuple[str, ...]: ...

    @property
    def priced_billings(self) -> tuple[Billing, ...]:
        """Billing modes this fetcher prices; their old rows in a synced region can go stale."""
        ...

    @property
    def price_note(self) -> str:
        """Why prices are not synced ('' when they are)."""
        ...

    def calls_per_region(self) -> int: ...

    def fetch_region(self, region: str, on_call: Callable[[], None]) -> RegionResult: ...
