"""Socket Mode (unsigned payloads over the socket) and `gpu-advisor slack`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from slack_bolt import BoltRequest
from slack_sdk import WebClient
from typer.testing import CliRunner

from service.cli.slack_cmd import register
from service.errors import InvalidInputError
from service.settings import Settings, get_settings
from service.slack.app import build_slack_app
from service.slack.socket import run_socket_mode
from tests.slack.conftest import InlineExecutor, slack_settings
from tests.slack.fakes import FakeAssistant
from tests.slack.stub import SlackStub

EVENT = {"type": "event_callback", "team_id": "T1", "event_id": "EvS1", "event": {
    "type": "app_mention", "channel": "C1", "user": "U1", "ts": "5.1", "text": "<@UBOT> Qwen2-7B LoRA"}}


class FakeSocketHandler:
    started: list[tuple[Any, str]] = []

    def __init__(self, app: Any, app_token: str) -> None:
        self.app, self.token = app, app_token

    def start(self) -> None:
        FakeSocketHandler.started.append((self.app, self.token))


def test_run_socket_mode_connects_with_the_app_token(tmp_path: Path) -> None:
    FakeSocketHandler.started.clear()
    settings = slack_settings(tmp_path, SLACK_APP_TOKEN="xapp-1-test", SLACK_SIGNING_SECRET="")
    run_socket_mode(settings, FakeAssistant(), handler_factory=FakeSocketHandler)
    [(app, token)] = FakeSocketHandler.started
    assert token == "xapp-1-test" and app.name == "gpu-advisor"


@pytest.mark.parametrize("overrides, message", [
    ({}, "SLACK_APP_TOKEN is not set"),                                      # no app token
    ({"SLACK_APP_TOKEN": "xoxb-wrong-kind"}, "app-level token"),             # a bot token in its place
    ({"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": ""}, "SLACK_BOT_TOKEN"),
])
def test_socket_mode_settings_are_checked(tmp_path: Path, overrides: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        run_socket_mode(slack_settings(tmp_path, **overrides), FakeAssistant(), handler_factory=FakeSocketHandler)


def test_socket_mode_payloads_need_no_signature(tmp_path: Path, stub: SlackStub) -> None:
    assistant = FakeAssistant()
    app = build_slack_app(slack_settings(tmp_path, SLACK_SIGNING_SECRET=""), assistant, socket_mode=True,
                          client=WebClient(token="xoxb-test", base_url=stub.url), listener_executor=InlineExecutor())
    response = app.dispatch(BoltRequest(body=json.dumps(EVENT), mode="socket_mode"))
    assert response.status == 200
    assert stub.methods() == ["assistant.threads.setStatus", "chat.startStream", "chat.stopStream"]
    assert assistant.asked == [("Qwen2-7B LoRA", None)]


def test_http_mode_still_requires_the_signature(tmp_path: Path, stub: SlackStub) -> None:
    app = build_slack_app(slack_settings(tmp_path), FakeAssistant(),
                          client=WebClient(token="xoxb-test", base_url=stub.url))
    assert app.dispatch(BoltRequest(body=json.dumps(EVENT))).status == 401


def test_http_mode_requires_a_signing_secret(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="SLACK_SIGNING_SECRET"):
        build_slack_app(slack_settings(tmp_path, SLACK_SIGNING_SECRET=""), FakeAssistant())


# -- CLI ----------------------------------------------------------------------------------------------------
@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[typer.Typer]:
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    app = typer.Typer()
    app.command()(lambda: None)  # a second command, so typer keeps `slack` as a subcommand
    register(app)
    yield app
    get_settings.cache_clear()


def test_slack_command_reports_the_settings(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    out = CliRunner().invoke(cli, ["slack"])
    assert out.exit_code == 0, out.output
    assert "SLACK_BOT_TOKEN        set" in out.output and "SLACK_APP_TOKEN        not set" in out.output
    assert "/slack/events" in out.output


def test_socket_flag_without_app_token_fails_in_one_line(cli: typer.Typer) -> None:
    out = CliRunner().invoke(cli, ["slack", "--socket"])
    assert out.exit_code == 2
    assert "error: SLACK_APP_TOKEN is not set." in out.output


def test_socket_flag_runs_socket_mode(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    fake = FakeAssistant()
    ran: list[tuple[Settings, Any]] = []
    factories: list[Any] = []
    monkeypatch.setattr("service.assistant.service.build_assistant",
                        lambda settings, retriever_factory=None: factories.append(retriever_factory) or fake)
    monkeypatch.setattr("service.slack.socket.run_socket_mode", lambda settings, a: ran.append((settings, a)))
    out = CliRunner().invoke(cli, ["slack", "--socket"])
    assert out.exit_code == 0, out.output
    assert ran and ran[0][1] is fake and ran[0][0].slack_app_token == "xapp-1"
    assert factories and callable(factories[0])  # a long-running bot builds its index in the background
