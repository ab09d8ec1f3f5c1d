"""/v1/chat/completions and /v1/models: the OpenAI Chat Completions shapes, plain and streamed."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.settings import Settings
from tests.api.fakes import ANSWER_TOKENS, FakeAssistant
from tests.api.sse import parse_sse

ANSWER = "".join(ANSWER_TOKENS)


def _body(*messages: tuple[str, str], **extra: object) -> dict[str, object]:
    return {"model": "gpu-advisor", "messages": [{"role": r, "content": c} for r, c in messages], **extra}


def test_models_lists_gpu_advisor(client: TestClient) -> None:
    body = client.get("/v1/models").json()
    assert body["object"] == "list" and [m["id"] for m in body["data"]] == ["gpu-advisor"]
    assert body["data"][0]["object"] == "model"


def test_completion_shape(client: TestClient, assistant: FakeAssistant) -> None:
    r = client.post("/v1/chat/completions", json=_body(("system", "be brief"), ("user", "用Qwen2-7B做LoRA"),
                                                       temperature=0.2, max_tokens=100, n=1))
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-") and body["model"] == "gpu-advisor"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": ANSWER, "refusal": None}
    assert choice["finish_reason"] == "stop" and choice["index"] == 0
    u = body["usage"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] > 0
    assert r.headers["x-session-id"] in assistant.sessions


def test_the_messages_are_the_history(client: TestClient, assistant: FakeAssistant) -> None:
    r = client.post("/v1/chat/completions", json=_body(("user", "first"), ("assistant", "answer"), ("user", "second"),
                                                       ("assistant", "trailing")))
    sid = r.headers["x-session-id"]  # the server names a new session; the earlier turns come as its history
    assert assistant.asked == [("second", sid)]
    history = assistant.kwargs[-1]["history"]
    assert [(t.user, t.assistant) for t in history] == [("first", "answer")]  # type: ignore[attr-defined]


def test_a_known_session_gets_only_the_last_message(client: TestClient, assistant: FakeAssistant) -> None:
    sid = client.post("/v1/chat", json={"message": "first"}).json()["session_id"]
    client.post("/v1/chat/completions", json=_body(("user", "first"), ("assistant", "a"), ("user", "second"), user=sid))
    assert assistant.asked[1:] == [("second", sid)] and assistant.kwargs[-1]["history"] is None


def test_system_message_language(client: TestClient, assistant: FakeAssistant) -> None:
    client.post("/v1/chat/completions", json=_body(("system", "Always answer in English"), ("user", "用Qwen2-7B")))
    client.post("/v1/chat/completions", json=_body(("system", "请用中文回答"), ("user", "Qwen2-7B LoRA")))
    client.post("/v1/chat/completions", json=_body(("system", "You are helpful"), ("user", "Qwen2-7B LoRA")))
    assert assistant.langs == ["en", "zh", None]


def test_background_task_is_not_asked(client: TestClient, assistant: FakeAssistant) -> None:
    task = "### Task:\nGenerate 1-3 broad tags.\n### Output:\nJSON format: { \"tags\": [] }\n<chat_history>\nUSER: 你好\n</chat_history>"
    r = client.post("/v1/chat/completions", json=_body(("user", task)))
    assert r.status_code == 200 and "tags" in r.json()["choices"][0]["message"]["content"]
    assert assistant.asked == [] and "x-session-id" not in r.headers


def test_content_parts_are_joined(client: TestClient, assistant: FakeAssistant) -> None:
    parts = [{"type": "text", "text": "用Qwen2-7B"}, {"type": "image_url", "image_url": {"url": "x"}},
             {"type": "text", "text": "做LoRA"}]
    client.post("/v1/chat/completions", json={"model": "gpu-advisor", "messages": [{"role": "user", "content": parts}]})
    assert [m for m, _ in assistant.asked] == ["用Qwen2-7B\n做LoRA"]


def test_session_from_user_field_or_header(client: TestClient, assistant: FakeAssistant) -> None:
    sid = client.post("/v1/chat", json={"message": "hi"}).json()["session_id"]
    client.post("/v1/chat/completions", json=_body(("user", "via user"), user=sid))
    client.post("/v1/chat/completions", json=_body(("user", "via header")), headers={"X-Session-Id": sid})
    assert assistant.asked[1:] == [("via user", sid), ("via header", sid)]
    assert assistant.sessions[sid].turns == 3


def test_without_a_session_each_request_is_new(client: TestClient, assistant: FakeAssistant) -> None:
    a = client.post("/v1/chat/completions", json=_body(("user", "one"))).headers["x-session-id"]
    b = client.post("/v1/chat/completions", json=_body(("user", "two"))).headers["x-session-id"]
    assert a != b and len(assistant.sessions) == 2


def test_stream_chunks_and_done(client: TestClient) -> None:
    r = client.post("/v1/chat/completions", json=_body(("user", "hi"), stream=True,
                                                       stream_options={"include_usage": True}))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = [data for _, data in parse_sse(r.text)]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert len({c["id"] for c in chunks}) == 1 and all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == ANSWER
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_stream_failure_sends_an_error_payload(client: TestClient, assistant: FakeAssistant) -> None:
    assistant.fail_with = RuntimeError("boom")
    events = [d for _, d in parse_sse(client.post("/v1/chat/completions", json=_body(("user", "hi"), stream=True)).text)]
    assert events[-1]["error"]["code"] == "internal_error" and "[DONE]" not in events


def test_errors(client: TestClient, settings: Settings) -> None:
    r = client.post("/v1/chat/completions", json={**_body(("user", "hi")), "model": "gpt-4o"})
    assert r.status_code == 404 and "gpu-advisor" in r.json()["error"]["fix"]
    r = client.post("/v1/chat/completions", json=_body(("system", "only a system prompt")))
    assert r.status_code == 422 and "user" in r.json()["error"]["message"]
    r = client.post("/v1/chat/completions", json=_body(("user", "x" * (settings.max_message_chars + 1))))
    assert r.status_code == 413
    # a conversation id the server has not seen starts that session (Open WebUI / Chatbox name their own)
    r = client.post("/v1/chat/completions", json=_body(("user", "hi"), user="client-chosen-id"))
    assert r.status_code == 200 and r.headers["X-Session-Id"] == "client-chosen-id"
    r = client.post("/v1/chat/completions", json={"model": "gpu-advisor", "messages": []})
    assert r.status_code == 422 and "messages" in r.json()["error"]["message"]


def test_any_user_text_gets_a_normal_answer_and_a_stable_session(client: TestClient, assistant: FakeAssistant) -> None:
    # `user` is OpenAI's free-text end-user id: a name in Chinese or text with CR/LF must not reach a header
    for user in ("张三", "a\r\nX-Evil: 1", "x" * 1000):
        first = client.post("/v1/chat/completions", json=_body(("user", "hi"), user=user))
        again = client.post("/v1/chat/completions", json=_body(("user", "more"), user=user))
        assert first.status_code == again.status_code == 200
        sid = first.headers["x-session-id"]
        assert sid == again.headers["x-session-id"] and sid.isascii() and len(sid) <= 128
        assert "X-Evil" not in first.headers
        assert assistant.sessions[sid].turns == 2


def test_cr_lf_user_on_a_live_server(live_server_factory: Any, app: FastAPI) -> None:
    server = live_server_factory(app)
    r = httpx.post(f"{server.base_url}/v1/chat/completions", json=_body(("user", "hi"), user="张三\r\nX-Evil: 1"))
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == ANSWER
    assert "x-evil" not in r.headers


def test_invalid_session_ids_are_a_422(client: TestClient, assistant: FakeAssistant) -> None:
    for bad in ("a" * 129, "a b", "../x"):
        r = client.post("/v1/chat/completions", json=_body(("user", "hi")), headers={"X-Session-Id": bad})
        assert r.status_code == 422, bad
        assert "X-Session-Id" in r.json()["error"]["message"]
        r = client.post("/v1/chat", json={"message": "hi", "session_id": bad})
        assert r.status_code == 422 and "session_id" in r.json()["error"]["message"]
    assert assistant.asked == []


def test_responses_shape_and_errors(client: TestClient, assistant: FakeAssistant) -> None:
    r = client.post("/v1/responses", json={"model": "gpu-advisor", "input": "用Qwen2-7B做LoRA"})
    body = r.json()
    assert r.status_code == 200 and body["object"] == "response" and body["status"] == "completed"
    assert body["output"][0]["content"][0] == {"type": "output_text", "text": ANSWER, "annotations": [],
                                               "logprobs": []}
    sid = r.headers["x-session-id"]
    assert body["id"].startswith(f"resp_{sid}_")
    client.post("/v1/responses", json={"model": "gpu-advisor", "input": "再来", "previous_response_id": body["id"]})
    assert assistant.asked[-1] == ("再来", sid)
    r = client.post("/v1/responses", json={"model": "gpu-advisor", "input": "x", "previous_response_id": "resp_nope_1"})
    assert r.status_code == 404
    r = client.post("/v1/responses", json={"model": "gpu-advisor", "input": "x", "previous_response_id": "abc"})
    assert r.status_code == 422 and "previous_response_id" in r.json()["error"]["message"]
    r = client.post("/v1/responses", json={"model": "gpu-advisor", "input": [{"role": "system", "content": "hi"}]})
    assert r.status_code == 422
    events = [d for _, d in parse_sse(client.post("/v1/responses", json={"model": "gpu-advisor", "input": "hi",
                                                                          "stream": True}).text)]
    assert [e["type"] for e in events][:2] == ["response.created", "response.in_progress"]
    assert events[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
