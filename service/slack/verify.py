"""Check a POST /slack/events request on its raw bytes before anything parses it.

    problem = check_request(headers, body, secret, now=time.time())   # None when the request may be parsed

Order: size (the caller reads at most MAX_BODY_BYTES), then the timestamp (digits, within five minutes), then the
v0 signature (HMAC-SHA256 over `v0:{timestamp}:{body}`, compared in constant time), and only then the body's shape
(UTF-8, then one of Slack's payloads in its shape: service/slack/shapes.py). Each problem is (status, code, message, fix)
for our error shape.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from service.slack.shapes import payload_problem

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
    """A signed body must still be what Slack sends: UTF-8, then one of its payloads in its shape
    (service/slack/shapes.py: an Events API envelope, a slash command, an interactive payload, ssl_check)."""
    fix = "Send the payload Slack sends: a JSON object, or a form with a JSON `payload`."
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Problem(400, "bad_request", "The body is not UTF-8.", fix)
    problem = payload_problem(content_type, text)
    return Problem(400, "bad_request", problem, fix) if problem is not None else None


def check_request(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Problem | None:
    if len(body) > MAX_BODY_BYTES:
        return TOO_LARGE
    return check_signature(headers, body, secret, now) or check_shape(headers.get("content-type", ""), body)
