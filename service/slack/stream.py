"""An answer into its thread: a "thinking" status while the engine works, the text streamed with Slack's chat
streaming (chat.startStream / appendStream / stopStream), then the card (picks, table, sources, buttons, feedback)
as blocks at the bottom of the same message.

    set_status(client, channel, thread_ts, "zh")
    stream_answer(client, channel, thread_ts, text, [card, card_without_table], recipient=("T1", "U1"))

The text streamed is the verified answer (the engine's figures, prose-checked), cut into paragraphs: a language
model's draft tokens are never shown, so nothing shown can later turn out unchecked. False from stream_answer means
Slack refused to start a stream (the caller posts an ordinary message instead).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from service.slack.mrkdwn import paragraphs

log = logging.getLogger(__name__)
STREAM_BUFFER = 400  # characters held before a call: an answer of 3,000 characters arrives in about six
PIECE_CHARS = 500  # the text is cut between paragraphs near this size
_STATUS = {"zh": ("正在计算…", ["正在读取你的训练任务…", "正在核算显存与训练时长…", "正在比对腾讯云和京东云的价格…"]),
           "en": ("is thinking…", ["Reading your training job…", "Working out memory and training time…",
                                   "Comparing Tencent Cloud and JD Cloud prices…"])}


def set_status(client: WebClient, channel: str, thread_ts: str, lang: str) -> bool:
    """The thread's "thinking" status (cleared by Slack when the answer is posted); False when Slack refuses."""
    status, loading = _STATUS["zh" if lang == "zh" else "en"]
    try:
        client.assistant_threads_setStatus(channel_id=channel, thread_ts=thread_ts, status=status,
                                           loading_messages=loading)
        return True
    except SlackApiError as exc:  # an older workspace or a missing scope: the answer still comes
        log.info("no thinking status in %s: %s", channel, exc.response.get("error"))
        return False


def stream_answer(client: WebClient, channel: str, thread_ts: str, text: str, cards: Sequence[list[dict[str, Any]]],
                  recipient: tuple[str, str] = ("", "")) -> bool:
    """Stream `text` as a reply in the thread, then stop the stream with the first of `cards` Slack accepts (the
    card without the table block is the usual fallback; without any card as the last). `recipient` (team, user) is
    required by Slack outside direct messages. If no card is accepted, the stream ends with the text and the last
    card is posted as a message of its own. False when the stream could not be started (nothing was posted)."""
    team, user = recipient
    streamer = client.chat_stream(channel=channel, thread_ts=thread_ts, buffer_size=STREAM_BUFFER,
                                  recipient_team_id=team or None, recipient_user_id=user or None)
    try:
        for piece in paragraphs(text, PIECE_CHARS):
            streamer.append(markdown_text=piece)
    except (SlackApiError, SlackRequestError) as exc:
        log.warning("streaming into %s failed: %s", channel, _error(exc))
        if streamer.ts is None:
            return False
    for blocks in cards:
        try:
            streamer.stop(blocks=blocks)
            return True
        except (SlackApiError, SlackRequestError) as exc:
            log.warning("chat.stopStream refused the answer card: %s", _error(exc))
            if streamer.ts is None:
                return False
    try:  # the text at least, then the card as a message of its own
        streamer.stop()
    except (SlackApiError, SlackRequestError) as exc:
        log.warning("chat.stopStream failed: %s", _error(exc))
        if streamer.ts is None:
            return False
    if cards:
        try:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text[:3000], blocks=cards[-1])
        except SlackApiError as exc:
            log.warning("the answer card could not be posted either: %s", _error(exc))
    return True


def _error(exc: Exception) -> str:
    return str(exc.response.get("error")) if isinstance(exc, SlackApiError) else str(exc)
