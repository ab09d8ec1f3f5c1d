"""slack/manifest.yaml agrees with the code: the slash command, the events the handlers listen to, one URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from service.slack.app import COMMAND, EVENTS_PATH

MANIFEST = Path(__file__).resolve().parents[2] / "slack" / "manifest.yaml"


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return data


def test_manifest_matches_the_handlers() -> None:
    m = load()
    [command] = m["features"]["slash_commands"]
    assert command["command"] == COMMAND
    settings = m["settings"]
    assert settings["event_subscriptions"]["bot_events"] == ["app_mention", "message.im"]
    assert settings["interactivity"]["is_enabled"] is True
    urls = {command["url"], settings["event_subscriptions"]["request_url"], settings["interactivity"]["request_url"]}
    assert urls == {f"https://YOUR_HOST{EVENTS_PATH}"}
    assert m["features"]["app_home"]["messages_tab_enabled"] is True  # DMs need the Messages tab


def test_manifest_asks_for_the_scopes_the_bot_uses_and_no_more() -> None:
    assert sorted(load()["oauth_config"]["scopes"]["bot"]) == sorted(
        ["app_mentions:read", "chat:write", "im:history", "im:read", "commands", "files:write"])
