"""Liveness and readiness: /healthz answers while the process is up; /readyz once everything is loaded."""

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
    """Readiness: 200 once the catalog, the retrieval index and the assistant are loaded; 503 says what is missing."""
    components = resources.readiness()
    uptime_s = round(time.monotonic() - resources.started_at, 2)
    missing = [name for name, state in components.items() if state != "ready"]
    if not missing:
        warnings: list[str] = []
        if resources.retriever.value is not None:
            warnings = list(getattr(resources.retriever.value, "warnings", []))
        return {"status": "ready", "components": components, "uptime_s": uptime_s, "warnings": warnings}
    body = error_body(
        "not_ready",
        "Not ready: " + "; ".join(f"{name} {components[name]}" for name in missing) + ".",
        "Wait for the warm-up to finish (GET /readyz again); a failed component names its cause.",
    )
    return JSONResponse({**body, "status": "starting", "components": components, "uptime_s": uptime_s}, 503)
