"""POST /v1/chat: one turn with the assistant, as JSON (AskResult) or as server-sent events (`?stream=true`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from service.api.deps import AssistantDep, OwnerDep, RequestIdDep, SettingsDep
from service.api.schemas import ChatRequest
from service.assistant.types import AskResult, AssistantProtocol, Detail, StreamEvent
from service.edge.errors import check_message, error_body, unknown_session
from service.errors import AdvisorError
from service.workload import Workload

log = logging.getLogger(__name__)
router = APIRouter(tags=["chat"])

DETAIL_DOC = ("compact (the default): a plan's chosen candidates (each cloud's pick, the cheaper and faster "
              "alternatives, the fastest within budget), the cost of their chosen billing, 3 rejected options and no "
              "frontier; n_candidates counts them all. full: the whole plan (as POST /v1/plan gives it)")
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "AskResult JSON; with ?stream=true, server-sent events "
        "`event: token|tool|final|error` whose `data:` is a StreamEvent (final's data is the AskResult).",
        "content": {"text/event-stream": {}},
    }
}


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event: `event:` line, one `data:` line of JSON, blank line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def error_event(exc: Exception) -> StreamEvent:
    """A failure after the stream started: the same error shape, as an `error` event."""
    if isinstance(exc, AdvisorError):
        body = error_body(exc.code, exc.message, exc.fix)
    else:
        log.error("stream failed", exc_info=exc)
        body = error_body("internal_error", "Internal server error.", "Try again; if it persists, see the server log.")
    return StreamEvent(type="error", text=body["error"]["message"], data=body)


def event_stream(assistant: AssistantProtocol, message: str, session_id: str | None, owner: str | None = None,
                 request_id: str | None = None, workload: Workload | None = None,
                 detail: Detail = "compact") -> Iterator[str]:
    """The turn's events as SSE. When the client goes away (the page's Stop button), closing this generator closes
    the assistant's stream, which stores the turn so far marked stopped: history and turn count stay in step."""
    events = assistant.stream(message, session_id, owner=owner, request_id=request_id, workload=workload,
                              detail=detail)
    try:
        for event in events:
            yield sse(event.type, event.model_dump(mode="json"))
    except Exception as exc:  # the status line is sent already: report the failure in the stream
        err = error_event(exc)
        yield sse(err.type, err.model_dump(mode="json"))
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


def checked_session(assistant: AssistantProtocol, session_id: str | None, owner: str | None = None) -> str | None:
    if session_id is not None and not assistant.has_session(session_id, owner):
        raise unknown_session(session_id)
    return session_id


@router.post("/chat", response_model=AskResult, responses=SSE_DOC)
def chat(
    body: ChatRequest,
    assistant: AssistantDep,
    settings: SettingsDep,
    owner: OwnerDep,
    request_id: RequestIdDep,
    stream: bool = Query(default=False, description="stream server-sent events instead of one JSON object"),
    detail: Detail | None = Query(default=None, description=DETAIL_DOC),
) -> Any:
    """Ask the assistant; the answer carries the engine's recommendation, citations and the session id.
    Turns to one session are answered one at a time, in order; a retry with the same Idempotency-Key (or
    X-Request-Id) and the same body gets the stored answer instead of a second turn; the same key with another
    message, workload or session is a 409 `idempotency_conflict` naming the key. A plan answer is compact unless
    `detail=full` (query or body): its chosen candidates, as the turn is stored."""
    message = check_message(body.message, settings.max_message_chars)
    session_id = checked_session(assistant, body.session_id, owner)
    level: Detail = body.detail or detail or "compact"
    # a key reused with another body is a 409 before anything is answered or streamed (the turn checks again)
    assistant.check_request_id(message, session_id, owner=owner, request_id=request_id, workload=body.workload)
    if stream:
        return StreamingResponse(
            event_stream(assistant, message, session_id, owner, request_id, body.workload, level),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )
    return assistant.ask(message, session_id, owner=owner, request_id=request_id, workload=body.workload,
                         detail=level)
