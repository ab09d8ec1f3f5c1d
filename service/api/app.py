"""The API's app: routers, one JSON error shape, and a lifespan that warms the resources up in the background.
The whole server (the API, /mcp, the Slack endpoints, the page) is composed by service/app.py `create_app`."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from service.api.json_body import JsonBodyCheck
from service.api.limits import BodyLimits, limit_for
from service.api.protocol import HeadAsGet, allowed_methods
from service.edge.errors import (
    BODY_UNREADABLE,
    JSON_FIX,
    error_body,
    http_error_parts,
    pydantic_message,
    status_for,
    validation_message,
)
from service.edge.resources import Resources
from service.errors import AdvisorError
from service.settings import Settings

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

DESCRIPTION = (
    "GPU cloud configurations (Tencent Cloud, JD Cloud) for ML training, verified by a deterministic engine. "
    "Every /v1 route needs `Authorization: Bearer <key>` when the server sets GPU_ADVISOR_API_KEY. "
    'Errors share one shape: `{"error": {"code", "message", "fix"}}`. '
    "The same engine is an MCP server (Streamable HTTP) at /mcp, behind the same key."
)


WARM_UP_JOIN_S = 300.0
ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}


def _lifespan(
    resources: Resources, *also: Callable[[], AbstractAsyncContextManager[None]]
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Warm-up in a background thread; `also` (the MCP session manager) runs for the app's lifetime."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        thread = threading.Thread(target=resources.warm_up, args=(stop,), name="gpu-advisor-warm-up", daemon=True)
        thread.start()
        async with AsyncExitStack() as stack:
            for context in also:
                await stack.enter_async_context(context())
            yield
        # Shutdown: start no further loads, and let a load in progress (an index build runs native torch/Chroma
        # threads) finish, so the process never exits under it (that aborts with std::terminate).
        stop.set()
        thread.join(timeout=WARM_UP_JOIN_S)
        if thread.is_alive():
            log.warning("warm-up still running at shutdown after %.0f s", WARM_UP_JOIN_S)
        resources.shutdown()  # an index build stops between batches; its unfinished generation is discarded

    return lifespan


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AdvisorError)
    async def advisor_error(_request: Request, exc: AdvisorError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.code == "unauthorized" else None
        return JSONResponse(error_body(exc.code, exc.message, exc.fix), status_code=status_for(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        bad_json = next((e for e in exc.errors() if e.get("type") == "json_invalid"), None)
        if bad_json is not None:  # a body cut short or malformed: the same answer as one json.loads cannot read
            where, why = bad_json.get("loc", ("", ""))[-1], (bad_json.get("ctx") or {}).get("error", "decode error")
            return JSONResponse(error_body("invalid_input", f"The body is not valid JSON at character {where}: {why}.",
                                           JSON_FIX), 422)
        message = validation_message(list(exc.errors()))
        return JSONResponse(error_body("invalid_input", message, "Fix the named field and send again."), 422)

    @app.exception_handler(ValidationError)
    async def model_invalid(_request: Request, exc: ValidationError) -> JSONResponse:
        return JSONResponse(error_body("invalid_input", pydantic_message(exc), "Fix the named field and send again."), 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code, message, fix = http_error_parts(exc.status_code, str(exc.detail), request.method, request.url.path)
        fix = getattr(exc, "fix", "") or fix  # an exception that knows its fix (json_body.BodyValueError) says it
        status = 422 if exc.status_code == 400 and str(exc.detail) == BODY_UNREADABLE else exc.status_code
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(request))
        return JSONResponse(error_body(code, message, fix), status, headers=headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        from service.storage import storage_full

        full = storage_full(exc, request.app.state.resources.settings.data_dir)
        if full is not None:  # any write on a full disk (a rename, a delete): say so, not "internal error"
            log.error("storage full on %s %s: %s", request.method, request.url.path, full.message)
            return JSONResponse(error_body(full.code, full.message, full.fix), status_for(full))
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return JSONResponse(
            error_body("internal_error", "Internal server error.", "Try again; if it persists, see the server log."),
            500,
        )


def _openapi_with_settings(app: FastAPI, settings: Settings) -> Callable[[], dict[str, Any]]:
    """The schema FastAPI builds, plus the limits that come from the settings (the message length), and our
    error body on every error status a route documents by description only."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            message = schema.get("components", {}).get("schemas", {}).get("ChatRequest", {}).get("properties", {})
            if "message" in message:
                message["message"]["maxLength"] = settings.max_message_chars
            for path, operations in schema.get("paths", {}).items():
                for operation in operations.values():
                    for status, response in operation.get("responses", {}).items():
                        if status[:1] in "45" and "content" not in response:
                            response["content"] = {"application/json": {"schema": ERROR_REF}}
                        if status == "413":
                            response["description"] = f"the body is over this route's {limit_for(path)} bytes" + (
                                f", or the message over {settings.max_message_chars} characters"
                                if path.startswith(("/v1/chat", "/v1/responses")) else "")
        return app.openapi_schema or build()

    return openapi


def build_api(resources: Resources,
              *also: Callable[[], AbstractAsyncContextManager[None]]) -> FastAPI:
    """The chat API over `resources`: its routers, one error shape, the body limits and the offline docs. `also`
    run for the app's lifetime (the MCP session manager). The whole server (with /mcp, Slack and the page) is
    composed by service/app.py."""
    from service.api.deps import require_api_key
    from service.api.docs_pages import mount_docs
    from service.api.routes import catalog as catalog_routes
    from service.api.routes import (
        chat,
        documents,
        health,
        knowledge,
        models_catalog,
        openai_compat,
        plan,
        responses,
        search,
        serving,
        sessions,
    )
    from service.api.schemas import error_responses

    app = FastAPI(
        title="GPU Advisor",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=_lifespan(resources, *also),
        docs_url=None,  # served by mount_docs from a package, not a CDN
        redoc_url=None,
    )
    app.state.resources = resources
    app.openapi = _openapi_with_settings(app, resources.settings)  # type: ignore[method-assign]
    _install_error_handlers(app)
    app.add_middleware(JsonBodyCheck)  # inside BodyLimits: size and deadline first, then NaN / 1e400 / surrogates
    app.add_middleware(BodyLimits, timeout_s=resources.settings.body_timeout_s)
    app.add_middleware(HeadAsGet)
    mount_docs(app)
    app.include_router(health.router)
    app.include_router(knowledge.router, responses=error_responses(404, 408, 422, 500, by_ref=True))
    auth = [Depends(require_api_key)]
    for module in (chat, openai_compat, responses, plan, serving, catalog_routes, models_catalog, search, documents,
                   sessions):
        app.include_router(module.router, prefix="/v1", dependencies=auth, responses=error_responses())
    return app


def finish(app: FastAPI) -> FastAPI:
    """The middleware that must wrap everything mounted (the page's owner cookie)."""
    from service.api.owner import OwnerCookieMiddleware

    app.add_middleware(OwnerCookieMiddleware)  # the page's first visit gets its owner cookie
    return app
