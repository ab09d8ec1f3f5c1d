"""What /readyz reports, component by component, checked at each call (nothing remembered from an earlier one):

- catalog, bm25, assistant: loaded, loading, or failed (and why);
- dense: the vector index's real state (`ready`, `building 120/472`, `rebuilding 166/545`, `degraded: ...`);
- database: the session store answers `SELECT 1` now (Postgres may go down after the start);
- disk: free space on the data directory's disk, and whether the last turn failed to store for lack of it;
- what adapters add (Slack delivery).

Two views: `detail` (the caller sent the API key) has the reasons as logged; the public view (no key, or no key
configured) has no absolute path and no library error text, only what failed and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from service.settings import Settings
from service.storage import MIB, disk_space


class _Lazy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def value(self) -> Any: ...

    def state(self) -> str: ...


class Resources(Protocol):
    """What the report reads of service/edge/resources.py:Resources (a protocol: the report never imports it)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def retriever(self) -> _Lazy: ...

    @property
    def assistant(self) -> _Lazy: ...

    @property
    def probes(self) -> Mapping[str, Callable[[bool], str]]: ...

    def all(self) -> Iterable[_Lazy]: ...

PING_TIMEOUT_S = 2.0
SEE_LOG = "the server log says why (or /readyz with the API key)"
PROGRESS = re.compile(r"(?:re)?building \d+/\d+")


@dataclass(frozen=True)
class Component:
    detail: str
    public: str
    optional: bool = False  # the service answers without it: "degraded", not 503

    @property
    def ready(self) -> bool:
        return self.detail == "ready"


def public_label(state: str) -> str:
    """A state without its reason: `failed`, `degraded; rebuilding 3/472`; progress and plain states kept."""
    if ":" not in state:
        return state
    head, progress = state.split(":", 1)[0], PROGRESS.search(state)
    if head == "failed":
        return f"failed: {SEE_LOG}"
    return f"{head}; {progress.group(0)}" if progress else head


def _lazy(resources: Resources) -> dict[str, Component]:
    return {lazy.name: Component(lazy.state(), public_label(lazy.state())) for lazy in resources.all()}


def _dense(resources: Resources) -> Component:
    dense = getattr(resources.retriever.value, "dense", None)
    if dense is not None:
        label = str(dense.status.label())
    else:
        label = "ready" if resources.retriever.value is not None else "not loaded"
    return Component(label, public_label(label), optional=True)


def _ping_url(url: str) -> None:
    import psycopg

    with psycopg.connect(url, connect_timeout=int(PING_TIMEOUT_S)) as conn:
        conn.execute("SELECT 1")


def _database(resources: Resources) -> Component | None:
    """The session store, asked now. None when there is nothing to ask yet (SQLite before the assistant loads, or
    an injected assistant without a database)."""
    from service.assistant.db import redacted

    db = getattr(resources.assistant.value, "db", None)
    url = resources.settings.database_url
    if db is None and not url:
        return None
    try:
        if db is not None:
            db.ping(PING_TIMEOUT_S)
        else:
            _ping_url(url)
    except Exception as exc:  # noqa: BLE001 - any failure to answer is "cannot be reached"
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        where = db.describe() if db is not None else f"postgres ({redacted(url)})"
        return Component(f"failed: {where}: {str(message)[:300]}",
                         "failed: the session database cannot be reached; start it or fix DATABASE_URL")
    return Component("ready", "ready")


def _disk(resources: Resources) -> Component:
    settings = resources.settings
    space = disk_space(settings.data_dir, settings.min_free_mb * MIB)
    # with Postgres the data dir holds the catalog overlay and the embedded index, not the turns
    optional = bool(settings.database_url)
    failed: Any = getattr(resources.assistant.value, "storage_error", None)
    if failed and space.low:
        return Component(space.detail(), space.public(), optional)
    if failed:  # space now, but the last turn could not be stored (a quota, inodes): until a turn is stored
        when, message = failed
        return Component(f"full: the last turn could not be stored at {when}: {message}",
                         "full: the last turn could not be stored for lack of space; free space on the data "
                         "directory's disk", optional)
    return Component(space.detail(), space.public(), optional)


def components(resources: Resources) -> dict[str, Component]:
    """Every component's state now, in the order /readyz lists them."""
    out = _lazy(resources)
    out["dense"] = _dense(resources)
    database = _database(resources)
    if database is not None:
        out["database"] = database
    out["disk"] = _disk(resources)
    for name, probe in resources.probes.items():
        out[name] = Component(probe(True), probe(False), optional=True)
    return out
