"""OpenAI-compatible Chat Completions (`/v1/chat/completions`, `/v1/models`) for the openai SDK, Open WebUI, Chatbox.

The last user message goes to the assistant. The session comes from the `user` field or the X-Session-Id header
(earlier messages are then already in the session and ignored; an id not seen before starts that session); without
one, each request starts a new session. The session used is returned in the X-Session-Id response header.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, StreamingResponse

from service.api.deps import AssistantDep, SettingsDep
from service.api.errors import ModelNotFoundError, check_message
from service.api.ids import check_session_id, session_for_user
from service.api.routes.chat import SSE_HEADERS, error_event
from service.api.schemas import ChatCompletionRequest
from service.assistant.types import AssistantProtocol
from service.errors import InvalidInputError

MODEL_ID = "gpu-advisor"
CREATED = 1767225600  # 2026-01-01, a fixed "created" for the model list

router = APIRouter(tags=["openai-compatible"])


def approx_tokens(text: str) -> int:
    """A rough token count for `usage` (no tokenizer here): one per CJK character, one per 4 other characters."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def usage(prompt: str, completion: str) -> dict[str, int]:
    p, c = approx_tokens(prompt), approx_tokens(completion)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


@router.get("/models")
def list_models() -> dict[str, Any]:
    """The one model this server speaks: gpu-advisor."""
    return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": CREATED, "owned_by": "gpu-advisor"}]}


def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], "usage": None}


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False, default=str)}\n\n"


def completion_stream(
    assistant: AssistantProtocol, message: str, session_id: str, include_usage: bool
) -> Iterator[str]:
    cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    yield _data(_chunk(cid, created, {"role": "assistant", "content": ""}))
    sent: list[str] = []
    try:  # `error` events are warnings (e.g. the LLM fell back to the offline model): the final answer says so
        for event in assistant.stream(message, session_id, create=True):
            if event.type == "token" and event.text:
                sent.append(event.text)
                yield _data(_chunk(cid, created, {"content": event.text}))
            elif event.type == "final" and not sent:
                answer = str(event.data.get("answer_markdown", event.text))
                sent.append(answer)
                yield _data(_chunk(cid, created, {"content": answer}))
    except Exception as exc:  # headers are sent: the openai client raises APIError on an `error` payload
        yield _data(error_event(exc).data)
        return
    yield _data(_chunk(cid, created, {}, "stop"))
    if include_usage:
        yield _data({"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                     "choices": [], "usage": usage(message, "".join(sent))})
    yield "data: [DONE]\n\n"


@router.post("/chat/completions", responses={200: {"content": {"text/event-stream": {}}}})
def chat_completions(
    body: ChatCompletionRequest,
    assistant: AssistantDep,
    settings: SettingsDep,
    x_session_id: str | None = Header(default=None, description="continue this session"),
) -> Any:
    """OpenAI Chat Completions: the last user message goes to the assistant; `stream: true` sends chunks."""
    if body.model != MODEL_ID:
        raise ModelNotFoundError(f"Unknown model '{body.model}'.", f"Use model '{MODEL_ID}' (see GET /v1/models).")
    text = body.last_user_text()
    if text is None:
        raise InvalidInputError("messages: no message with role 'user'.", "Send at least one user message.")
    message = check_message(text, settings.max_message_chars)
    # OpenAI clients (Open WebUI, Chatbox) name their own conversation ids: an unseen id starts that session.
    # The header must be a valid id (422 otherwise); `user` is free text (OpenAI's end-user id), so any other text
    # maps to a stable derived id. Either way the X-Session-Id response header is plain ASCII.
    if x_session_id is not None:
        session_id = check_session_id(x_session_id, "X-Session-Id")
    elif body.user:
        session_id = session_for_user(body.user)
    else:
        session_id = uuid.uuid4().hex
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(completion_stream(assistant, message, session_id, include_usage),
                                 media_type="text/event-stream", headers={**SSE_HEADERS, "X-Session-Id": session_id})
    result = assistant.ask(message, session_id, create=True)
    payload = {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.answer_markdown, "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": usage(message, result.answer_markdown),
        "system_fingerprint": None,
    }
    return JSONResponse(payload, headers={"X-Session-Id": result.session_id})
