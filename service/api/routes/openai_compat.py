"""OpenAI-compatible Chat Completions (`/v1/chat/completions`, `/v1/models`) for the openai SDK, LangChain,
Open WebUI, Chatbox and `llm`.

As the protocol intends, the conversation is the `messages` array: the earlier user turns (and the workload our
own earlier answers carry) rebuild the conversation, so any client continues it with no session id. A session id
stays optional: the `user` field or the X-Session-Id header names a server-side session; one that exists already
holds the earlier turns and gets only the last message, one not seen before starts under that id. The session
used is returned in the X-Session-Id response header. A system message is honoured for the answer's language and
length. A client's background task ("### Task:" title/tags/follow-ups prompts) gets a short fitting answer and
is not stored.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from service.api.compat_text import Rendering, approx_tokens, rendering
from service.api.conversation import Conversation, from_messages, shorten, task_answer
from service.api.deps import AssistantDep, OwnerDep, SettingsDep
from service.api.routes.chat import SSE_HEADERS, error_event
from service.api.schemas import ChatCompletionRequest
from service.assistant.types import AskResult, AssistantProtocol, HistoryTurn
from service.edge.errors import ModelNotFoundError, check_message
from service.edge.ids import check_session_id, session_for_user
from service.errors import InvalidInputError
from service.settings import Settings

__all__ = ["approx_tokens", "MODEL_ID", "Turn", "answer", "answer_stream", "check_model", "open_turn",
           "requested_session", "rendering_of"]
MODEL_ID = "gpu-advisor"
CREATED = 1767225600  # 2026-01-01, a fixed "created" for the model list

router = APIRouter(tags=["openai-compatible"])


def usage(prompt: str, completion: str) -> dict[str, int]:
    p, c = approx_tokens(prompt), approx_tokens(completion)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def requested_session(x_session_id: str | None, user: str | None) -> str | None:
    """The session a request names: the X-Session-Id header (a valid id, 422 otherwise), else OpenAI's free-text
    `user` (itself when it is a valid id, else a stable id derived from it), else none. Always plain ASCII."""
    if x_session_id is not None:
        return check_session_id(x_session_id, "X-Session-Id")
    return session_for_user(user) if user else None


def check_model(model: str) -> None:
    if model != MODEL_ID:
        raise ModelNotFoundError(f"Unknown model '{model}'.", f"Use model '{MODEL_ID}' (see GET /v1/models).")


@router.get("/models")
def list_models() -> dict[str, Any]:
    """The one model this server speaks: gpu-advisor."""
    return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": CREATED, "owned_by": "gpu-advisor"}]}


# -- one turn, shared with /v1/responses ----------------------------------------------------------

@dataclass(frozen=True)
class Turn:
    """What a compat request asks: the conversation, the session that answers it, and whether to store it."""

    conversation: Conversation
    session_id: str
    continued: bool  # the named session exists and already holds the earlier turns
    owner: str | None = None  # the caller (service.api.owner): a session is only its owner's
    rendering: Rendering = Rendering()  # how this client reads the answer (service.api.compat_text)

    @property
    def task(self) -> str | None:
        return self.conversation.task


def rendering_of(request: Request, settings: Settings, max_tokens: int | None = None) -> Rendering:
    return rendering(request.headers, str(request.base_url), settings.public_url, settings.compat_format, max_tokens)


def open_turn(assistant: AssistantProtocol, conversation: Conversation, session_id: str | None,
              owner: str | None = None, render: Rendering | None = None) -> Turn:
    continued = session_id is not None and assistant.has_session(session_id, owner)
    hint = conversation.session_hint
    render = render or Rendering()
    if session_id is None and hint is not None and assistant.has_session(hint, owner):
        return Turn(conversation, hint, False, owner, render)  # the same stored session; the messages are the history
    if session_id is None and hint is None:
        found = _session_of_our_answer(assistant, conversation, owner, render)
        if found is not None:  # a plain-text client (no comments): our answer names the session; its turns (and
            return Turn(conversation, found, True, owner, render)  # their workloads) are the history
    return Turn(conversation, session_id or uuid.uuid4().hex, continued, owner, render)


def _session_of_our_answer(assistant: AssistantProtocol, conversation: Conversation, owner: str | None,
                           render: Rendering) -> str | None:
    find = getattr(assistant, "session_with_answer", None)
    last = conversation.last_answer
    if find is None or not last:
        return None
    found = find(render.relative(last), owner)
    return str(found) if found else None


def history_of(turn: Turn) -> list[HistoryTurn] | None:
    """The conversation so far for the assistant: the request's earlier turns, unless the named session already
    holds them (then None: its stored turns are the history)."""
    if turn.continued:
        return None
    return [HistoryTurn.model_validate(t) for t in turn.conversation.turns()]


def final_text(result: AskResult, turn: Turn) -> tuple[str, str, bool]:
    """(the answer a client shows, what follows it, cut by max_tokens?): brief when the system message asked,
    links absolute, the workload artifact after it for Markdown clients (service.api.compat_text)."""
    text = shorten(result.answer_markdown) if turn.conversation.brief else result.answer_markdown
    return turn.rendering.write(text, result.workload, result.session_id, result.language)


def answer(assistant: AssistantProtocol, turn: Turn) -> tuple[str, str | None, bool]:
    """(answer text, session id or None for a background task that is not stored, cut by max_tokens?)."""
    if turn.task:
        return task_answer(turn.conversation.message, turn.task), None, False
    result = assistant.ask(turn.conversation.message, turn.session_id, create=True, lang=turn.conversation.lang,
                           owner=turn.owner, history=history_of(turn))
    text, suffix, cut = final_text(result, turn)
    return text + suffix, result.session_id, cut


def answer_stream(assistant: AssistantProtocol, turn: Turn, outcome: dict[str, bool] | None = None) -> Iterator[str]:
    """The answer as text pieces: tokens as they come, a line at a time (links made absolute); the whole answer at
    the end when it is brief or capped by max_tokens (`outcome["cut"]` says whether it was cut); then the workload
    artifact for Markdown clients. Raises what the assistant raises."""
    if turn.task:
        yield task_answer(turn.conversation.message, turn.task)
        return
    conversation = turn.conversation
    whole = conversation.brief or turn.rendering.max_tokens is not None
    streamed, pending = [], ""
    for event in assistant.stream(conversation.message, turn.session_id, create=True, lang=conversation.lang,
                                  owner=turn.owner, history=history_of(turn)):
        if event.type == "token" and event.text and not whole:
            streamed.append(event.text)
            pending += event.text
            done, nl, pending = pending.rpartition("\n")
            if nl:
                yield turn.rendering.line(done + nl)
        elif event.type == "final":
            result = AskResult.model_validate(event.data)
            text, suffix, cut = final_text(result, turn)
            if outcome is not None:
                outcome["cut"] = cut
            if not streamed:
                yield text + suffix
                continue
            if pending:
                yield turn.rendering.line(pending)
            if "".join(streamed) == result.answer_markdown:
                yield suffix


def conversation_of(body: ChatCompletionRequest, max_chars: int) -> Conversation:
    conversation = from_messages((m.role, m.text()) for m in body.messages)
    if conversation is None:
        raise InvalidInputError("messages: no message with role 'user'.", "Send at least one user message.")
    check_message(conversation.message, max_chars)
    return conversation


# -- Chat Completions ------------------------------------------------------------------------------

def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], "usage": None}


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False, default=str)}\n\n"


def completion_stream(assistant: AssistantProtocol, turn: Turn, include_usage: bool) -> Iterator[str]:
    cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    yield _data(_chunk(cid, created, {"role": "assistant", "content": ""}))
    sent: list[str] = []
    outcome: dict[str, bool] = {}
    try:
        for piece in answer_stream(assistant, turn, outcome):
            sent.append(piece)
            yield _data(_chunk(cid, created, {"content": piece}))
    except Exception as exc:  # headers are sent: the openai client raises APIError on an `error` payload
        yield _data(error_event(exc).data)
        return
    yield _data(_chunk(cid, created, {}, "length" if outcome.get("cut") else "stop"))
    if include_usage:
        yield _data({"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                     "choices": [], "usage": usage(turn.conversation.message, "".join(sent))})
    yield "data: [DONE]\n\n"


@router.post("/chat/completions", responses={200: {"content": {"text/event-stream": {}}}})
def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    assistant: AssistantDep,
    settings: SettingsDep,
    owner: OwnerDep,
    x_session_id: str | None = Header(default=None, description="continue this session"),
    x_answer_format: str | None = Header(default=None, max_length=16, description="text: clean text (no "
                                         "gpu-advisor comments); markdown: with them; default: by User-Agent"),
) -> Any:
    """OpenAI Chat Completions: the `messages` array is the conversation; `stream: true` sends chunks;
    `max_tokens` (or `max_completion_tokens`) shortens the answer, and the reply says so."""
    check_model(body.model)
    conversation = conversation_of(body, settings.max_message_chars)
    render = rendering_of(request, settings, body.max_completion_tokens or body.max_tokens)
    turn = open_turn(assistant, conversation, requested_session(x_session_id, body.user), owner, render)
    headers = {} if turn.task else {"X-Session-Id": turn.session_id}
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(completion_stream(assistant, turn, include_usage),
                                 media_type="text/event-stream", headers={**SSE_HEADERS, **headers})
    text, _sid, cut = answer(assistant, turn)
    payload = {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                     "finish_reason": "length" if cut else "stop", "logprobs": None}],
        "usage": usage(conversation.message, text),
        "system_fingerprint": None,
    }
    return JSONResponse(payload, headers=headers)
