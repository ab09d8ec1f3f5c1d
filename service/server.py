"""`serve(host, port, workers=N)`: run the API under uvicorn (the `gpu-advisor serve` command calls this).

One worker keeps everything in the data dir (SQLite sessions, embedded Chroma). Several workers are separate
processes, so whatever they share must live outside them: sessions, turns, the per-session writer lock and Slack's
retry dedup in Postgres (DATABASE_URL, required), the vector index in a Chroma server (CHROMA_HOST, recommended).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI

from service.errors import InvalidInputError
from service.settings import Settings, get_settings

log = logging.getLogger(__name__)
KEEP_ALIVE_S = 5  # uvicorn's default, stated: an idle keep-alive connection is closed after this (docs/deploy.md)


def check_workers(workers: int, settings: Settings) -> None:
    """Refuse several workers that would each keep their own sessions; warn when the index is embedded."""
    if workers <= 1:
        return
    if not settings.database_url:
        raise InvalidInputError(
            f"--workers {workers} needs DATABASE_URL: with SQLite each worker process would lock sessions on its "
            "own, and a conversation could interleave across workers.",
            "Set DATABASE_URL=postgresql://user:pass@host:5432/db (see docs/deploy.md), or run one worker.",
        )
    if not settings.chroma_host:
        log.warning("%d workers share the embedded Chroma index under the data dir; set CHROMA_HOST to a Chroma "
                    "server for a multi-worker deployment (docs/deploy.md)", workers)


def app_factory() -> FastAPI:
    """One worker's app, settings from the environment (uvicorn --factory service.server:app_factory)."""
    from service.app import create_app

    return create_app()


def serve(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None, log_level: str = "info",
          workers: int = 1) -> None:
    """Serve until interrupted. The catalog, index and assistant warm up in the background; see /readyz."""
    import uvicorn

    from service.api.header_timeout import HeaderDeadline, protocol_class
    from service.app import create_app

    settings = settings or get_settings()
    check_workers(workers, settings)
    HeaderDeadline.header_timeout_s = settings.header_timeout_s  # workers read GPU_ADVISOR_HEADER_TIMEOUT_S
    limits: dict[str, Any] = {"http": protocol_class(), "timeout_keep_alive": KEEP_ALIVE_S}
    if workers > 1:
        uvicorn.run("service.server:app_factory", factory=True, host=host, port=port, log_level=log_level,
                    workers=workers, **limits)
        return
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level, **limits)
