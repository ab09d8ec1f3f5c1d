"""The web chat page: static HTML, CSS and ES modules (no build step), served by the API app.

    mount_web(app)    # GET / → index.html; /static/* → service/web/static (vendored marked and DOMPurify included)

The page calls the same /v1 routes as any other client. Its Content-Security-Policy allows scripts from this
origin only, so even a sanitiser miss could not run a script carried by a message, an answer or a knowledge page.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent / "static"
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def mount_web(app: FastAPI) -> None:
    """Serve the page at / and its assets at /static (no authentication: the page sends the API key itself)."""
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="web-static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)
