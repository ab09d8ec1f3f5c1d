"""Slack's Web API out of reach (an egress-restricted network): every request is still acknowledged in time, the
failure to post is logged once with its cause and the fix, delivery is retried, and /readyz says so.

Regression: every event, slash command and button got HTTP 500 with an empty body (Bolt's auth.test on the first
request raised URLError), one traceback per request, so Slack retried and showed dispatch_failed."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from slack_sdk import WebClient

from service.app import create_app
from service.catalog.loader import load_catalog
from service.settings import Settings
from service.slack.app import mount_slack
from service.slack.blocks import REQUEST_DOC_ACTION, action_value
from service.slack.delivery import FIX, SlackDelivery
from tests.api.fakes import FakeRetriever
from tests.slack.conftest import BOT_TOKEN, SlackHarness, slack_settings
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import SlackStub

# An ack that waited on the unreachable Web API (its timeout, retries and backoff) or on the answer would take far
# longer; a warm ack takes milliseconds (scripts/bench_slack_ack.py prints it against Slack's 3 s). A bound this far
# from both tells them apart on a loaded machine, where a 3 s wall-clock deadline failed CI on its own.
HUNG_ACK_S = 10.0


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released): connections to it are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unreachable_harness(tmp_path: Path, delivery: SlackDelivery) -> SlackHarness:
    settings = Settings(data_dir=tmp_path / "api")
    catalog = load_catalog(settings.knowledge_dir, settings.catalog_overlay_dir, None)
    app = create_app(settings, FakeAssistant(), catalog=catalog, retriever=FakeRetriever())
    client = WebClient(token=BOT_TOKEN, base_url=f"http://127.0.0.1:{closed_port()}/api/")
    assert mount_slack(app, slack_settings(tmp_path / "data"), app.state.resources.assistant.get, client=client,
                       delivery=delivery)  # Bolt's own thread pool runs the listeners, as deployed
    harness = SlackHarness(app, SlackStub())  # the stub is never started: only its URL for response_url
    harness.client = TestClient(app, raise_server_exceptions=False)
    return harness


def wait_for(predicate: object, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        time.sleep(0.05)
    return False


def test_every_request_is_acked_in_time_when_slack_is_unreachable(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    delivery = SlackDelivery(retries=2, backoff_s=0.01)
    slack = unreachable_harness(tmp_path, delivery)
    sends = [
        lambda: slack.event({"type": "app_mention", "channel": "C1", "user": "U1", "ts": "1.1",
                             "text": "<@UBOT> Qwen2-7B LoRA"}),
        lambda: slack.command("Qwen2-7B LoRA"),
        lambda: slack.click({"action_id": REQUEST_DOC_ACTION, "value": action_value("s1", "zh")},
                            {"ts": "5.5", "thread_ts": "1.1"}),
    ]
    with caplog.at_level(logging.INFO):
        for send in sends:
            started = time.monotonic()
            r = send()
            elapsed = time.monotonic() - started
            assert r.status_code == 200, (r.status_code, r.text)
            assert elapsed < HUNG_ACK_S, elapsed
        assert wait_for(lambda: delivery.failures >= 3), delivery.state()

    failing = [r for r in caplog.records if "Slack delivery is failing" in r.getMessage()]
    assert len(failing) == 1, [r.getMessage() for r in caplog.records]  # logged once, not once per request
    assert FIX in failing[0].getMessage() and "Connection refused" in failing[0].getMessage()
    assert not any(r.exc_info for r in caplog.records if r.name.startswith(("service.slack", "slack")))
    assert not any("Failed to send a request to Slack API server" in r.getMessage() for r in caplog.records)
    assert delivery.attempts >= 3 * 3  # each call tried 1 + 2 times (backoff) before it counts as failed

    r = slack.client.get("/readyz")
    ready = r.json()
    assert r.status_code == 200 and ready["status"] == "degraded"  # the API still answers without Slack
    assert ready["components"]["slack"].startswith("failing: ")
    assert any(d.startswith("slack: failing") and "slack.com" in d for d in ready["degraded"])


def test_delivery_recovers_when_slack_answers_again(caplog: pytest.LogCaptureFixture) -> None:
    delivery = SlackDelivery(retries=0, backoff_s=0.0)
    with caplog.at_level(logging.INFO, logger="service.slack.delivery"):
        delivery.failed(ConnectionRefusedError(111, "Connection refused"))
        delivery.failed(ConnectionRefusedError(111, "Connection refused"))
        assert delivery.state().startswith("failing: ")
        delivery.succeeded()
    assert delivery.state() == "ready"
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]  # one warning, one "recovered"
