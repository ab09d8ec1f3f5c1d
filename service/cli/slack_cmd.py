"""`gpu-advisor slack`: check the Slack settings, or run the bot over Socket Mode (`--socket`)."""

from __future__ import annotations

from typing import Annotated

import typer

from service.cli.common import guarded

EVENTS_HINT = "HTTP mode: `gpu-advisor serve` answers Slack at POST /slack/events (Request URL https://<host>/slack/events)."


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def slack(
        socket: Annotated[bool, typer.Option("--socket", help="connect to Slack over Socket Mode (needs SLACK_APP_TOKEN)")]
        = False,
    ) -> None:
        """Run the Slack bot over Socket Mode (--socket), or show which Slack settings are present."""
        from service.settings import get_settings

        settings = get_settings()
        if not socket:
            for name, value in (("SLACK_BOT_TOKEN", settings.slack_bot_token),
                                ("SLACK_SIGNING_SECRET", settings.slack_signing_secret),
                                ("SLACK_APP_TOKEN", settings.slack_app_token)):
                typer.echo(f"{name:22} {'set' if value else 'not set'}")
            typer.echo(EVENTS_HINT)
            typer.echo("Socket Mode: `gpu-advisor slack --socket` (bot token + app token). See docs/slack.md.")
            return
        import logging

        from service.assistant.service import build_assistant
        from service.retrieval.config import RetrievalConfig
        from service.retrieval.hybrid import Retriever
        from service.slack.socket import check_socket_settings, run_socket_mode

        check_socket_settings(settings)  # fail fast, before the assistant loads
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        typer.echo("Loading the assistant…", err=True)
        # a long-running bot: BM25 answers at once, the vector index opens or builds in the background
        config = RetrievalConfig.from_settings(settings)
        run_socket_mode(settings, build_assistant(
            settings, retriever_factory=lambda: Retriever(config, refresh=False, background=True)))
