"""Slack's payloads as typed messages: what a signed body must be before Bolt or a listener reads it.

    problem = payload_problem(content_type, text)    # None, or what is wrong, for a 400

A correctly signed body is still refused when it is not one of the payloads Slack sends this app: an Events API
envelope (url_verification, event_callback with an `event` object, app_rate_limited), a slash command form, an
interactive form whose `payload` is a JSON object with a `type` (block_actions: a list of actions), or Slack's
ssl_check. Fields the app and Bolt read must have the types Slack gives them (strings are strings, `event` is an
object, `actions` a list of objects); other fields pass as they are. JSON nests at most MAX_DEPTH levels.

Regression: a signed body nested 5,000 deep, `event` as a string or a list, `authorizations` as a string, or
`actions` holding a number was a 500 from inside Bolt; now each is a 400 naming what is wrong.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from urllib.parse import parse_qs

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.edge.jsonbody import nesting_depth

MAX_DEPTH = 64  # Block Kit messages in an interactive payload nest about ten deep
MESSAGE_EVENTS = ("app_mention", "message")
Str = str | None


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Event(_Shape):
    """Any event: its type. Events of other kinds carry objects where a message has strings (user_change's user)."""

    type: str = Field(min_length=1)


class MessageEvent(Event):
    """app_mention and message events, the ones the listeners read: their fields as Slack types them."""

    subtype: Str = None
    channel: str = Field(min_length=1)
    ts: str = Field(min_length=1)
    channel_type: Str = None
    user: Str = None
    bot_id: Str = None
    text: Str = None
    thread_ts: Str = None
    team: Str = None
    assistant_thread: dict[str, Any] | None = None


class Authorization(_Shape):
    team_id: Str = None
    user_id: Str = None
    enterprise_id: Str = None
    is_bot: bool | None = None


class UrlVerification(_Shape):
    type: Literal["url_verification"]
    challenge: str = Field(max_length=1000)


class EventCallback(_Shape):
    type: Literal["event_callback"]
    event_id: str = Field(min_length=1, max_length=256)
    event: Event
    team_id: Str = None
    api_app_id: Str = None
    event_time: int | None = None
    enterprise_id: Str = None
    authorizations: list[Authorization] | None = None


class RateLimited(_Shape):
    type: Literal["app_rate_limited"]


class SlashCommand(_Shape):
    command: str = Field(pattern=r"^/\S{1,64}$")
    text: str = ""
    user_id: str = Field(min_length=1)
    channel_id: str = Field(min_length=1)
    team_id: Str = None
    trigger_id: str = Field(min_length=1, max_length=256)
    response_url: Str = None


class Id(_Shape):
    id: str = Field(min_length=1)


class Action(_Shape):
    action_id: str = Field(min_length=1)
    value: Str = None
    block_id: Str = None
    type: Str = None


class Interaction(_Shape):
    type: str = Field(min_length=1)
    user: Id | None = None
    team: Id | None = None
    channel: Id | None = None
    container: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    trigger_id: Str = None
    response_url: Str = None


class BlockActions(Interaction):
    type: Literal["block_actions"]
    actions: list[Action] = Field(min_length=1)
    user: Id


def _why(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "body"
    return f"{where}: {str(err['msg']).removeprefix('Value error, ')[:120]}"


def _json(text: str, what: str) -> tuple[Any, str | None]:
    if nesting_depth(text, MAX_DEPTH) > MAX_DEPTH:
        return None, f"{what} nests deeper than {MAX_DEPTH} levels."
    try:
        return json.loads(text), None
    except (ValueError, RecursionError):
        return None, f"{what} is not valid JSON."


def _envelope(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "The body is not a JSON object."
    kind = data.get("type")
    envelopes: dict[str, type[_Shape]] = {"url_verification": UrlVerification, "event_callback": EventCallback,
                                          "app_rate_limited": RateLimited}
    model = envelopes.get(kind) if isinstance(kind, str) else None
    if model is None:
        return "The body is not an Events API payload (type url_verification, event_callback or app_rate_limited)."
    try:
        model.model_validate(data)
        event = data.get("event")
        if model is EventCallback and isinstance(event, dict) and event.get("type") in MESSAGE_EVENTS:
            MessageEvent.model_validate(event)
    except ValidationError as exc:
        where = "event." if model is EventCallback and exc.title == MessageEvent.__name__ else ""
        return f"The event payload is not Slack's shape ({where}{_why(exc)})."
    return None


def _form(text: str) -> str | None:
    fields = parse_qs(text, keep_blank_values=True)
    if "payload" in fields:
        data, bad = _json(fields["payload"][0], "The form's `payload`")
        if bad is not None:
            return bad
        if not isinstance(data, dict):
            return "The form's `payload` is not a JSON object."
        model = BlockActions if data.get("type") == "block_actions" else Interaction
        try:
            model.model_validate(data)
        except ValidationError as exc:
            return f"The interactive payload is not Slack's shape ({_why(exc)})."
        return None
    if "command" in fields:
        try:
            SlashCommand.model_validate({k: v[0] for k, v in fields.items()})
        except ValidationError as exc:
            return f"The slash command is not Slack's shape ({_why(exc)})."
        return None
    if fields.get("ssl_check") == ["1"]:
        return None
    return "The form is neither a slash command, an interactive `payload` nor Slack's ssl_check."


def payload_problem(content_type: str, text: str) -> str | None:
    """What is wrong with a signed body's shape, or None (the same JSON-or-form choice as Bolt's parse_body)."""
    kind: Literal["json", "form"] = "json" if content_type == "application/json" or text.startswith("{") else "form"
    if kind == "json":
        data, bad = _json(text, "The body")
        return bad or _envelope(data)
    return _form(text) if text else "The body is empty."
