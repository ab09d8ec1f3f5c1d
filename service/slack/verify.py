"""Check a POST /slack/events request on its raw bytes before anything parses it.

    problem = check_request(headers, body, secret, now=time.time())   # None when the request may be parsed

Order: size (the caller reads at most MAX_BODY_BYTES), then the timestamp (digits, within five minutes), then the
v0 signature (HMAC-SHA256 over `v0:{timestamp}:{body}`, compared in constant time), and only then the body's shape
(UTF-8; JSON, or a form whose `payload` is JSON). Each problem is (status, code, message, fix) for our error shape.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

MAX_BODY_BYTES = 1 << 20  # Slack's payloads are a few KB; 1 MiB is ample
MAX_AGE_S = 5 * 60
SIGNATURE_PREFIX = "v0="
FIX_SIGNED = "Send the request as Slack does: signed with the app's Signing Secret (X-Slack-Signature, " \
    "X-Slack-Request-Timestamp) within five minutes."


@dataclass(frozen=True)
class Problem:
    status: int
    code: str
    message: str
    fix: str


TOO_LARGE = Problem(413, "payload_too_large", f"The body is over {MAX_BODY_BYTES} bytes.",
                    "Slack never sends payloads this large: check the sender.")


def unauthorized(message: str) -> Problem:
    return Problem(401, "unauthorized", message, FIX_SIGNED)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def check_signature(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Problem | None:
    timestamp = headers.get("x-slack-request-timestamp", "")
    given = headers.get("x-slack-signature", "")
    if not timestamp or not given:
        return unauthorized("The request is not signed (X-Slack-Signature or X-Slack-Request-Timestamp missing).")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        return unauthorized("X-Slack-Request-Timestamp is not a Unix time in seconds.")
    if abs(now - int(timestamp)) > MAX_AGE_S:
        return unauthorized("The request is older than five minutes (X-Slack-Request-Timestamp).")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), signature(secret, timestamp, body).encode()):
        return unauthorized("The signature does not match the body (X-Slack-Signature).")
    return None


def check_shape(content_type: str, body: bytes) -> Problem | None:
    """A signed body must still be what Slack sends: UTF-8 JSON, or a form (whose `payload`, if any, is JSON)."""
    bad = Problem(400, "bad_request", "", "Send the payload Slack sends: a JSON object, or a form with a JSON `payload`.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Problem(400, bad.code, "The body is not UTF-8.", bad.fix)
    try:  # the same choice as Bolt's parse_body: JSON when so typed or when it starts with "{", else a form
        if content_type == "application/json" or text.startswith("{"):
            if not isinstance(json.loads(text), dict):
                return Problem(400, bad.code, "The body is not a JSON object.", bad.fix)
        elif text:
            payload = parse_qs(text).get("payload")
            if payload is not None and not isinstance(json.loads(payload[0]), dict):
                return Problem(400, bad.code, "The form's `payload` is not a JSON object.", bad.fix)
    except ValueError:
        return Problem(400, bad.code, "The body (or its `payload`) is not valid JSON.", bad.fix)
    return None


def check_request(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Problem | None:
    if len(body) > MAX_BODY_BYTES:
        return TOO_LARGE
    return check_signature(headers, body, secret, now) or check_shape(headers.get("content-type", ""), body)
