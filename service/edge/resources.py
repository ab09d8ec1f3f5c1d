"""What the API serves from: settings, the catalog, the retriever and the assistant, each built once per app.

Each resource loads on first use (under its own lock) or in the warm-up thread that the lifespan starts, whichever
comes first. A failure is remembered for a short while and reported by /readyz, then retried.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from service.assistant.types import AssistantProtocol
from service.catalog.loader import Catalog
from service.errors import AdvisorError, DependencyUnavailableError
from service.settings import Settings

if TYPE_CHECKING:
    from service.edge.readiness import Component
    from service.retrieval.types import Passage

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_AFTER_S = 30.0  # the first retry after a failure; doubles per consecutive failure up to RETRY_MAX_S
RETRY_MAX_S = 300.0


class RetrieverLike(Protocol):
    """What the search route needs from service.retrieval.hybrid.Retriever."""

    @property
    def warnings(self) -> list[str]: ...

    def search(
        self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None, topic: str | None = None
    ) -> list[Passage]: ...


@dataclass
class Lazy(Generic[T]):
    """One resource: built once by `build`, thread-safe; a failure is kept and re-raised for a back-off period
    (RETRY_AFTER_S, doubling per consecutive failure up to RETRY_MAX_S), then the next use retries."""

    name: str
    build: Callable[[], T]
    value: T | None = None
    error: AdvisorError | None = None
    failed_at: float = 0.0
    failures: int = 0
    loading: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self) -> T:
        if self.value is not None:
            return self.value
        with self._lock:
            if self.value is not None:
                return self.value
            if self.error is not None and time.monotonic() - self.failed_at < self.backoff():
                raise self.error
            self.loading = True
            try:
                self.value = self.build()
                self.error, self.failures = None, 0
            except AdvisorError as exc:
                self._fail(exc)
                raise
            except Exception as exc:  # an unexpected failure in a dependency: degrade, say why
                log.exception("loading %s failed", self.name)
                err = DependencyUnavailableError(
                    f"The {self.name} could not be loaded: {type(exc).__name__}: {exc}",
                    "See the server log; /readyz shows what is missing.",
                )
                self._fail(err)
                raise err from exc
            finally:
                self.loading = False
            return self.value

    def _fail(self, exc: AdvisorError) -> None:
        self.error, self.failed_at, self.failures = exc, time.monotonic(), self.failures + 1

    def backoff(self) -> float:
        return float(min(RETRY_AFTER_S * 2.0 ** max(self.failures - 1, 0), RETRY_MAX_S))

    def retry_due(self) -> bool:
        return self.error is not None and not self.loading and time.monotonic() - self.failed_at >= self.backoff()

    def state(self) -> str:
        if self.value is not None:
            return "ready"
        if self.error is not None:
            return f"failed: {self.error.message}"
        return "loading" if self.loading else "not loaded"


class Resources:
    """The app's shared state (app.state.resources). Injected objects count as loaded."""

    def __init__(
        self,
        settings: Settings,
        *,
        assistant: AssistantProtocol | None = None,
        catalog: Catalog | None = None,
        retriever: RetrieverLike | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = Lazy("catalog", self._load_catalog, value=catalog)
        self.retriever = Lazy[RetrieverLike]("bm25", self._load_retriever, value=retriever)
        self.assistant = Lazy[AssistantProtocol]("assistant", self._load_assistant, value=assistant)
        # optional components an adapter adds (the Slack bot's delivery): name -> its state ("ready" or why not),
        # called with detail=True for a caller with the API key, False for the public view (service.edge.readiness)
        self.probes: dict[str, Callable[[bool], str]] = {}
        self.started_at = time.monotonic()

    def _load_catalog(self) -> Catalog:
        from service.catalog.loader import load_catalog

        s = self.settings
        return load_catalog(s.knowledge_dir, s.catalog_overlay_dir, s.prices_file)

    def _load_retriever(self) -> RetrieverLike:
        try:
            from service.retrieval.config import RetrievalConfig
            from service.retrieval.hybrid import Retriever
        except ImportError as exc:
            raise DependencyUnavailableError(
                f"Retrieval is not installed ({exc.name} is missing).",
                "Install the service extra: pip install -e '.[service]'.",
            ) from exc
        from service.retrieval.progress import ConsoleProgress

        # BM25 answers at once; the vector index opens or builds in a background thread (progress on the console)
        # and hybrid search uses it from the moment /readyz shows `dense: ready`.
        progress = ConsoleProgress("Building the knowledge index (dense retrieval)")
        return Retriever(RetrievalConfig.from_settings(self.settings), background=True, progress=progress)

    def _load_assistant(self) -> AssistantProtocol:
        """The real assistant, sharing this app's catalog and retriever (one copy of each per process)."""
        try:
            from service.assistant import service as assistant_service
        except ImportError as exc:
            raise DependencyUnavailableError(
                f"The assistant is not available ({exc.name} is missing).",
                "Install the service extra: pip install -e '.[service]'.",
            ) from exc
        shared = getattr(assistant_service, "Assistant", None)
        if shared is not None:
            built: AssistantProtocol = shared(
                self.settings, catalog=self.catalog.get(), retriever_factory=self.retriever.get
            )
            return built
        fallback: AssistantProtocol = assistant_service.build_assistant(self.settings)
        return fallback

    def all(self) -> tuple[Lazy[Any], ...]:
        """In warm-up order: the retriever early, so its index build starts while the assistant loads."""
        return (self.catalog, self.retriever, self.assistant)

    def warm_up(self, stop: threading.Event | None = None) -> None:
        """Load everything (the lifespan runs this in a background thread); failures stay visible in /readyz.
        `stop` (set at shutdown) keeps it from starting another load after the app has stopped."""
        for lazy in self.all():
            if stop is not None and stop.is_set():
                return
            try:
                lazy.get()
            except AdvisorError as exc:
                log.warning("warm-up: %s not loaded: %s", lazy.name, exc)
        log.info("warm-up done in %.1f s", time.monotonic() - self.started_at)

    def readiness(self) -> dict[str, Component]:
        """Each component's state, checked now (service.edge.readiness); a failed one whose back-off has passed is
        retried in the background (a database that comes back makes the service ready without a restart)."""
        from service.edge.readiness import components

        for lazy in self.all():
            if lazy.retry_due():
                threading.Thread(target=_quietly, args=(lazy,), name=f"retry-{lazy.name}", daemon=True).start()
        return components(self)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Stop an index build between batches (the unfinished generation is discarded) and release the store."""
        close = getattr(self.retriever.value, "close", None)
        if callable(close):
            close(timeout_s)


def _quietly(lazy: Lazy[Any]) -> None:
    try:
        lazy.get()
    except AdvisorError as exc:
        log.warning("retrying %s: %s", lazy.name, exc.message)
