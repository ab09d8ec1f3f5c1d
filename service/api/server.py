"""`serve(host, port)`: run the API under uvicorn (the `gpu-advisor serve` command calls this)."""

from __future__ import annotations

from service.settings import Settings


def serve(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None, log_level: str = "info") -> None:
    """Serve until interrupted. The catalog, index and assistant warm up in the background; see /readyz."""
    import uvicorn

    from service.api.app import create_app

    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level)
