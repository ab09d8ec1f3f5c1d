"""Request-body limits for every route: a size cap per path (413) and a read deadline (408), as ASGI middleware.

    app.add_middleware(BodyLimits, timeout_s=30.0)

The size is refused from Content-Length before anything is read, or as the bytes arrive (chunked, or a body
longer than declared). The deadline runs from the first read of the body until its last byte: a client that
sends part of a body and stalls (slowloris) gets a 408 and the connection back, instead of holding it forever.
Both errors are raised as HTTP exceptions inside the app, so they come out in the one error shape.
"""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

KIB = 1024
MIB = 1024 * KIB
DEFAULT_LIMIT = 1 * MIB
# Longest prefix first. Documents take a whole /v1/plan result; OpenAI clients send the conversation each time.
LIMITS: tuple[tuple[str, int], ...] = (
    ("/v1/documents/", 8 * MIB),
    ("/v1/chat/completions", 4 * MIB),
    ("/v1/responses", 4 * MIB),
    ("/slack/events", 1 * MIB),
)


def limit_for(path: str) -> int:
    for prefix, limit in LIMITS:
        if path.startswith(prefix):
            return limit
    return DEFAULT_LIMIT


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is over this route's limit of {limit} bytes.")


class BodyTimeout(HTTPException):
    def __init__(self, timeout_s: float) -> None:
        super().__init__(408, f"The request body did not arrive in full within {timeout_s:g} s.",
                         headers={"Connection": "close"})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class _LimitedReceive:
    """`receive` with the size cap and the deadline applied until the body is complete."""

    def __init__(self, receive: Receive, limit: int, declared: int | None, timeout_s: float) -> None:
        self.receive, self.limit, self.declared, self.timeout_s = receive, limit, declared, timeout_s
        self.received, self.done, self.deadline = 0, False, 0.0

    async def __call__(self) -> Message:
        if self.done:  # the body is in: later reads wait for the disconnect, without a deadline
            return await self.receive()
        if self.declared is not None and self.declared > self.limit:
            raise BodyTooLarge(self.limit)
        loop = asyncio.get_running_loop()
        if not self.deadline:
            self.deadline = loop.time() + self.timeout_s
        try:
            message = await asyncio.wait_for(self.receive(), max(0.0, self.deadline - loop.time()))
        except TimeoutError:
            raise BodyTimeout(self.timeout_s) from None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                raise BodyTooLarge(self.limit)
            self.done = not message.get("more_body", False)
        else:
            self.done = True
        return message


class BodyLimits:
    def __init__(self, app: ASGIApp, timeout_s: float = 30.0) -> None:
        self.app, self.timeout_s = app, timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = limit_for(str(scope.get("path", "")))
        await self.app(scope, _LimitedReceive(receive, limit, _content_length(scope), self.timeout_s), send)
