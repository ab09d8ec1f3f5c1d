"""Sessions: list, show, read the turns, rename, delete. Each caller sees only its own (service.api.owner); another
caller's session is a 404, exactly like one that does not exist."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import AssistantDep, OwnerDep, SessionIdPath
from service.api.schemas import RenameRequest
from service.assistant.types import AssistantProtocol, SessionInfo, SessionMessage
from service.edge.errors import unknown_session

router = APIRouter(prefix="/sessions", tags=["sessions"])


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
            responses={404: {"description": "unknown session"}})
def session_messages(session_id: SessionIdPath, assistant: AssistantDep, owner: OwnerDep) -> list[SessionMessage]:
    """The conversation, oldest first: each turn's user message, then the answer with its structured plan."""
    _known(assistant, session_id, owner)
    return assistant.session_messages(session_id, owner)


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
