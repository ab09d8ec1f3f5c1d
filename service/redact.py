"""A provider's failure as we show it and as we log it. The user sees a fixed phrase (prompts/answer.*.yaml
reader_fallback / fallback); `backend`, the stored turn and API responses carry `failure(exc)`: the error's class and
HTTP status, never the provider's text (a provider may echo the key it was sent, as several do on 401); the log keeps
the text too, with every credential-shaped string masked by `mask`.

    failure(exc)                    # 'AuthenticationError, HTTP 401'
    mask(text, secrets=(api_key,))  # 'Incorrect API key provided: sk-***' (and the configured key, wherever it is)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
LOG_CHARS = 400  # a log line keeps this much of the provider's (masked) text
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),  # OpenAI-style keys: OpenAI, DeepSeek, DashScope, Moonshot ...
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"),  # an Authorization header's credentials
    # key=value / "key": "value" for anything named like a credential
    re.compile(r"(?i)((?:api[_-]?key|apikey|access[_-]?key|secret(?:[_-]?key)?|token|password|passwd|"
               r"authorization|credential)s?[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}&]{4,})"),
    # a long opaque token: 32+ letters/digits with both kinds (hex digests, base64 keys, JWT parts)
    re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b"),
)


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with the given secrets and every credential-shaped string replaced by ***."""
    out = text
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, MASK)
    for pattern in _PATTERNS:
        out = pattern.sub(_masked, out)
    return out


def _masked(m: re.Match[str]) -> str:
    """Keep what names the credential (`api_key=`, `Bearer`), mask the credential itself."""
    groups = m.re.groups
    return m.group(1) + MASK if groups >= 2 else (f"{m.group(1)} {MASK}" if groups == 1 else MASK)


def http_status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def failure(exc: BaseException) -> str:
    """The error's class and HTTP status: what may be shown and stored (nothing the provider wrote)."""
    status = http_status(exc)
    return type(exc).__name__ + (f", HTTP {status}" if status is not None else "")


def for_log(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """failure(exc) and the provider's text, masked and cut: what the log keeps."""
    text = mask(" ".join(str(exc).split()), secrets)
    return f"{failure(exc)}: {text[:LOG_CHARS]}" if text else failure(exc)
