"""Issue 41 F8: a correctly signed body that is not Slack's shape gets 400 in our error shape, never 500; a slash
command or a click replayed within the five minutes its signature holds is answered once, like an event.

Regression: 8 of 22 signed wrong-shape bodies were a 500 (5,000-deep JSON, `event` a string or a list,
`authorizations` a string, `actions` a string or holding a number), 0 now; a slash command replayed three times
was answered three times, once now."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from service.slack.app import EVENTS_PATH
from service.slack.blocks import REQUEST_DOC_ACTION, action_value
from tests.slack.conftest import SlackHarness, signed_headers
from tests.slack.fakes import FakeAssistant

DEEP = "[" * 5000 + "]" * 5000
FORM = "application/x-www-form-urlencoded"


def envelope(event: Any, **extra: Any) -> str:
    return json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                       "event_id": "Ev1", "event_time": 1, "event": event, **extra})


MENTION = {"type": "app_mention", "channel": "C1", "user": "U1", "ts": "1.1", "text": "<@UBOT> hi"}
COMMAND = {"token": "t", "team_id": "T1", "channel_id": "C1", "user_id": "U1", "command": "/gpu",
           "text": "Qwen2-7B LoRA", "response_url": "http://127.0.0.1:9/r", "trigger_id": "9.9.9"}
CLICK = {"type": "block_actions", "user": {"id": "U1"}, "trigger_id": "8.8.8", "channel": {"id": "C1"},
         "actions": [{"action_id": REQUEST_DOC_ACTION, "value": action_value("s", "zh")}]}


def form(**fields: Any) -> str:
    return urlencode(fields)


# (what is wrong, body, content type)
WRONG: list[tuple[str, str, str]] = [
    ("nested 5,000 deep", '{"type":"event_callback","event":' + DEEP + "}", "application/json"),
    ("a list nested 5,000 deep", DEEP, "application/json"),
    ("event a string", envelope("hello"), "application/json"),
    ("event a list", envelope([1, 2]), "application/json"),
    ("event type a number", envelope({"type": 5}), "application/json"),
    ("event without a type", envelope({"channel": "C1"}), "application/json"),
    ("mention without its channel", envelope({k: v for k, v in MENTION.items() if k != "channel"}),
     "application/json"),
    ("mention channel an object", envelope({**MENTION, "channel": {"id": "C1"}}), "application/json"),
    ("mention text a number", envelope({**MENTION, "text": 5}), "application/json"),
    ("no envelope type", json.dumps({"event": MENTION}), "application/json"),
    ("an unknown envelope type", json.dumps({"type": "surprise"}), "application/json"),
    ("challenge an object", json.dumps({"type": "url_verification", "challenge": {"x": 1}}), "application/json"),
    ("event_id a number", envelope(MENTION, event_id=5), "application/json"),
    ("authorizations a string", envelope(MENTION, authorizations="x"), "application/json"),
    ("team_id a list", envelope(MENTION, team_id=[1]), "application/json"),
    ("payload nested 5,000 deep", form(payload=DEEP), FORM),
    ("actions a string", form(payload=json.dumps({**CLICK, "actions": "x"})), FORM),
    ("an action a number", form(payload=json.dumps({**CLICK, "actions": [5]})), FORM),
    ("no actions", form(payload=json.dumps({**CLICK, "actions": []})), FORM),
    ("user a string", form(payload=json.dumps({**CLICK, "user": "U1"})), FORM),
    ("payload without a type", form(payload=json.dumps({"actions": []})), FORM),
    ("command without a channel", form(**{k: v for k, v in COMMAND.items() if k != "channel_id"}), FORM),
    ("command without a trigger id", form(**{k: v for k, v in COMMAND.items() if k != "trigger_id"}), FORM),
    ("command not a slash", form(**{**COMMAND, "command": "gpu"}), FORM),
    ("a form of nothing Slack sends", form(a="1"), FORM),
    ("an empty form", "", FORM),
]


@pytest.mark.parametrize("what, body, content_type", WRONG, ids=[w[0] for w in WRONG])
def test_a_signed_body_of_the_wrong_shape_is_400(slack: SlackHarness, what: str, body: str,
                                                 content_type: str) -> None:
    client = TestClient(slack.app, raise_server_exceptions=False)
    r = client.post(EVENTS_PATH, content=body, headers=signed_headers(body, content_type=content_type))
    assert r.status_code == 400, (r.status_code, r.text[:200])
    error = r.json()["error"]
    assert error["code"] == "bad_request" and error["message"] and error["fix"]
    assert slack.stub.methods() == []


@pytest.mark.parametrize("body, content_type", [
    (envelope(MENTION), "application/json"),  # a mention
    (envelope({"type": "assistant_thread_started", "assistant_thread": {"user_id": "U1", "channel_id": "D1",
                                                                        "thread_ts": "1.1"}}), "application/json"),
    (envelope({"type": "user_change", "user": {"id": "U1"}}), "application/json"),  # another event's object user
    (json.dumps({"type": "url_verification", "challenge": "abc", "token": "t"}), "application/json"),
    (form(**COMMAND), FORM),  # a slash command
    (form(ssl_check="1", token="t"), FORM),  # Slack's ssl_check
])
def test_slacks_own_shapes_pass(slack: SlackHarness, body: str, content_type: str) -> None:
    r = slack.client.post(EVENTS_PATH, content=body, headers=signed_headers(body, content_type=content_type))
    assert r.status_code in (200, 404), r.text[:200]  # 404: Bolt's "unhandled" for an event nobody listens to


def test_a_replayed_slash_command_is_answered_once(slack: SlackHarness, assistant: FakeAssistant) -> None:
    body = form(**COMMAND)
    headers = signed_headers(body, content_type=FORM)  # the same signed bytes, three times
    replies = [slack.client.post(EVENTS_PATH, content=body, headers=headers) for _ in range(3)]
    assert [r.status_code for r in replies] == [200, 200, 200]
    assert assistant.asked == [("Qwen2-7B LoRA", None)]
    assert replies[0].text and replies[1].text == replies[2].text == ""  # the replays get an empty ack
    assert len(slack.stub.to("chat.postMessage")) == 1


def test_a_replayed_click_is_handled_once(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.command("Qwen2-7B LoRA")
    session = next(iter(assistant.sessions))
    click = {**CLICK, "actions": [{"action_id": REQUEST_DOC_ACTION, "value": action_value(session, "zh")}],
             "message": {"ts": "5.5", "thread_ts": "1.1"}}
    body = form(payload=json.dumps(click))
    headers = signed_headers(body, content_type=FORM)
    asked = len(assistant.asked)
    for _ in range(3):
        assert slack.client.post(EVENTS_PATH, content=body, headers=headers).status_code == 200
    assert len(assistant.asked) - asked == 1  # the document asked for once


def test_two_commands_are_two_answers(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.command("Qwen2-7B LoRA")
    slack.command("Qwen2-7B LoRA")  # the same words, a new invocation (its own trigger id)
    assert len(assistant.asked) == 2
