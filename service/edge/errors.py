"""API-only errors and the one JSON error shape: {"error": {"code", "message", "fix"}}."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from service.edge.ids import quote
from service.errors import AdvisorError
from service.planner.contract import PLAN_KINDS

# AdvisorError.code → HTTP status. Anything not listed is a 400.
STATUS_BY_CODE: dict[str, int] = {
    "bad_request": 400,
    "unknown_name": 400,
    "invalid_input": 422,
    "idempotency_conflict": 409,
    "infeasible": 422,
    "unauthorized": 401,
    "not_found": 404,
    "session_not_found": 404,
    "session_full": 409,
    "model_not_found": 404,
    "message_too_long": 413,
    "payload_too_large": 413,
    "catalog_invalid": 500,
    "template_error": 500,
    "internal_error": 500,
    "dependency_unavailable": 503,
    "storage_full": 507,
    "not_ready": 503,
    "request_timeout": 408,
}
MESSAGE_MAX = 2000  # a message names the problem; it never carries a large input back
MAX_ERRORS_LISTED = 5
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 408: "request_timeout", 413: "payload_too_large",
              422: "invalid_input"}
HTTP_FIXES = {
    422: "Fix the named field and send again.",
    404: "See /docs for the routes.",
    405: "Use a method from the Allow header (see /docs).",
    408: "Send the whole body at once, promptly.",
    413: "Send a smaller body: shorten the text or the lists (limits are in /docs).",
}


class NotFoundError(AdvisorError):
    code = "not_found"


class UnauthorizedError(AdvisorError):
    code = "unauthorized"


class MessageTooLongError(AdvisorError):
    code = "message_too_long"


class ModelNotFoundError(AdvisorError):
    code = "model_not_found"


def status_for(exc: AdvisorError) -> int:
    return STATUS_BY_CODE.get(exc.code, 400)


def error_body(code: str, message: str, fix: str = "") -> dict[str, Any]:
    return {"error": {"code": code, "message": quote(message, MESSAGE_MAX), "fix": fix}}


# FastAPI's words for a body json.loads could not read (malformed, not UTF-8, nested past the parser's depth)
BODY_UNREADABLE = "There was an error parsing the body"
JSON_FIX = "Send one UTF-8 JSON object, e.g. {\"message\": \"A100多少钱\"} (see /docs)."


def http_error_parts(status: int, detail: str, method: str, path: str) -> tuple[str, str, str]:
    """(code, message, fix) for a Starlette/FastAPI HTTP exception (no route, wrong method, body limits, a body
    that is not JSON)."""
    if status == 400 and detail == BODY_UNREADABLE:  # answered 422 invalid_input, as malformed JSON is
        return ("invalid_input", "The body is not readable JSON: malformed, not UTF-8, or nested too deeply.",
                JSON_FIX)
    code = HTTP_CODES.get(status, f"http_{status}")
    message = f"No route {method} {quote(path)}." if status == 404 else detail
    return code, message, HTTP_FIXES.get(status, "")


def unknown_session(session_id: str) -> NotFoundError:
    return NotFoundError(
        f"Unknown session '{quote(session_id)}'.",
        "Omit session_id to start a new session, or pick one from GET /v1/sessions.",
    )


def check_message(text: str, max_chars: int) -> str:
    """The user's message, stripped; raises when it is empty or longer than the configured limit."""
    from service.errors import InvalidInputError

    stripped = text.strip()
    if not stripped:
        raise InvalidInputError("message: the message is empty.", "Send the question text.")
    if len(text) > max_chars:
        raise MessageTooLongError(
            f"message: {len(text)} characters is over the limit of {max_chars} (max_message_chars).",
            f"Shorten the message to at most {max_chars} characters, or split it over several turns.",
        )
    return stripped


def _loc(loc: tuple[int | str, ...]) -> str:
    parts = [str(x) for x in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    if parts and parts[0] in PLAN_KINDS:  # the member of POST /v1/plan's union that was tried: not a field sent
        parts = parts[1:]
    return ".".join(parts) or "body"


def validation_message(errors: list[Any]) -> str:
    """'field: problem (got value)' for the first few errors, fields named as the client sent them, values cut
    to ~200 characters (a 10 MB field is not sent back)."""
    out = []
    for err in errors[:MAX_ERRORS_LISTED]:
        field = quote(_loc(tuple(err.get("loc", ()))), 100)
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        value = err.get("input")
        shown = f" (got {quote(repr(value))})" if isinstance(value, str | int | float | bool) else ""
        out.append(f"{field}: {msg}{shown}")
    more = len(errors) - MAX_ERRORS_LISTED
    return "Invalid input: " + "; ".join(out) + (f"; and {more} more" if more > 0 else "") + "."


def pydantic_message(exc: ValidationError) -> str:
    return validation_message(list(exc.errors()))
