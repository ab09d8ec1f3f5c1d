"""Wiring: the Bolt app over the assistant, and its mount on the FastAPI app at POST /slack/events.

    mount_slack(app, settings, resources.assistant.get)   # in service.app.create_app; False when not set up
    build_slack_app(settings, assistant)                  # the Bolt app itself (HTTP or Socket Mode)

One URL serves events (mentions, direct messages, the AI app panel's threads), the slash command (/gpu, and the
older /gpu-advisor) and button clicks (documents, 👍/👎), all signed POSTs. The raw
bytes are checked first (service.slack.verify: size 413, signature and timestamp 401, then a garbled signed body
400, all in the API's error shape); then Bolt verifies again and answers url_verification.
Listeners acknowledge before any work (process_before_response=True, so nothing runs after the HTTP response
except the lazy listeners, which Bolt runs in its thread pool); retries of an event already seen are dropped.
Acknowledging never needs Slack's Web API (the bot token is known: no auth.test per request), so an unreachable
slack.com costs the answers, not the acknowledgements; service.slack.delivery retries, logs the outage once and
reports it in /readyz.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.assistant.types import AssistantProtocol
from service.edge.errors import error_body
from service.errors import InvalidInputError
from service.settings import Settings
from service.slack.blocks import DOCUMENT_ACTIONS, usage_text
from service.slack.dedup import SeenEvents, is_duplicate
from service.slack.delivery import SlackDelivery, quiet_sdk_logger
from service.slack.feedback import FEEDBACK_ACTION
from service.slack.handlers import AssistantProvider, SlackHandlers
from service.slack.threads import ThreadSessions, slack_db
from service.slack.verify import MAX_BODY_BYTES, TOO_LARGE, Problem, check_request

if TYPE_CHECKING:
    from fastapi import FastAPI
    from slack_bolt import App
    from slack_sdk import WebClient

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"
COMMAND = "/gpu"
COMMANDS = (COMMAND, "/gpu-advisor")  # the old name still works for apps installed from an older manifest
DB_FILE = "slack.sqlite"


def _provider(assistant: AssistantProtocol | AssistantProvider) -> AssistantProvider:
    """Accept the assistant itself or a zero-argument function that returns it (built on first use)."""
    if callable(assistant) and not hasattr(assistant, "ask"):
        return assistant
    ready = cast(AssistantProtocol, assistant)
    return lambda: ready


def web_client(settings: Settings, delivery: SlackDelivery, client: WebClient | None = None) -> tuple[WebClient, str]:
    """(the Web API client Bolt copies for each request, the bot token): `client` (a test points it elsewhere) or
    slack.com, with the delivery's retries and a log without slack_sdk's line per failed try. The client holds no
    token: `authorize` hands it to each request's client."""
    from slack_sdk import WebClient

    base = client or WebClient(token=settings.slack_bot_token)
    quiet = WebClient(base_url=base.base_url, timeout=base.timeout, ssl=base.ssl, proxy=base.proxy,
                      headers=base.headers, logger=quiet_sdk_logger(), retry_handlers=delivery.retry_handlers())
    return quiet, base.token or settings.slack_bot_token


def build_slack_app(settings: Settings, assistant: AssistantProtocol | AssistantProvider, *,
                    client: WebClient | None = None, socket_mode: bool = False,
                    listener_executor: Executor | None = None, delivery: SlackDelivery | None = None) -> App:
    """The Bolt app. Makes no network call, then or per request: the bot token is authorised as configured (no
    auth.test), so a request is acknowledged whether or not slack.com can be reached.

    `client` points the Web API elsewhere (tests: a loopback stub); `listener_executor` runs the lazy listeners
    (default: Bolt's thread pool); `delivery` tracks whether posting works (app.state.slack_delivery, /readyz).
    """
    from slack_bolt import Ack, App, BoltRequest, BoltResponse
    from slack_bolt.authorization import AuthorizeResult

    if not settings.slack_bot_token and client is None:
        raise InvalidInputError("SLACK_BOT_TOKEN is not set.", "Set it to the app's Bot User OAuth Token (xoxb-…).")
    if not socket_mode and not settings.slack_signing_secret:
        raise InvalidInputError("SLACK_SIGNING_SECRET is not set.",
                                "Set it to the Signing Secret from the app's Basic Information page.")
    db = slack_db(settings.data_dir / DB_FILE, settings.database_url)
    delivery = delivery or SlackDelivery()
    handlers = SlackHandlers(_provider(assistant), ThreadSessions(db), delivery)
    seen = SeenEvents(db)
    client, token = web_client(settings, delivery, client)

    def authorize(enterprise_id: str | None, team_id: str | None, user_id: str | None) -> AuthorizeResult:
        # One workspace, one bot token: nothing to look up. Bolt's default calls auth.test on the first request,
        # and when slack.com is unreachable that raised out of dispatch (HTTP 500, dispatch_failed).
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, user_id=user_id, bot_token=token)

    app = App(
        name="gpu-advisor",
        client=client,
        authorize=authorize,
        signing_secret=settings.slack_signing_secret,
        request_verification_enabled=not socket_mode,  # Socket Mode payloads arrive unsigned over the socket
        process_before_response=True,
        listener_executor=listener_executor,
    )

    def drop_retries(body: dict[str, Any], request: BoltRequest, next: Callable[[], None]) -> BoltResponse | None:
        if is_duplicate(seen, body, request.headers):
            return BoltResponse(status=200, body="")
        next()
        return None

    app.use(drop_retries)

    def ack_now(ack: Ack) -> None:
        ack()

    def ack_command(ack: Ack, command: dict[str, Any]) -> None:
        if str(command.get("text") or "").strip():  # the answer's first lines, in the command's own response
            ack(**handlers.command_reply(command))
        else:  # nothing asked: the usage, privately (the lazy listener does nothing)
            ack(text=f"{usage_text('zh')}\n{usage_text('en')}")

    app.assistant(assistant_panel(handlers, ack_now))
    app.event("app_mention")(ack=ack_now, lazy=[handlers.on_mention])
    app.event("message")(ack=ack_now, lazy=[handlers.on_direct_message])
    for command in COMMANDS:
        app.command(command)(ack=ack_command, lazy=[handlers.on_command])
    for action_id in DOCUMENT_ACTIONS:
        app.action(action_id)(ack=ack_now, lazy=[handlers.on_document])
    app.action(FEEDBACK_ACTION)(ack=ack_now, lazy=[handlers.on_feedback])
    return app


