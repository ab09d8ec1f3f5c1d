"""The event flow against the loopback Web API stub: mentions and DMs answered in the thread (thinking, then
chat.update), retries dropped, bots ignored, failures reported kindly, a thread kept as one session."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from service.errors import InvalidInputError
from tests.slack.conftest import SlackHarness, build_harness
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import BOT_ID, SlackStub


def mention(text: str = "<@UBOT> 用Qwen2-7B做问答微调，预算月均¥3000", ts: str = "1700000000.000100",
            thread_ts: str | None = None, channel: str = "C1") -> dict[str, Any]:
    event = {"type": "app_mention", "channel": channel, "user": "U1", "ts": ts, "text": text}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def dm(text: str, ts: str = "1700000000.000200", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "ts": ts, "text": text, **extra}


def assert_valid_blocks(blocks: list[dict[str, Any]]) -> None:
    assert 0 < len(blocks) <= 50
    for b in blocks:
        parsed = Block.parse(b)
        assert parsed is not None, b
        parsed.validate_json()


def test_mention_posts_thinking_then_updates_it_with_the_answer(slack: SlackHarness, assistant: FakeAssistant) -> None:
    assert slack.event(mention()).status_code == 200
    assert slack.stub.methods() == ["chat.postMessage", "chat.update"]
    [thinking] = slack.stub.to("chat.postMessage")
    assert thinking.items() >= {"channel": "C1", "thread_ts": "1700000000.000100", "text": "🤔 正在计算…"}.items()
    [update] = slack.stub.to("chat.update")
    assert update["channel"] == "C1" and update["ts"] == "2000000000.000001"  # the thinking message
    assert "30.12 GiB" in update["text"]
    assert_valid_blocks(update["blocks"])
    assert [b["type"] for b in update["blocks"]][:3] == ["header", "section", "table"]
    assert assistant.asked == [("用Qwen2-7B做问答微调，预算月均¥3000", None)]  # the mention is stripped


def test_english_message_gets_english_thinking(slack: SlackHarness) -> None:
    slack.event(mention("<@UBOT> LoRA fine-tune Qwen2-7B, budget 3000 a month"))
    assert slack.stub.to("chat.postMessage")[0]["text"] == "🤔 Thinking…"
    assert "GPU recommendation" in slack.stub.to("chat.update")[0]["blocks"][0]["text"]["text"]


def test_ack_comes_before_the_answer(tmp_path: Path, stub: SlackStub) -> None:
    # Bolt's own thread pool, as deployed: the HTTP 200 must not wait for a slow assistant (Slack's 3-second rule)
    harness = build_harness(tmp_path, stub, FakeAssistant(delay_s=1.5), threaded=True)
    start = time.monotonic()
    assert harness.event(mention()).status_code == 200
    acked_s = time.monotonic() - start
    assert acked_s < 1.0, acked_s
    stub.wait_for("chat.postMessage")
    assert stub.to("chat.update") == []  # still thinking
    stub.wait_for("chat.update")
    assert time.monotonic() - start >= 1.5


def test_retry_of_the_same_event_is_answered_once(slack: SlackHarness, assistant: FakeAssistant) -> None:
    assert slack.event(mention(), event_id="Ev42").status_code == 200
    r = slack.event(mention(), event_id="Ev42", **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert r.status_code == 200
    assert len(slack.stub.to("chat.postMessage")) == 1
    assert len(assistant.asked) == 1


def test_dedup_survives_a_restart(tmp_path: Path, stub: SlackStub, assistant: FakeAssistant) -> None:
    build_harness(tmp_path, stub, assistant).event(mention(), event_id="Ev7")
    build_harness(tmp_path, stub, assistant).event(mention(), event_id="Ev7", **{"X-Slack-Retry-Num": "2"})
    assert len(assistant.asked) == 1


@pytest.mark.parametrize("event", [
    dm("hello from me", bot_id=BOT_ID, user="UBOT"),                     # our own message (Bolt's self filter)
    dm("hello from a bot", bot_id="BOTHER", subtype="bot_message"),       # another bot: no bot-to-bot loops
    dm("edited", subtype="message_changed"),                              # edits and deletions
    {**mention(), "bot_id": "BOTHER"},                                    # a bot mentioning us
])
def test_bot_messages_are_ignored(slack: SlackHarness, assistant: FakeAssistant, event: dict[str, Any]) -> None:
    assert slack.event(event).status_code == 200
    assert slack.stub.methods() == []
    assert assistant.asked == []


def test_direct_message_is_answered_in_its_thread(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event(dm("Qwen2-7B LoRA, 100k samples"))
    [thinking] = slack.stub.to("chat.postMessage")
    assert thinking["channel"] == "D1" and thinking["thread_ts"] == "1700000000.000200"
    assert len(slack.stub.to("chat.update")) == 1
    assert assistant.asked == [("Qwen2-7B LoRA, 100k samples", None)]


def test_message_in_a_channel_is_not_a_dm(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event({**dm("hi"), "channel_type": "channel", "channel": "C9"})
    assert assistant.asked == []


def test_follow_up_in_the_thread_reuses_the_session(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event(mention(ts="10.1"))
    slack.event(mention("<@UBOT> 预算改成每月¥2000", ts="10.2", thread_ts="10.1"))
    slack.event(mention("<@UBOT> another question", ts="11.1"))  # a new thread: a new session
    first, second, third = assistant.asked
    assert first[1] is None and third[1] is None
    assert second == ("预算改成每月¥2000", next(iter(assistant.sessions)))
    assert slack.stub.to("chat.postMessage")[1]["thread_ts"] == "10.1"


def test_thread_session_survives_a_restart(tmp_path: Path, stub: SlackStub, assistant: FakeAssistant) -> None:
    build_harness(tmp_path, stub, assistant).event(mention(ts="10.1"), event_id="EvA")
    build_harness(tmp_path, stub, assistant).event(mention("<@UBOT> 换成京东云", ts="10.2", thread_ts="10.1"),
                                                   event_id="EvB")
    [session] = assistant.sessions
    assert assistant.asked == [("用Qwen2-7B做问答微调，预算月均¥3000", None), ("换成京东云", session)]


def test_unknown_session_starts_a_new_one(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event(mention(ts="10.1"))
    assistant.sessions.clear()  # e.g. the data dir's sessions were wiped
    slack.event(mention("<@UBOT> 继续", ts="10.2", thread_ts="10.1"))
    assert assistant.asked[1] == ("继续", None)
    assert len(slack.stub.to("chat.update")) == 2


def test_assistant_failure_gives_a_friendly_message_and_logs_the_traceback(
        slack: SlackHarness, assistant: FakeAssistant, caplog: pytest.LogCaptureFixture) -> None:
    assistant.fail_with = RuntimeError("model exploded")
    with caplog.at_level(logging.ERROR, logger="service.slack.handlers"):
        assert slack.event(mention()).status_code == 200
    [update] = slack.stub.to("chat.update")
    assert "抱歉" in update["text"] and "model exploded" not in update["text"]
    assert_valid_blocks(update["blocks"])
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.exc_info is not None and "model exploded" in str(record.exc_info[1])


def test_user_facing_error_says_what_to_fix(slack: SlackHarness, assistant: FakeAssistant) -> None:
    assistant.fail_with = InvalidInputError("The message has 5000 characters; the limit is 4000.", "Shorten it.")
    slack.event(mention("<@UBOT> too long"))
    text = slack.stub.to("chat.update")[0]["text"]
    assert "limit is 4000" in text and "Shorten it." in text


def test_table_block_refused_falls_back_to_text_table(slack: SlackHarness) -> None:
    # Slack's table block has usage limits we cannot test offline: if chat.update refuses it, resend without it
    slack.stub.reject(lambda c: "invalid_blocks" if c.method == "chat.update" and any(
        b.get("type") == "table" for b in c.args.get("blocks", [])) else None)
    slack.event(mention())
    first, second = slack.stub.to("chat.update")
    assert "table" in [b["type"] for b in first["blocks"]]
    assert "table" not in [b["type"] for b in second["blocks"]]
    assert "GT4.4XLARGE96" in str(second["blocks"])


def test_mention_without_a_question_gets_the_usage(slack: SlackHarness, assistant: FakeAssistant) -> None:
    slack.event(mention("<@UBOT>"))
    [msg] = slack.stub.to("chat.postMessage")
    assert "/gpu-advisor" in msg["text"] and msg["thread_ts"] == "1700000000.000100"
    assert assistant.asked == []


def test_asking_for_the_document_in_the_message_uploads_it(slack: SlackHarness) -> None:
    slack.event(mention("<@UBOT> Qwen2-7B LoRA，生成申请说明"))
    [complete] = slack.stub.to("files.completeUploadExternal")
    assert complete["thread_ts"] == "1700000000.000100" and complete["channel_id"] == "C1"
