"""Slack fixtures: the loopback Web API stub, settings on a tmp data dir, and a harness that sends signed
requests (events, slash commands, button clicks) to POST /slack/events on the API app."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from service.app import create_app
from service.settings import Settings
from service.slack.app import EVENTS_PATH, mount_slack
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import BOT_USER_ID, SlackStub

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test"
ENV = ("SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN")


class InlineExecutor(Executor):
    """Runs Bolt's lazy listeners in the request's own thread, so a test sees their effects when the POST returns."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # pragma: no cover - Bolt catches listener errors itself
            future.set_exception(exc)
        return future


def slack_settings(data_dir: Path, **overrides: str) -> Settings:
    values = {"SLACK_SIGNING_SECRET": SECRET, "SLACK_BOT_TOKEN": BOT_TOKEN, **overrides}
    return Settings(data_dir=data_dir, **values)  # type: ignore[arg-type]


def signed_headers(body: str, *, secret: str = SECRET, timestamp: int | None = None,
                   content_type: str = "application/json") -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    return {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": SignatureVerifier(secret).generate_signature(timestamp=ts, body=body) or ""}


@pytest.fixture(autouse=True)
def _no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub() -> Iterator[SlackStub]:
    s = SlackStub().start()
    yield s
    s.stop()


@pytest.fixture
def assistant() -> FakeAssistant:
    return FakeAssistant()


class SlackHarness:
    """The API app with the bot mounted, and helpers that sign what they send."""

    def __init__(self, app: FastAPI, stub: SlackStub) -> None:
        self.app, self.stub = app, stub
        self.client = TestClient(app)
        self._n = 0

    def _trigger(self) -> str:
        """A new trigger id per command or click, as Slack makes one (a replay repeats it)."""
        self._n += 1
        return f"{self._n}.2.3"

    def post(self, body: str, content_type: str = "application/json", **headers: str) -> Any:
        return self.client.post(EVENTS_PATH, content=body,
                                headers={**signed_headers(body, content_type=content_type), **headers})

    def event(self, event: dict[str, Any], *, event_id: str | None = None, **headers: str) -> Any:
        self._n += 1
        body = {"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                "event_id": event_id or f"Ev{self._n:04d}", "event_time": int(time.time()), "event": event,
                "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}]}
        return self.post(json.dumps(body), **headers)

    def command(self, text: str, *, channel: str = "C1", user: str = "U1", command: str = "/gpu") -> Any:
        form = {"token": "t", "team_id": "T1", "channel_id": channel, "user_id": user, "command": command,
                "text": text, "response_url": f"{self.stub.url}response/1", "trigger_id": self._trigger()}
        return self.post(urlencode(form), "application/x-www-form-urlencoded")

    def click(self, action: dict[str, Any], message: dict[str, Any] | None, *, channel: str = "C1",
              user: str = "U1") -> Any:
        payload: dict[str, Any] = {
            "type": "block_actions", "team": {"id": "T1"}, "user": {"id": user}, "api_app_id": "A1",
            "channel": {"id": channel}, "container": {"type": "message", "channel_id": channel},
            "response_url": f"{self.stub.url}response/2", "trigger_id": self._trigger(), "actions": [action]}
        if message is not None:
            payload["message"] = message
        return self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")


def build_harness(tmp_path: Path, stub: SlackStub, assistant: Any, *, threaded: bool = False) -> SlackHarness:
    """threaded=False runs the lazy listeners inline (deterministic); True uses Bolt's thread pool, as deployed."""
    # The call create_app makes, with the API's shared (lazily built) assistant; the API's own settings carry no
    # Slack secrets, so this explicit mount with the stub client is the only one.
    app = create_app(Settings(data_dir=tmp_path / "api"), assistant)
    mounted = mount_slack(app, slack_settings(tmp_path / "data"), app.state.resources.assistant.get,
                          client=WebClient(token=BOT_TOKEN, base_url=stub.url),
                          listener_executor=None if threaded else InlineExecutor())
    assert mounted
    return SlackHarness(app, stub)


@pytest.fixture
def slack(tmp_path: Path, stub: SlackStub, assistant: FakeAssistant) -> SlackHarness:
    return build_harness(tmp_path, stub, assistant)
