"""Liveness and readiness: /healthz answers while the process is up (the port opens before anything loads);
/readyz once the service can answer, with each component's state (`bm25: ready`, `dense: building 120/472`)."""

from __future__ import annotations

import hmac
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from service.api.deps import ResourcesDep
from service.edge.errors import error_body

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: 200 while the process is up."""
    return {"status": "ok"}



def _authenticated(resources: ResourcesDep, request: Request) -> bool:
    """The caller sent the API key (optional here: a probe without it gets the public view; not a declared
    security scheme, so the route stays open in the schema)."""
    key = resources.settings.api_key
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return bool(key) and scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.encode())


@router.get("/readyz", responses={503: {"description": "still loading, or a component failed"}})
def readyz(resources: ResourcesDep, request: Request) -> Any:
    """Readiness, checked at each call: 200 once the catalog, BM25 search, the assistant, the session database
    and the data disk are fine, with `status: ready` when dense retrieval (and Slack delivery, when mounted) are
    ready too and `status: degraded` (and why) otherwise. 503 says what is missing. Without the API key the
    states name what failed and the fix, without paths or library errors; with it, the detail."""
    checked = resources.readiness()
    detail = _authenticated(resources, request)
    components = {name: c.detail if detail else c.public for name, c in checked.items()}
    uptime_s = round(time.monotonic() - resources.started_at, 2)
    missing = [name for name, c in checked.items() if not c.ready and not c.optional]
    if not missing:
        warnings: list[str] = []
        if detail and resources.retriever.value is not None:
            warnings = list(getattr(resources.retriever.value, "warnings", []))
        elif not checked["dense"].ready:
            warnings = [f"Dense retrieval unavailable, answering from BM25 only: {components['dense']}"]
        degraded = [f"{name}: {components[name]}" for name, c in checked.items() if c.optional and not c.ready]
        status = "degraded" if degraded else "ready"
        return {"status": status, "components": components, "degraded": degraded, "uptime_s": uptime_s,
                "warnings": warnings}
    body = error_body(
        "not_ready",
        "Not ready: " + "; ".join(f"{name} {components[name]}" for name in missing) + ".",
        "Wait for the warm-up to finish (GET /readyz again); a failed component names its cause.",
    )
    return JSONResponse({**body, "status": "starting", "components": components, "uptime_s": uptime_s}, 503)
