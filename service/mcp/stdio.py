"""`gpu-advisor mcp`: the MCP server over stdio, for a desktop client that starts it (Claude Desktop, Cursor).

stdout carries the protocol only: the server writes to a duplicate of it, and file descriptor 1 is pointed at
stderr for everything else (a library's print, a progress bar), so nothing can corrupt the stream. The catalog
and the retriever load on first use; a retriever that cannot load fails search_knowledge alone, with the reason.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import TextIOWrapper
from typing import Generic, TypeVar

import anyio

from service.catalog.loader import Catalog, load_catalog
from service.errors import AdvisorError, DependencyUnavailableError
from service.mcp.tools import McpContext, Searcher
from service.settings import Settings

T = TypeVar("T")
log = logging.getLogger(__name__)


class Once(Generic[T]):
    """A value built on first use, once, thread-safely (tools run in worker threads); an unexpected failure
    becomes DependencyUnavailableError naming what failed."""

    def __init__(self, name: str, build: Callable[[], T]) -> None:
        self.name, self.build = name, build
        self.value: T | None = None
        self.lock = threading.Lock()

    def __call__(self) -> T:
        with self.lock:
            if self.value is None:
                try:
                    self.value = self.build()
                except AdvisorError:
                    raise
                except Exception as exc:
                    log.exception("loading the %s failed", self.name)
                    raise DependencyUnavailableError(f"The {self.name} could not be loaded: "
                                                     f"{type(exc).__name__}: {exc}", "See the server's stderr.") from exc
            return self.value


def context_from_settings(settings: Settings) -> McpContext:
    def catalog() -> Catalog:
        return load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, settings.prices_file)

    def retriever() -> Searcher:
        from service.retrieval.config import RetrievalConfig
        from service.retrieval.hybrid import Retriever

        # As `gpu-advisor ask`: open the index `gpu-advisor index` (or the server) built, else answer from BM25.
        return Retriever(RetrievalConfig.from_settings(settings), refresh=False, build=False)

    return McpContext(catalog=Once("catalog", catalog), guide_dir=settings.knowledge_dir / "guide",
                      max_price_age_days=settings.price_max_age_days, retriever=Once("knowledge index", retriever))


@contextmanager
def protocol_stdout() -> Iterator[TextIOWrapper]:
    """A text stream on a duplicate of stdout for the protocol; fd 1 (and sys.stdout) go to stderr meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    stream = TextIOWrapper(os.fdopen(os.dup(1), "wb", buffering=0), encoding="utf-8", line_buffering=False)
    os.dup2(2, 1)
    old_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        yield stream
    finally:
        sys.stdout = old_stdout
        os.dup2(saved, 1)
        os.close(saved)
        stream.close()


def run_stdio(settings: Settings) -> None:
    from service.mcp.server import build_server
    from service.mcp.stdio_transport import guarded_stdio

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server = build_server(context_from_settings(settings))

    async def serve(out: TextIOWrapper) -> None:  # each line passes /mcp's input check first (service/mcp/guard.py)
        async with guarded_stdio(anyio.wrap_file(sys.stdin.buffer), anyio.wrap_file(out)) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    with protocol_stdout() as out:
        anyio.run(serve, out)
