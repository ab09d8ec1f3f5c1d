"""Sessions: list, show, rename, delete. The assistant keeps them (SQLite under the data dir), so they survive restarts."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import AssistantDep, SessionIdPath
from service.api.errors import unknown_session
from service.api.schemas import RenameRequest
from service.assistant.types import AssistantProtocol, SessionInfo

router = APIRouter(prefix="/sessions", tags=["sessions"])


def _known(assistant: AssistantProtocol, session_id: str) -> None:
    if not assistant.has_session(session_id):
        raise unknown_session(session_id)


@router.get("", response_model=list[SessionInfo])
def list_sessions(assistant: AssistantDep) -> list[SessionInfo]:
    """Every session, as the assistant stores them."""
    return assistant.list_sessions()


@router.get("/{session_id}", response_model=SessionInfo)
def get_session(session_id: SessionIdPath, assistant: AssistantDep) -> SessionInfo:
    """One session's title, dates and turn count."""
    _known(assistant, session_id)
    for info in assistant.list_sessions():
        if info.session_id == session_id:
            return info
    raise unknown_session(session_id)


@router.patch("/{session_id}", response_model=SessionInfo)
def rename_session(session_id: SessionIdPath, body: RenameRequest, assistant: AssistantDep) -> SessionInfo:
    """Give a session a new title."""
    _known(assistant, session_id)
    return assistant.rename_session(session_id, body.title.strip())


@router.delete("/{session_id}", status_code=204)
def delete_session(session_id: SessionIdPath, assistant: AssistantDep) -> Response:
    """Delete a session and its history."""
    _known(assistant, session_id)
    assistant.delete_session(session_id)
    return Response(status_code=204)
