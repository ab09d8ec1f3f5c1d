"""POST /slack/events on the API app: signatures (bad or stale -> 401), url_verification, and when it is mounted."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.settings import Settings
from service.slack.app import EVENTS_PATH, mount_slack
from tests.slack.conftest import SECRET, SlackHarness, signed_headers, slack_settings
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import SlackStub

CHALLENGE = json.dumps({"token": "t", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
                        "type": "url_verification"})


def test_url_verification_challenge_is_echoed(slack: SlackHarness) -> None:
    r = slack.post(CHALLENGE)
    assert r.status_code == 200
    assert r.json()["challenge"] == "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"


@pytest.mark.parametrize("headers", [
    signed_headers(CHALLENGE, secret="not-the-secret"),                 # signed with another secret
    signed_headers(CHALLENGE, timestamp=int(time.time()) - 6 * 60),     # stale: older than 5 minutes
    {"Content-Type": "application/json"},                               # not signed at all
    {**signed_headers(CHALLENGE), "X-Slack-Signature": "v0=deadbeef"},  # right timestamp, forged signature
])
def test_bad_or_stale_signature_is_401(slack: SlackHarness, headers: dict[str, str]) -> None:
    r = slack.client.post(EVENTS_PATH, content=CHALLENGE, headers=headers)
    assert r.status_code == 401
    assert slack.stub.methods() == []


def test_tampered_body_is_401(slack: SlackHarness) -> None:
    headers = signed_headers(CHALLENGE)
    r = slack.client.post(EVENTS_PATH, content=CHALLENGE.replace("url_verification", "event_callback"),
                          headers=headers)
    assert r.status_code == 401


def test_valid_signed_event_is_acknowledged(slack: SlackHarness) -> None:
    r = slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "1.1", "text": "<@UBOT> hi"})
    assert r.status_code == 200


@pytest.mark.parametrize("env", [
    {},                                        # neither set
    {"SLACK_SIGNING_SECRET": SECRET},          # no bot token
    {"SLACK_BOT_TOKEN": "xoxb-test"},          # no signing secret
])
def test_not_mounted_without_secret_and_token(tmp_path: Path, env: dict[str, str],
                                              caplog: pytest.LogCaptureFixture) -> None:
    app = FastAPI()
    with caplog.at_level(logging.INFO, logger="service.slack.app"):
        assert mount_slack(app, Settings(data_dir=tmp_path, **env), FakeAssistant()) is False  # type: ignore[arg-type]
    assert "Slack bot not mounted" in caplog.text
    assert TestClient(app).post(EVENTS_PATH, content="{}").status_code == 404


def test_mount_makes_no_network_call(tmp_path: Path, stub: SlackStub) -> None:
    # auth.test runs on the first request, not when the API app is built
    from slack_sdk import WebClient

    app = FastAPI()
    assert mount_slack(app, slack_settings(tmp_path), FakeAssistant(),
                       client=WebClient(token="xoxb-test", base_url=stub.url))
    assert stub.calls == []
    assert any(getattr(r, "path", "") == EVENTS_PATH for r in app.routes)


def test_assistant_may_be_given_as_a_provider(tmp_path: Path, stub: SlackStub) -> None:
    # the API passes resources.assistant.get: the assistant is built on the first Slack message, not at mount
    from slack_sdk import WebClient

    from tests.slack.conftest import InlineExecutor

    built: list[FakeAssistant] = []

    def provider() -> FakeAssistant:
        built.append(FakeAssistant())
        return built[-1]

    app = FastAPI()
    assert mount_slack(app, slack_settings(tmp_path), provider, client=WebClient(token="xoxb-test", base_url=stub.url),
                       listener_executor=InlineExecutor())
    assert built == []
    harness = SlackHarness(app, stub)
    harness.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "1.1", "text": "<@UBOT> Qwen2-7B LoRA"})
    assert built and built[0].asked == [("Qwen2-7B LoRA", None)]


TRUNCATED = '{"type": "event_callback", "event_id": '


@pytest.mark.parametrize(("body", "headers"), [
    (TRUNCATED, {"Content-Type": "application/json"}),                                       # truncated, unsigned
    (TRUNCATED, {**signed_headers(TRUNCATED), "X-Slack-Signature": "v0=00"}),                # truncated, forged
    ("{}", {**signed_headers("{}"), "X-Slack-Request-Timestamp": "abc"}),                    # timestamp "abc"
    ("{}", {**signed_headers("{}"), "X-Slack-Request-Timestamp": "-1e9"}),                  # not digits
    (b"\xff\xfe\x00garbage", {"Content-Type": "application/json", "X-Slack-Signature": "v0=1",
                              "X-Slack-Request-Timestamp": str(int(time.time()))}),          # non-UTF-8, unsigned
    ("payload=%7Bnot-json", {"Content-Type": "application/x-www-form-urlencoded"}),         # bad form, unsigned
])
def test_garbled_unsigned_posts_are_401_in_our_shape(slack: SlackHarness, body: str | bytes,
                                                     headers: dict[str, str]) -> None:
    r = slack.client.post(EVENTS_PATH, content=body, headers=headers)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "unauthorized" and r.json()["error"]["fix"]
    assert slack.stub.methods() == []


@pytest.mark.parametrize(("body", "content_type"), [
    (TRUNCATED, "application/json"),
    ("[1, 2]", "application/json"),
    ("payload=%7Bnot-json", "application/x-www-form-urlencoded"),
])
def test_garbled_but_signed_posts_are_400_not_500(slack: SlackHarness, body: str, content_type: str) -> None:
    r = slack.client.post(EVENTS_PATH, content=body, headers=signed_headers(body, content_type=content_type))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "bad_request"


def test_non_utf8_signed_body_is_400(slack: SlackHarness) -> None:
    from service.slack.verify import signature

    body, ts = b"\xff\xfe{garbage", str(int(time.time()))
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts,
               "X-Slack-Signature": signature(SECRET, ts, body)}
    r = slack.client.post(EVENTS_PATH, content=body, headers=headers)
    assert r.status_code == 400 and "UTF-8" in r.json()["error"]["message"]


def test_oversized_body_is_413_before_verification(slack: SlackHarness) -> None:
    body = '{"a": "' + "x" * (10 << 20) + '"}'
    r = slack.client.post(EVENTS_PATH, content=body, headers=signed_headers(body))
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"


def test_oversized_chunked_body_is_413(slack: SlackHarness) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap applies as the bytes arrive
        for _ in range(20):
            yield b"x" * (100 << 10)

    r = slack.client.post(EVENTS_PATH, content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
