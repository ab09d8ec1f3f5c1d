"""Slack's AI app panel through Bolt's Assistant middleware, against the loopback Web API stub: a thread starts with
suggested prompts and a greeting in the user's language; a message in it gets the thinking status, a streamed answer
with its card and feedback, and the thread a title after the first answer."""

from __future__ import annotations

from typing import Any

import pytest

from service.slack.panel import SUGGESTED
from tests.slack.conftest import SlackHarness
from tests.slack.fakes import FakeAssistant
from tests.slack.test_events import assert_valid_blocks

THREAD = {"channel_id": "D9", "thread_ts": "80.1", "user_id": "U1",
          "context": {"channel_id": "C1", "team_id": "T1", "enterprise_id": None}}


def started(user: str = "U1") -> dict[str, Any]:
    return {"type": "assistant_thread_started", "assistant_thread": {**THREAD, "user_id": user}, "event_ts": "80.2"}


def in_thread(text: str, ts: str = "80.3") -> dict[str, Any]:
    return {"type": "message", "channel": "D9", "channel_type": "im", "user": "U1", "text": text, "ts": ts,
            "thread_ts": "80.1", "team": "T1"}


@pytest.mark.parametrize(("locale", "lang", "hello"), [
    ("zh-CN", "zh", "你好"),
    ("en-US", "en", "Hi!"),
    ("", "zh", "你好"),  # Slack does not say (no users:read on an older install): Chinese, the users' usual language
])
def test_a_new_thread_gets_prompts_and_a_greeting_in_the_users_language(slack: SlackHarness, locale: str, lang: str,
                                                                        hello: str) -> None:
    slack.stub.locales["U1"] = locale
    assert slack.event(started()).status_code == 200
    [info] = slack.stub.to("users.info")
    assert info["user"] == "U1" and info["include_locale"] in (True, "true", "1")
    [prompts] = slack.stub.to("assistant.threads.setSuggestedPrompts")
    assert prompts["channel_id"] == "D9" and prompts["thread_ts"] == "80.1"
    assert prompts["prompts"] == SUGGESTED[lang]
    [greeting] = slack.stub.to("chat.postMessage")
    assert greeting["thread_ts"] == "80.1" and greeting["text"].startswith(hello)


def test_the_users_language_is_asked_once(slack: SlackHarness) -> None:
    slack.stub.locales["U1"] = "en-US"
    slack.event(started())
    slack.event({**started(), "assistant_thread": {**THREAD, "thread_ts": "81.1"}})
    assert len(slack.stub.to("users.info")) == 1
    assert [p["prompts"] for p in slack.stub.to("assistant.threads.setSuggestedPrompts")] == [SUGGESTED["en"]] * 2


def test_a_message_in_the_panel_is_answered_streamed_and_the_thread_titled(slack: SlackHarness,
                                                                          assistant: FakeAssistant) -> None:
    slack.event(in_thread("用Qwen2-7B做问答微调，预算月均¥3000"))
    [status] = slack.stub.to("assistant.threads.setStatus")
    assert status["channel_id"] == "D9" and status["thread_ts"] == "80.1" and status["status"] == "正在计算…"
    [start] = slack.stub.to("chat.startStream")
    assert start["channel"] == "D9" and start["thread_ts"] == "80.1"
    assert "30.12 GiB" in slack.stub.streamed()
    blocks = slack.stub.to("chat.stopStream")[0]["blocks"]
    assert_valid_blocks(blocks)
    assert blocks[-1]["type"] == "context_actions" and blocks[-1]["elements"][0]["type"] == "feedback_buttons"
    [title] = slack.stub.to("assistant.threads.setTitle")
    assert title["channel_id"] == "D9" and title["thread_ts"] == "80.1"
    assert title["title"] == "Qwen2-7B · LoRA 训练配置"
    # the follow-up continues the session; the title stays
    slack.event(in_thread("预算改成每月¥2000", ts="80.4"))
    [session] = assistant.sessions
    assert assistant.asked[-1] == ("预算改成每月¥2000", session)
    assert len(slack.stub.to("assistant.threads.setTitle")) == 1


def test_context_changes_cost_no_web_api_call(slack: SlackHarness) -> None:
    # Bolt's default listener would read the thread (conversations.replies) and rewrite our first reply to store
    # the context; the bot uses no thread context, so it only acknowledges
    event = {"type": "assistant_thread_context_changed", "assistant_thread": THREAD, "event_ts": "80.5"}
    assert slack.event(event).status_code == 200
    assert slack.stub.methods() == []


def test_the_bots_own_streamed_reply_is_not_answered(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event({**in_thread("answer text"), "user": "UBOT", "bot_id": "BBOT"})
    assert assistant.asked == [] and slack.stub.methods() == []
