"""POST /v1/chat: JSON and server-sent events, sessions, message limits."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from service.settings import Settings
from tests.api.fakes import ANSWER_TOKENS, FakeAssistant
from tests.api.sse import parse_sse


def test_chat_returns_the_ask_result(client: TestClient, assistant: FakeAssistant) -> None:
    r = client.post("/v1/chat", json={"message": "  用Qwen2-7B做LoRA  "})
    assert r.status_code == 200
    body = r.json()
    assert body["answer_markdown"] == "".join(ANSWER_TOKENS)
    assert body["answer"]["plan"]["picks"]["tencent"] == "GN10Xp.20XLARGE320"
    assert body["citations"][0]["id"].startswith("guide/")
    assert assistant.asked == [("用Qwen2-7B做LoRA", None)]  # stripped before it reaches the assistant


def test_chat_continues_a_session(client: TestClient, assistant: FakeAssistant) -> None:
    sid = client.post("/v1/chat", json={"message": "hi"}).json()["session_id"]
    r = client.post("/v1/chat", json={"message": "and on JD Cloud?", "session_id": sid})
    assert r.status_code == 200 and r.json()["session_id"] == sid
    assert assistant.sessions[sid].turns == 2


def test_unknown_session_is_404(client: TestClient) -> None:
    r = client.post("/v1/chat", json={"message": "hi", "session_id": "nope"})
    assert r.status_code == 404
    err = r.json()["error"]
    assert err["code"] == "not_found" and "nope" in err["message"] and "GET /v1/sessions" in err["fix"]


def test_unknown_session_is_404_before_a_stream_starts(client: TestClient) -> None:
    r = client.post("/v1/chat?stream=true", json={"message": "hi", "session_id": "nope"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/json")


def test_message_over_the_limit_is_413_naming_the_limit(client: TestClient, settings: Settings) -> None:
    limit = settings.max_message_chars
    r = client.post("/v1/chat", json={"message": "x" * (limit + 1)})
    assert r.status_code == 413
    err = r.json()["error"]
    assert err["code"] == "message_too_long" and str(limit) in err["message"] and "max_message_chars" in err["message"]


def test_message_at_the_limit_is_accepted(client: TestClient, settings: Settings) -> None:
    assert client.post("/v1/chat", json={"message": "x" * settings.max_message_chars}).status_code == 200


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"message": ""}, "message"),  # empty
        ({"message": " \n\t "}, "message"),  # whitespace only
        ({}, "message"),  # missing
        ({"message": "hi", "extra": 1}, "extra"),  # unknown field
    ],
)
def test_bad_chat_body_is_422_naming_the_field(client: TestClient, payload: dict[str, object], field: str) -> None:
    r = client.post("/v1/chat", json=payload)
    assert r.status_code == 422
    assert r.json()["error"]["message"].split("Invalid input: ")[-1].startswith(field)


def test_chat_stream_sends_tool_tokens_and_final(client: TestClient) -> None:
    r = client.post("/v1/chat?stream=true", json={"message": "用Qwen2-7B做LoRA"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    names = [name for name, _ in events]
    assert names == ["tool", "token", "token", "token", "final"]
    assert "".join(d["text"] for n, d in events if n == "token") == "".join(ANSWER_TOKENS)
    assert events[0][1]["name"] == "plan_training"
    final = events[-1][1]
    assert final["type"] == "final" and final["data"]["answer_markdown"] == "".join(ANSWER_TOKENS)


def test_a_failure_mid_stream_becomes_an_error_event(client: TestClient, assistant: FakeAssistant) -> None:
    assistant.fail_with = RuntimeError("boom /secret/path")
    r = client.post("/v1/chat?stream=true", json={"message": "hi"})
    events = parse_sse(r.text)
    assert [n for n, _ in events] == ["tool", "token", "error"]
    err = events[-1][1]["data"]["error"]
    assert err["code"] == "internal_error" and "secret" not in r.text  # no internals leak


def test_an_advisor_error_mid_stream_keeps_its_message(client: TestClient, assistant: FakeAssistant) -> None:
    from service.errors import InfeasibleError

    assistant.fail_with = InfeasibleError("Nothing fits 2 TB of weights.", "Use QLoRA.")
    events = parse_sse(client.post("/v1/chat?stream=true", json={"message": "hi"}).text)
    assert events[-1][1]["data"]["error"] == {"code": "infeasible", "message": "Nothing fits 2 TB of weights.",
                                               "fix": "Use QLoRA."}
