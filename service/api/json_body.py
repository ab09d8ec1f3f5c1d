"""Every JSON body the API's routes read passes one check first (service/edge/jsonbody.py): a number that is not finite
(NaN, Infinity, -Infinity, 1e400) or a string with a lone surrogate is a 422 naming the field, on every route and
for every field, the ones a route ignores included (an OpenAI client's `temperature`). Python's JSON parser reads
NaN and Infinity, and a float field without bounds takes them; now no route sees one.

    app.add_middleware(JsonBodyCheck)     # inside BodyLimits: the size cap and read deadline apply first

/mcp and /slack/events are not checked here: /mcp runs the same check with JSON-RPC's errors (service/mcp/guard.py),
Slack's signed bodies have their own (service/slack/verify.py).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.edge.jsonbody import find_problem

METHODS = ("POST", "PUT", "PATCH")
SKIPPED = ("/mcp", "/slack/")


class BodyValueError(HTTPException):
    """A value no route may read: 422 in the API's error shape (edge/errors.py names 422 invalid_input)."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(422, message)
        self.fix = fix


def _json_body(scope: Scope) -> bool:
    """A body the routes read as JSON: typed as JSON, or not typed at all (FastAPI reads those as JSON too)."""
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            return b"json" in bytes(value).lower()
    return True


class _CheckedReceive:
    def __init__(self, receive: Receive) -> None:
        self.receive, self.chunks = receive, bytearray()

    async def __call__(self) -> Message:
        message = await self.receive()
        if message["type"] == "http.request":
            self.chunks += message.get("body", b"")
            if not message.get("more_body", False):
                self._check(bytes(self.chunks))
        return message

    @staticmethod
    def _check(body: bytes) -> None:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return  # the route's parser says so
        problem = find_problem(text)
        if problem is not None and problem.kind != "depth":  # too deep: the route's parser refuses it (400)
            raise BodyValueError(problem.message, problem.fix)


class JsonBodyCheck:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if (scope["type"] != "http" or scope.get("method") not in METHODS or path.startswith(SKIPPED)
                or not _json_body(scope)):
            await self.app(scope, receive, send)
            return
        await self.app(scope, _CheckedReceive(receive), send)
