"""OpenAI Responses API (`POST /v1/responses`) for clients that speak it: the openai SDK's `responses.create`,
LangChain's `ChatOpenAI(use_responses_api=True)`.

`input` is a string or a list of messages (the conversation, as in Chat Completions); `instructions` and system or
developer messages are the system text (language, length). `previous_response_id` continues the conversation of
that response: the id names its session (`resp_<session>_<n>`), so nothing extra is stored. `stream: true` sends
the Responses events (`response.created` ... `response.output_text.delta` ... `response.completed`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from service.api.conversation import Conversation, content_text, from_messages
from service.api.deps import AssistantDep, OwnerDep, SettingsDep
from service.api.routes.chat import SSE_HEADERS, error_event
from service.api.routes.openai_compat import (
    MODEL_ID,
    Turn,
    answer,
    answer_stream,
    approx_tokens,
    check_model,
    open_turn,
    rendering_of,
    requested_session,
)
from service.assistant.types import AssistantProtocol
from service.edge.errors import check_message, unknown_session
from service.edge.ids import check_session_id, quote
from service.errors import InvalidInputError

router = APIRouter(tags=["openai-compatible"])


class ResponsesRequest(BaseModel):
    """The fields Responses clients send; unknown ones (temperature, tools, store, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = MODEL_ID
    input: str | list[dict[str, Any]] = Field(description="the user's text, or the conversation as messages")
    instructions: str | None = Field(default=None, description="system text: language and length are honoured")
    previous_response_id: str | None = Field(default=None, description="continue that response's conversation")
    stream: bool = False
    user: str | None = Field(default=None, description="a session id to continue (or send X-Session-Id)")
    max_output_tokens: int | None = Field(default=None, ge=1, le=1_000_000, description="shortens the answer to "
                                          "about this many tokens, and the reply says so (status incomplete)")

    def pairs(self) -> list[tuple[str, str]]:
        out = [("system", self.instructions)] if self.instructions else []
        if isinstance(self.input, str):
            return [*out, ("user", self.input)]
        for item in self.input:
            if item.get("type", "message") == "message" and isinstance(item.get("role"), str):
                out.append((str(item["role"]), content_text(item.get("content"))))
        return out


def response_id(session_id: str) -> str:
    return f"resp_{session_id}_{uuid.uuid4().hex[:12]}"


def session_of(previous_response_id: str) -> str:
    """The session a response id names ("resp_<session>_<n>")."""
    body = previous_response_id.removeprefix("resp_")
    session, sep, _n = body.rpartition("_")
    if not previous_response_id.startswith("resp_") or not sep or not session:
        raise InvalidInputError(f"previous_response_id '{quote(previous_response_id)}' is not a response of this "
                                "server.", "Pass the `id` of an earlier /v1/responses answer, or omit it.")
    return check_session_id(session, "previous_response_id")


def _usage(prompt: str, text: str) -> dict[str, Any]:
    p, c = approx_tokens(prompt), approx_tokens(text)
    return {"input_tokens": p, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": c,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": p + c}


def _message(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if status == "completed" else []
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def response_object(rid: str, body: ResponsesRequest, created: int, status: str,
                    output: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": rid, "object": "response", "created_at": created, "status": status, "model": MODEL_ID,
        "output": output, "usage": usage, "error": None, "incomplete_details": None,
        "instructions": body.instructions, "previous_response_id": body.previous_response_id,
        "parallel_tool_calls": False, "tool_choice": "auto", "tools": [], "temperature": None, "top_p": None,
        "max_output_tokens": body.max_output_tokens, "metadata": {}, "text": {"format": {"type": "text"}}, "truncation": "disabled",
        "store": True, "user": body.user, "reasoning": {"effort": None, "summary": None},
    }


def event_stream(assistant: AssistantProtocol, turn: Turn, body: ResponsesRequest, rid: str) -> Iterator[str]:
    created, item = int(time.time()), f"msg_{uuid.uuid4().hex}"
    seq = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> str:
        payload = {"type": kind, "sequence_number": next(seq), **data}
        return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False, default=str)}\n\n"

    yield event("response.created", response=response_object(rid, body, created, "in_progress", [], None))
    yield event("response.in_progress", response=response_object(rid, body, created, "in_progress", [], None))
    yield event("response.output_item.added", output_index=0, item=_message(item, "", "in_progress"))
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    where = {"item_id": item, "output_index": 0, "content_index": 0}
    yield event("response.content_part.added", **where, part=part)
    sent: list[str] = []
    outcome: dict[str, bool] = {}
    try:
        for piece in answer_stream(assistant, turn, outcome):
            sent.append(piece)
            yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
    except Exception as exc:  # the status line is sent: the error is an event, then the response fails
        err = error_event(exc).data["error"]
        yield event("error", code=err["code"], message=err["message"], param=None)
        failed = response_object(rid, body, created, "failed", [], None)
        yield event("response.failed", response={**failed, "error": {"code": err["code"], "message": err["message"]}})
        return
    text = "".join(sent)
    yield event("response.output_text.done", **where, text=text, logprobs=[])
    yield event("response.content_part.done", **where, part={**part, "text": text})
    done = _message(item, text)
    yield event("response.output_item.done", output_index=0, item=done)
    usage = _usage(turn.conversation.message, text)
    final = response_object(rid, body, created, "incomplete" if outcome.get("cut") else "completed", [done], usage)
    if outcome.get("cut"):
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    yield event("response.incomplete" if outcome.get("cut") else "response.completed", response=final)


@router.post("/responses", responses={200: {"content": {"text/event-stream": {}}}})
def create_response(
    body: ResponsesRequest,
    request: Request,
    assistant: AssistantDep,
    settings: SettingsDep,
    owner: OwnerDep,
    x_session_id: str | None = Header(default=None, description="continue this session"),
) -> Any:
    """OpenAI Responses: `input` (string or messages) answered as one assistant message; `stream: true` for events."""
    check_model(body.model)
    conversation: Conversation | None = from_messages(body.pairs())
    if conversation is None:
        raise InvalidInputError("input: no user message.", "Send `input` as a string or include a 'user' message.")
    check_message(conversation.message, settings.max_message_chars)
    session_id = requested_session(x_session_id, body.user)
    if body.previous_response_id:
        session_id = session_of(body.previous_response_id)
        if not assistant.has_session(session_id, owner):
            raise unknown_session(session_id)
    turn = open_turn(assistant, conversation, session_id, owner, rendering_of(request, settings,
                                                                             body.max_output_tokens))
    rid = response_id(turn.session_id if not turn.task else "task")
    headers = {} if turn.task else {"X-Session-Id": turn.session_id}
    if body.stream:
        return StreamingResponse(event_stream(assistant, turn, body, rid), media_type="text/event-stream",
                                 headers={**SSE_HEADERS, **headers})
    text, _sid, cut = answer(assistant, turn)
    created = int(time.time())
    out = response_object(rid, body, created, "incomplete" if cut else "completed",
                          [_message(f"msg_{uuid.uuid4().hex}", text)], _usage(conversation.message, text))
    if cut:
        out["incomplete_details"] = {"reason": "max_output_tokens"}
    return JSONResponse(out, headers=headers)
