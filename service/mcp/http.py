"""The MCP server over Streamable HTTP at /mcp on the API app, behind the API's key.

    endpoint = McpEndpoint(resources)      # an ASGI app; the lifespan runs `endpoint.running()`
    app.add_route("/mcp", endpoint)

Stateless with JSON responses: every POST stands alone (no session to pin to one worker), so the route works
behind any number of uvicorn workers or replicas; GET (a server-to-client stream) and DELETE (end a session)
have nothing to serve and answer 405. The tools share the app's catalog and retriever (each loaded
once per process); a retriever that cannot load fails search_knowledge alone, with the reason. When
GPU_ADVISOR_API_KEY is set, a request without `Authorization: Bearer <key>` gets the API's 401 error body. Every
body is checked before the SDK reads it, whatever its Content-Type (service.mcp.guard): not UTF-8, nested too deep,
a number that is not finite, a lone surrogate, a malformed id or an unknown method get JSON-RPC's own errors, never
a 500; a Content-Type the SDK does not take then gets its 415.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.types import Receive, Scope, Send

from service.edge.errors import error_body
from service.errors import AdvisorError
from service.mcp.guard import check_body

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from service.edge.resources import Resources
    from service.mcp.tools import McpContext

log = logging.getLogger(__name__)
PATH = "/mcp"


def context_from_resources(resources: Resources) -> McpContext:
    from service.mcp.tools import McpContext

    s = resources.settings
    return McpContext(catalog=resources.catalog.get, guide_dir=s.knowledge_dir / "guide",
                      max_price_age_days=s.price_max_age_days, retriever=resources.retriever.get)


def _credentials(scope: Scope) -> Any:
    from fastapi.security import HTTPAuthorizationCredentials

    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return HTTPAuthorizationCredentials(scheme=scheme, credentials=token.strip())
    return None


async def _send_json(send: Send, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    """The whole body (the API's BodyLimits caps its size and time); the SDK gets it back through _replay."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # then the disconnect, when it comes

    return replay


async def _send_error(send: Send, status: int, code: str, message: str, fix: str,
                      headers: dict[str, str] | None = None) -> None:
    await _send_json(send, status, error_body(code, message, fix), headers)


class McpEndpoint:
    """The ASGI app at /mcp: the API key check, then the SDK's Streamable HTTP session manager (one per lifespan:
    the SDK's manager runs once, and a test client may start the app's lifespan more than once)."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from service.mcp.server import build_server
        except ImportError as exc:  # the service extra without mcp: the API runs, /mcp says why
            log.warning("MCP not available at %s: %s is not installed", PATH, exc.name)
            yield
            return
        manager = StreamableHTTPSessionManager(build_server(context_from_resources(self.resources)),
                                               stateless=True, json_response=True)
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from service.edge.auth import check_api_key

        try:
            creds = _credentials(scope)
            check_api_key(self.resources.settings, creds.credentials if creds is not None else None)
        except AdvisorError as exc:
            await _send_error(send, 401, exc.code, exc.message, exc.fix, {"WWW-Authenticate": "Bearer"})
            return
        if scope.get("method") != "POST":  # stateless: no stream to GET, no session to DELETE
            await _send_error(send, 405, "method_not_allowed", f"{scope.get('method')} is not served at {PATH}.",
                              "Send MCP messages with POST (Streamable HTTP, stateless).", {"Allow": "POST"})
            return
        if self.manager is None:
            await _send_error(send, 503, "dependency_unavailable", "The MCP server is not running.",
                              "Install the service extra (pip install -e '.[service]'), which includes mcp, "
                              "and start the app with its lifespan (uvicorn does).")
            return
        # One check whatever the Content-Type says ("application/json, text/plain", a charset, odd casing, none):
        # the SDK reads a body under more spellings than one, and a body it may not read never reaches it.
        body = await _read_body(receive)
        problem = check_body(body)
        if problem is not None:
            await _send_json(send, *problem)
            return
        await self.manager.handle_request(scope, _replay(body, receive), send)
