"""Socket Mode: the bot opens a WebSocket to Slack (apps.connections.open) instead of receiving HTTP requests.

No public URL is needed; it needs an app-level token (xapp-…, scope connections:write) and the bot token. The
signing secret is not used: payloads arrive over the authenticated socket, not as signed HTTP requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.assistant.types import AssistantProtocol
from service.errors import InvalidInputError
from service.settings import Settings
from service.slack.app import build_slack_app
from service.slack.handlers import AssistantProvider


def check_socket_settings(settings: Settings) -> None:
    if not settings.slack_app_token.startswith("xapp-"):
        raise InvalidInputError(
            "SLACK_APP_TOKEN is not set to an app-level token (xapp-…)." if settings.slack_app_token
            else "SLACK_APP_TOKEN is not set.",
            "Create one under Basic Information > App-Level Tokens with the connections:write scope.")
    if not settings.slack_bot_token:
        raise InvalidInputError("SLACK_BOT_TOKEN is not set.",
                                "Install the app to the workspace and copy the Bot User OAuth Token (xoxb-…).")


def run_socket_mode(settings: Settings, assistant: AssistantProtocol | AssistantProvider, *,
                    handler_factory: Callable[[Any, str], Any] | None = None) -> None:
    """Connect and serve until interrupted. `handler_factory(app, app_token)` replaces Bolt's SocketModeHandler
    in tests."""
    check_socket_settings(settings)
    app = build_slack_app(settings, assistant, socket_mode=True)
    if handler_factory is None:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        handler_factory = SocketModeHandler
    handler_factory(app, settings.slack_app_token).start()
