"""Who owns a conversation. The owner token is, in order: the `X-Client-Id` header, or the cookie the page gets
on its first visit (HttpOnly, SameSite=Lax); with an API key configured it is scoped to the key's owner: the key id
(GPU_ADVISOR_API_KEY_ID, `keyid:team-ml`) when one is set, so a rotated key keeps its sessions, else the key itself
(`key:<hash>`, and a rotated key starts with none until `gpu-advisor sessions rekey` moves them). A caller that
sends neither is the anonymous caller (one shared owner); a caller never sees another owner's sessions.

Tokens and keys are stored hashed (sha256), never as sent; a key id is a name, stored as configured.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

OWNER_COOKIE = "gpu_advisor_client"
COOKIE_MAX_AGE_S = 365 * 24 * 3600
ANONYMOUS = "anonymous"
Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]


def key_scope(api_key: str, key_id: str = "") -> str:
    """The owner a key's callers share: 'keyid:<id>' with a key id, 'key:<hash>' without, '' without a key."""
    if not api_key:
        return ""
    return f"keyid:{key_id}" if key_id else f"key:{_hash(api_key)}"


def owner_token(client_id: str | None, cookie: str | None, api_key: str, key_id: str = "") -> str:
    """The stored owner: 'client:<hash>' (header or cookie); with a key, its scope first ('keyid:<id>' or
    'key:<hash>', then '/client:<hash>'); or anonymous."""
    caller = client_id.strip() if client_id and client_id.strip() else (cookie or "")
    own = f"client:{_hash(caller)}" if caller else ""
    scope = key_scope(api_key, key_id)
    if scope:
        return f"{scope}/{own}" if own else scope
    return own or ANONYMOUS


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def cookie_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header: treat as none
                continue
            if OWNER_COOKIE in jar:
                return jar[OWNER_COOKIE].value
    return None


class OwnerCookieMiddleware:
    """Pure ASGI (streams pass through untouched): an HTML response to a caller without the owner cookie sets one,
    so the page's later API calls carry it. API responses never set it (their callers choose X-Client-Id)."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http" or cookie_of(list(scope.get("headers", []))) is not None:
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                if html:
                    token = secrets.token_urlsafe(24)
                    value = f"{OWNER_COOKIE}={token}; Path=/; Max-Age={COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax"
                    message = {**message, "headers": [*headers, (b"set-cookie", value.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)