def assistant_panel(handlers: SlackHandlers, ack: Callable[..., None]) -> Any:
    """Bolt's Assistant middleware: the AI app panel's thread start and the messages in its threads (before the
    generic message listener). No thread context is kept: Bolt's default would rewrite our first reply to store it."""
    from slack_bolt import Assistant

    panel = Assistant()
    panel.thread_started(lazy=[handlers.on_thread_started])(ack)
    panel.thread_context_changed(ack)
    panel.user_message(lazy=[handlers.on_assistant_message])(ack)
    return panel


async def read_capped(request: Request) -> tuple[bytes, Problem | None]:
    """The body, read up to MAX_BODY_BYTES: a larger one (by Content-Length or as it arrives) is refused unread."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return b"", TOO_LARGE
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return b"", TOO_LARGE
        chunks.append(chunk)
    return b"".join(chunks), None


def mount_slack(fastapi_app: FastAPI, settings: Settings, assistant: AssistantProtocol | AssistantProvider, *,
                client: WebClient | None = None, listener_executor: Executor | None = None,
                delivery: SlackDelivery | None = None) -> bool:
    """Add POST /slack/events when SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN are set; False (and why, logged) if not.

    `assistant` may be a function returning the assistant, so the API's lazily built one is shared, not forced.
    `client`, `listener_executor` and `delivery` are passed to build_slack_app; the delivery's state is the
    `slack` component of /readyz.
    """
    missing = [name for name, value in (("SLACK_SIGNING_SECRET", settings.slack_signing_secret),
                                        ("SLACK_BOT_TOKEN", settings.slack_bot_token)) if not value]
    if missing:
        log.info("Slack bot not mounted: %s not set (see docs/slack.md)", " and ".join(missing))
        return False
    try:
        from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response
    except ImportError:
        log.warning("Slack bot not mounted: slack_bolt is not installed (pip install -e '.[service]')")
        return False
    from starlette.concurrency import run_in_threadpool

    delivery = delivery or SlackDelivery()
    bolt = build_slack_app(settings, assistant, client=client, listener_executor=listener_executor,
                           delivery=delivery)

    async def slack_events(request: Request) -> Response:
        # Size, signature and shape are checked on the raw bytes first (Bolt would parse before verifying: a
        # garbled unsigned post was a 500); then the adapter's conversions, with App.dispatch off the event loop.
        body, problem = await read_capped(request)
        problem = problem or check_request(request.headers, body, settings.slack_signing_secret, time.time())
        if problem is not None:
            return JSONResponse(error_body(problem.code, problem.message, problem.fix), problem.status)
        bolt_response = await run_in_threadpool(bolt.dispatch, to_bolt_request(request, body))
        return to_starlette_response(bolt_response)

    fastapi_app.add_api_route(EVENTS_PATH, slack_events, methods=["POST"], include_in_schema=False,
                              name="slack_events")
    fastapi_app.state.slack_app = bolt
    fastapi_app.state.slack_delivery = delivery
    resources = getattr(fastapi_app.state, "resources", None)
    if resources is not None:
        resources.probes["slack"] = delivery.state  # optional: the API answers without Slack
    log.info("Slack bot mounted at POST %s", EVENTS_PATH)
    return True
