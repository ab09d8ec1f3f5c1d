"""Liveness and readiness: /healthz answers while the process is up (the port opens before anything loads);
/readyz once the service can answer, with each component's state (`bm25: ready`, `dense: building 120/472`)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.api.deps import ResourcesDep
from service.api.errors import error_body

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: 200 while the process is up."""
    return {"status": "ok"}



@router.get("/readyz", responses={503: {"description": "still loading, or a component failed"}})
def readyz(resources: ResourcesDep) -> Any:
    """Readiness: 200 once the catalog, BM25 search and the assistant are loaded, with `status: ready` when dense
    retrieval is ready too and `status: degraded` (and why) while its index builds or after a vector-store error.
    503 says what is missing."""
    components = resources.readiness()
    uptime_s = round(time.monotonic() - resources.started_at, 2)
    optional = resources.optional()  # without these the service is up, "degraded"
    missing = [name for name, state in components.items() if state != "ready" and name not in optional]
    if not missing:
        warnings: list[str] = []
        if resources.retriever.value is not None:
            warnings = list(getattr(resources.retriever.value, "warnings", []))
        degraded = [f"{name}: {components[name]}" for name in sorted(optional) if components.get(name) != "ready"]
        status = "degraded" if degraded else "ready"
        return {"status": status, "components": components, "degraded": degraded, "uptime_s": uptime_s,
                "warnings": warnings}
    body = error_body(
        "not_ready",
        "Not ready: " + "; ".join(f"{name} {components[name]}" for name in missing) + ".",
        "Wait for the warm-up to finish (GET /readyz again); a failed component names its cause.",
    )
    return JSONResponse({**body, "status": "starting", "components": components, "uptime_s": uptime_s}, 503)
