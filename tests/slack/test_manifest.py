"""slack/manifest.yaml agrees with the code: the slash command, the events the handlers listen to (the AI app
panel's included), one URL, the scopes the bot uses and no more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from service.slack.app import COMMAND, COMMANDS, EVENTS_PATH
from service.slack.panel import SUGGESTED

MANIFEST = Path(__file__).resolve().parents[2] / "slack" / "manifest.yaml"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "slack.md"


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return data


def test_manifest_matches_the_handlers() -> None:
    m = load()
    [command] = m["features"]["slash_commands"]
    assert command["command"] == COMMAND == "/gpu" and COMMAND in COMMANDS
    settings = m["settings"]
    assert settings["event_subscriptions"]["bot_events"] == ["app_mention", "assistant_thread_started",
                                                             "assistant_thread_context_changed", "message.im"]
    assert settings["interactivity"]["is_enabled"] is True
    urls = {command["url"], settings["event_subscriptions"]["request_url"], settings["interactivity"]["request_url"]}
    assert urls == {f"https://YOUR_HOST{EVENTS_PATH}"}
    assert m["features"]["app_home"]["messages_tab_enabled"] is True  # DMs need the Messages tab
    assert m["features"]["assistant_view"]["assistant_description"]  # the AI app panel


def test_manifest_asks_for_the_scopes_the_bot_uses_and_no_more() -> None:
    assert sorted(load()["oauth_config"]["scopes"]["bot"]) == sorted(
        ["app_mentions:read", "assistant:write", "chat:write", "im:history", "im:read", "commands", "files:write",
         "users:read"])


def test_suggested_prompts_fit_slack_limits() -> None:
    for lang, prompts in SUGGESTED.items():
        assert 1 <= len(prompts) <= 4, lang  # Slack shows at most four
        assert all(p["title"] and p["message"] for p in prompts)


def test_the_docs_show_the_manifest_as_it_is() -> None:
    # docs/slack.md quotes the manifest: the two must not drift apart
    assert MANIFEST.read_text(encoding="utf-8").strip() in DOCS.read_text(encoding="utf-8")
