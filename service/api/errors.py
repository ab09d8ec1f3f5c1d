"""API-only errors and the one JSON error shape: {"error": {"code", "message", "fix"}}."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from service.errors import AdvisorError

# AdvisorError.code → HTTP status. Anything not listed is a 400.
STATUS_BY_CODE: dict[str, int] = {
    "bad_request": 400,
    "unknown_name": 400,
    "invalid_input": 422,
    "infeasible": 422,
    "unauthorized": 401,
    "not_found": 404,
    "session_not_found": 404,
    "model_not_found": 404,
    "message_too_long": 413,
    "payload_too_large": 413,
    "catalog_invalid": 500,
    "template_error": 500,
    "internal_error": 500,
    "dependency_unavailable": 503,
    "not_ready": 503,
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
    return {"error": {"code": code, "message": message, "fix": fix}}


def unknown_session(session_id: str) -> NotFoundError:
    return NotFoundError(
        f"Unknown session '{session_id}'.",
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
    return ".".join(parts) or "body"


def validation_message(errors: list[Any]) -> str:
    """'field: problem (got value)' for each error, fields named as the client sent them."""
    out = []
    for err in errors:
        field = _loc(tuple(err.get("loc", ())))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        value = err.get("input")
        shown = f" (got {value!r})" if isinstance(value, str | int | float | bool) else ""
        out.append(f"{field}: {msg}{shown}")
    return "Invalid input: " + "; ".join(out) + "."


def pydantic_message(exc: ValidationError) -> str:
    return validation_message(list(exc.errors()))
