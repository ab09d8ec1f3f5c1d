"""Issue 40 item 4: Slack when Slack is down. The slash command's own HTTP response carries the answer's first lines
(privately), so the user sees the answer whatever happens to the Web API later; tested with slack.com unreachable (the
Web API client pointed at a closed port). A slow answer is acknowledged in time with a line saying it is coming.

Regression: the ack was empty and every answer went through the Web API, so with slack.com out of reach a user who
typed `/gpu …` saw nothing."""

from __future__ import annotations

import time
from pathlib import Path

from service.slack.command_reply import PREVIEW_CHARS, preview
from service.slack.delivery import SlackDelivery
from tests.slack.conftest import build_harness
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import SlackStub
from tests.slack.test_unreachable import ACK_LIMIT_S, unreachable_harness, wait_for


def test_the_answer_reaches_the_user_when_slack_is_unreachable(tmp_path: Path) -> None:
    delivery = SlackDelivery(retries=0, backoff_s=0.01)
    slack = unreachable_harness(tmp_path, delivery)
    slack.command("你好")  # the app's first request starts Bolt and its pools: not what a user waits for later
    started = time.monotonic()
    r = slack.command("用Qwen2-7B做问答微调")
    assert r.status_code == 200 and time.monotonic() - started < ACK_LIMIT_S
    reply = r.json()
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].splitlines()[0] == "\u200b*推荐配置：Qwen2-7B*\u200b"  # the answer's first line
    assert "30.12 GiB" in reply["blocks"][0]["text"]["text"]
    assert wait_for(lambda: delivery.failures >= 1)  # the thread could not be posted; the user has the answer


def test_a_slow_answer_is_acknowledged_in_time_and_follows(tmp_path: Path) -> None:
    stub = SlackStub().start()
    try:
        slack = build_harness(tmp_path, stub, FakeAssistant(delay_s=3.5), threaded=True)
        started = time.monotonic()
        r = slack.command("用Qwen2-7B做问答微调")
        assert time.monotonic() - started < 3.0 and "正在计算" in r.json()["text"]
        stub.wait_for("chat.stopStream", timeout_s=15)  # then the answer in its thread, asked once
        assert "30.12 GiB" in stub.streamed()
    finally:
        stub.stop()


def test_a_long_answer_shows_its_first_lines() -> None:
    from service.assistant.types import AskResult

    long = AskResult(session_id="s", answer_markdown="不能。第一行就是答案。\n" + "\n".join(f"第 {i} 行" for i in range(100)),
                     language="zh", backend="offline")
    text = preview(long)
    assert text.startswith("不能。第一行就是答案。") and text.endswith("…") and len(text) <= PREVIEW_CHARS + 2
