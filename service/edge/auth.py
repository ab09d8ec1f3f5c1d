"""The API key check every adapter that serves over HTTP applies (the API's /v1 routes, MCP's /mcp)."""

from __future__ import annotations

import hmac

from service.edge.errors import UnauthorizedError
from service.settings import Settings


def check_api_key(settings: Settings, token: str | None) -> None:
    """When settings.api_key is set, the caller must send it as `Authorization: Bearer <key>`; raises
    UnauthorizedError naming the fix otherwise."""
    if not settings.api_key:
        return
    if token is None:
        raise UnauthorizedError(
            "Missing API key.", "Send the header 'Authorization: Bearer <key>' (the server's GPU_ADVISOR_API_KEY)."
        )
    if not hmac.compare_digest(token.encode(), settings.api_key.encode()):
        raise UnauthorizedError("Invalid API key.", "Check the key: it must equal the server's GPU_ADVISOR_API_KEY.")
