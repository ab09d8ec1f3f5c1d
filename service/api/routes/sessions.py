"""Sessions: list, show, read the turns, rename, delete. Each caller sees only its own (service.api.owner); another
caller's session is a 404, exactly like one that does not exist."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response

from service.api.deps import AssistantDep, OwnerDep, SessionIdPath
from service.api.schemas import RenameRequest
from service.assistant.types import AssistantProtocol, Detail, SessionInfo, SessionMessage
from service.edge.errors import unknown_session
from service.errors import InvalidInputError

router = APIRouter(prefix="/sessions", tags=["sessions"])
PAGE_DEFAULT = 50  # turns per page (each turn is a user message and its answer)
PAGE_MAX = 200
FULL_MAX = 20  # detail=full recomputes each plan: at most this many turns per page
LIMIT_DOC = f"turns per page (two messages each), newest first; default {PAGE_DEFAULT}, at most {PAGE_MAX} " \
            f"({FULL_MAX} with detail=full)"
BEFORE_DOC = "only turns numbered below this one (the `Link: rel=\"next\"` header of a page names it)"


def _known(assistant: AssistantProtocol, session_id: str, owner: str) -> None:
    if not assistant.has_session(session_id, owner):
        raise unknown_session(session_id)


@router.get("", response_model=list[SessionInfo])
def list_sessions(assistant: AssistantDep, owner: OwnerDep) -> list[SessionInfo]:
    """Your sessions, most recent first."""
    return assistant.list_sessions(owner)


@router.get("/{session_id}", response_model=SessionInfo, responses={404: {"description": "unknown session"}})
def get_session(session_id: SessionIdPath, assistant: AssistantDep, owner: OwnerDep) -> SessionInfo:
    """One session's title, dates and turn count."""
    _known(assistant, session_id, owner)
    for info in assistant.list_sessions(owner):
        if info.session_id == session_id:
            return info
    raise unknown_session(session_id)


@router.get("/{session_id}/messages", response_model=list[SessionMessage],
            responses={404: {"description": "unknown session"},
                       200: {"description": "the page's messages, oldest first; when older turns exist, the header "
                             "`Link: </v1/sessions/{id}/messages?before=N&limit=L>; rel=\"next\"` (and "
                             "`X-Next-Before: N`) names the next page"}})
def session_messages(
    session_id: SessionIdPath, assistant: AssistantDep, owner: OwnerDep, request: Request, response: Response,
    limit: Annotated[int | None, Query(ge=1, le=PAGE_MAX, description=LIMIT_DOC)] = None,
    before: Annotated[int | None, Query(ge=1, le=2**53, description=BEFORE_DOC)] = None,
    detail: Annotated[Detail, Query(description="compact: each plan's chosen candidates, as stored; full: the "
                                    "whole plan, recomputed from the turn's stored workload")] = "compact",
) -> list[SessionMessage]:
    """The conversation a page at a time: the latest `limit` turns (or those before `before`), oldest first, each
    turn's user message then the answer with its structured plan."""
    _known(assistant, session_id, owner)
    if detail == "full" and limit is not None and limit > FULL_MAX:
        raise InvalidInputError(f"limit={limit} with detail=full: at most {FULL_MAX} turns per page recompute "
                                "their whole plans.", f"Send limit={FULL_MAX} or less, or leave out detail=full.")
    size = limit or (FULL_MAX if detail == "full" else PAGE_DEFAULT)
    page = assistant.session_page(session_id, owner, limit=size, before=before, detail=detail)
    if page.next_before is not None:
        query = {"before": page.next_before, "limit": size, **({"detail": detail} if detail == "full" else {})}
        response.headers["Link"] = f'<{request.url.path}?{urlencode(query)}>; rel="next"'
        response.headers["X-Next-Before"] = str(page.next_before)
    return page.messages


@router.patch("/{session_id}", response_model=SessionInfo, responses={404: {"description": "unknown session"}})
def rename_session(session_id: SessionIdPath, body: RenameRequest, assistant: AssistantDep, owner: OwnerDep) -> SessionInfo:
    """Give a session a new title."""
    _known(assistant, session_id, owner)
    return assistant.rename_session(session_id, body.title.strip(), owner)


@router.delete("/{session_id}", status_code=204, responses={404: {"description": "unknown session"}})
def delete_session(session_id: SessionIdPath, assistant: AssistantDep, owner: OwnerDep) -> Response:
    """Delete a session and its history."""
    _known(assistant, session_id, owner)
    assistant.delete_session(session_id, owner)
    return Response(status_code=204)
