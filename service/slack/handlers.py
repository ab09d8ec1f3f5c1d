"""What the bot does with a mention, a direct message, the slash command and the document buttons.

Each listener acknowledges at once (app.py) and does its work here, in Bolt's lazy-listener thread: post a
"thinking" message, ask the assistant (the same entry point as the API), then chat.update that message with the
answer. Failures end as a friendly message in the thread; unexpected ones are logged with the traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from service.assistant.types import AskResult, AssistantProtocol
from service.errors import AdvisorError
from service.lexicon import language_of
from service.slack.blocks import (
    LAUNCH_BUNDLE_ACTION,
    REQUEST_DOC_ACTION,
    Block,
    Lang,
    answer_blocks,
    document_messages,
    error_blocks,
    fallback_text,
    parse_action_value,
    section,
    thinking_text,
    tr,
    usage_text,
)
from service.slack.mrkdwn import escape, markdown_to_mrkdwn, slack_text_to_plain, split_text, truncate
from service.slack.threads import ThreadSessions

log = logging.getLogger(__name__)
AssistantProvider = Callable[[], AssistantProtocol]
USER_SUBTYPES = (None, "file_share", "thread_broadcast")  # message subtypes a person sends

# button -> (follow-up asked in the thread's session: zh, en), the AskResult.documents key, titles
DOCUMENTS: dict[str, tuple[tuple[str, str], str, tuple[str, str]]] = {
    REQUEST_DOC_ACTION: (("生成申请说明", "write the request document"), "request_document",
                         ("《AI训练资源申请说明》", "AI Training Resource Request")),
    LAUNCH_BUNDLE_ACTION: (("生成启动脚本", "write the launch bundle"), "launch_bundle",
                           ("启动脚本包", "Launch bundle")),
}


def is_from_bot(event: Mapping[str, Any]) -> bool:
    """Messages by any bot (ours included) or edits/deletions: never answered, so bots cannot loop."""
    return bool(event.get("bot_id")) or event.get("subtype") not in USER_SUBTYPES


def document_files(kind: str, documents: Mapping[str, Any], lang: Lang) -> dict[str, str]:
    """AskResult.documents -> {file name: text} for one document kind; {} when it is not there."""
    key = DOCUMENTS[kind][1]
    doc = documents.get(key)
    if isinstance(doc, str) and doc:
        return {f"ai-training-request.{lang}.md": doc}
    if isinstance(doc, Mapping):
        return {str(name): str(text) for name, text in doc.items()}
    return {}


class SlackHandlers:
    def __init__(self, assistant: AssistantProvider, threads: ThreadSessions) -> None:
        self.assistant = assistant
        self.threads = threads

    # -- Bolt lazy listeners (arguments are injected by name) -------------------------------------------
    def on_mention(self, event: dict[str, Any], client: WebClient) -> None:
        if str(event.get("channel", "")).startswith("D"):
            return  # a DM arrives as message.im too; that listener answers it
        self._guard(self._on_user_message, event, client)

    def on_direct_message(self, event: dict[str, Any], client: WebClient) -> None:
        if event.get("channel_type") == "im":
            self._guard(self._on_user_message, event, client)

    def on_command(self, command: dict[str, Any], client: WebClient, respond: Callable[..., Any]) -> None:
        self._guard(self._on_command, command, client, respond)

    def on_document(self, body: dict[str, Any], action: dict[str, Any], client: WebClient,
                    respond: Callable[..., Any]) -> None:
        self._guard(self._on_document, body, action, client, respond)

    @staticmethod
    def _guard(fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # nothing reaches Slack from here; keep the traceback for the operator
            log.exception("Slack listener %s failed", fn.__name__)

    # -- conversations ------------------------------------------------------------------------------
    def _on_user_message(self, event: dict[str, Any], client: WebClient) -> None:
        if is_from_bot(event):
            return
        channel, thread_ts = str(event["channel"]), str(event.get("thread_ts") or event["ts"])
        question = slack_text_to_plain(str(event.get("text") or ""))
        if not question:
            lang = language_of(str(event.get("text") or ""))
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=usage_text(lang))
            return
        self.converse(client, channel, thread_ts, question)

    def _on_command(self, command: dict[str, Any], client: WebClient, respond: Callable[..., Any]) -> None:
        question = slack_text_to_plain(str(command.get("text") or ""))
        if not question:
            return  # the ack showed the usage
        user = str(command.get("user_id") or "")
        asked = f"<@{user}>: {escape(truncate(question, 500))}" if user else escape(truncate(question, 500))
        if self.converse(client, str(command["channel_id"]), None, question, asked=asked):
            return
        # the bot may not post here (not a member, or someone else's DM): answer the asker privately
        result, blocks = self.answer(None, None, question, asked=asked)
        respond(text=_text(result, blocks), blocks=blocks, response_type="ephemeral", replace_original=False)

    def converse(self, client: WebClient, channel: str, thread_ts: str | None, question: str, *,
                 asked: str = "") -> bool:
        """Post "thinking", answer, update it. thread_ts None: the thinking message starts the thread.
        False when the thinking message could not be posted (nothing else was done)."""
        lang = language_of(question)
        try:
            posted = client.chat_postMessage(channel=channel, thread_ts=thread_ts,
                                             text=thinking_text(lang) + (f"\n{asked}" if asked else ""))
        except SlackApiError as exc:
            log.warning("cannot post in %s: %s", channel, exc.response.get("error"))
            return False
        ts = str(posted["ts"])
        key = thread_ts or ts
        result, blocks = self.answer(channel, key, question, asked=asked)
        self._show(client, channel, ts, result, blocks, asked)
        if result is not None and result.documents:
            for kind in DOCUMENTS:
                if files := document_files(kind, result.documents, result.language):
                    self.post_files(client, channel, key, tr(result.language, *DOCUMENTS[kind][2]), files)
        return True

    def answer(self, channel: str | None, thread_ts: str | None, question: str, *,
               asked: str = "") -> tuple[AskResult | None, list[Block]]:
        """Ask in the thread's session (a new one for a new thread); the blocks to show either way."""
        lang = language_of(question)
        try:
            assistant = self.assistant()
            sid = self.threads.get(channel, thread_ts) if channel and thread_ts else None
            if sid is not None and not assistant.has_session(sid):
                sid = None
            try:
                result = assistant.ask(question, sid)
            except AdvisorError as exc:
                if exc.code != "session_not_found" or sid is None:
                    raise
                result = assistant.ask(question, None)  # the session was deleted: start again
        except AdvisorError as exc:  # the user can act on it: say what was wrong and how to fix it
            log.info("assistant declined a Slack message: %s", exc)
            return None, error_blocks(lang, str(exc))
        except Exception:
            log.exception("assistant failed on a Slack message (channel %s, thread %s)", channel, thread_ts)
            return None, error_blocks(lang)
        if channel and thread_ts:
            self.threads.put(channel, thread_ts, result.session_id)
        return result, answer_blocks(result, asked=asked)

    def _show(self, client: WebClient, channel: str, ts: str, result: AskResult | None, blocks: list[Block],
              asked: str) -> None:
        """chat.update the thinking message; without the table block, then as text, if Slack refuses."""
        text = _text(result, blocks)
        attempts = [blocks] + ([answer_blocks(result, native_table=False, asked=asked)] if result else [])
        for attempt in attempts:
            try:
                client.chat_update(channel=channel, ts=ts, text=text, blocks=attempt)
                return
            except SlackApiError as exc:
                log.warning("chat.update refused the answer blocks: %s", exc.response.get("error"))
        client.chat_update(channel=channel, ts=ts, text=text)

    # -- documents ----------------------------------------------------------------------------------
    def _on_document(self, body: dict[str, Any], action: dict[str, Any], client: WebClient,
                     respond: Callable[..., Any]) -> None:
        kind = str(action.get("action_id"))
        session_id, lang = parse_action_value(str(action.get("value") or ""))
        message = body.get("message") or {}
        channel = str((body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or "")
        thread_ts = message.get("thread_ts") or message.get("ts")
        title = tr(lang, *DOCUMENTS[kind][2])
        files, note = self.documents(kind, session_id, lang)
        if channel and thread_ts:
            try:
                if files:
                    self.post_files(client, channel, str(thread_ts), title, files)
                else:
                    client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=truncate(note, 3000),
                                            blocks=note_blocks(note))
                return
            except SlackApiError as exc:
                log.warning("cannot post the document in %s: %s", channel, exc.response.get("error"))
        # an ephemeral answer (slash command where the bot is not a member): reply through response_url
        for blocks in document_messages(title, files) if files else [note_blocks(note)]:
            respond(text=title if files else truncate(note, 3000), blocks=blocks, response_type="ephemeral", replace_original=False)

    def documents(self, kind: str, session_id: str, lang: Lang) -> tuple[dict[str, str], str]:
        """(files, "") or ({}, what to tell the user): asks the follow-up in the answer's session."""
        follow_up = DOCUMENTS[kind][0][0 if lang == "zh" else 1]
        try:
            assistant = self.assistant()
            if not session_id or not assistant.has_session(session_id):
                return {}, tr(lang, "这个会话已失效，请重新提问后再点按钮。",
                              "This conversation has expired; ask again, then press the button.")
            result = assistant.ask(follow_up, session_id)
        except AdvisorError as exc:
            log.info("assistant declined a document request: %s", exc)
            return {}, escape(str(exc))
        except Exception:
            log.exception("assistant failed on a document request (session %s)", session_id)
            return {}, tr(lang, "😵 抱歉，文档生成失败，请稍后重试。", "😵 Sorry, the document could not be made; try again.")
        files = document_files(kind, result.documents, lang)
        return (files, "") if files else ({}, markdown_to_mrkdwn(result.answer_markdown))

    def post_files(self, client: WebClient, channel: str, thread_ts: str, title: str, files: Mapping[str, str]) -> None:
        """Upload the files into the thread (files_upload_v2); code blocks when the upload fails."""
        uploads = [{"content": text, "filename": name.replace("/", "_"), "title": name} for name, text in files.items()]
        try:
            client.files_upload_v2(channel=channel, thread_ts=thread_ts, file_uploads=uploads, initial_comment=title)
            return
        except (SlackClientError, OSError) as exc:  # no files:write scope, upload refused, network
            log.warning("file upload failed, posting the document as code blocks: %s", exc)
        for blocks in document_messages(title, files):
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=title, blocks=blocks)


def _text(result: AskResult | None, blocks: list[Block]) -> str:
    """The top-level `text` of a message: the answer's, or the (error) section's."""
    return fallback_text(result) if result else str(blocks[0]["text"]["text"])


def note_blocks(note: str) -> list[Block]:
    """A short mrkdwn note (already converted) as sections."""
    return [section(chunk) for chunk in split_text(note, 3000)[:50]] or [section("…")]
