"""HTTP details FastAPI leaves out: HEAD on every GET route, and a 405 whose Allow header lists every method.

    app.add_middleware(HeadAsGet)
    allowed_methods(request)   # ["DELETE", "GET", "HEAD", "PATCH"] for /v1/sessions/{id}
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """A HEAD request is routed as GET and answered with the GET's status and headers, without the body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_head(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_head)


METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route at this path answers (Starlette's own 405 names only the first route's). Each
    method is tried against the router's own matching, which works however the routers are nested."""
    routes = request.app.router.routes
    methods = {method for method in METHODS
               if any(route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes)}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)
