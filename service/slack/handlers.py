"""What the bot does with a mention, a direct message, the AI app panel, the slash command and the buttons.

Each listener acknowledges at once (app.py) and does its work here, in Bolt's lazy-listener thread: set the thread's
"thinking" status, ask the assistant (the same entry point as the API), stream the answer into the thread and end
it with the card and the feedback buttons (stream.py). The slash command first posts the question as the root of a
new thread. Failures end as a friendly message in the thread; unexpected ones are logged with the traceback.
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
    answer_blocks,
    answer_text,
    card_blocks,
    document_messages,
    error_blocks,
    fallback_text,
    parse_action_value,
    usage_text,
)
from service.slack.command_reply import PendingAnswers, command_reply
from service.slack.delivery import SlackDelivery, is_connection_error
from service.slack.feedback import feedback_block, parse_feedback, thanks_text
from service.slack.kit import Block, Lang, section, tr
from service.slack.mrkdwn import (
    escape,
    markdown_to_mrkdwn,
    slack_text_to_plain,
    split_text,
    stream_markdown,
    truncate,
)
from service.slack.panel import SUGGESTED, greeting, prompts_title, thread_title, user_lang
from service.slack.stream import set_status, stream_answer
from service.slack.threads import ThreadSessions

log = logging.getLogger(__name__)
BUNDLE_ZIP = "launch-bundle.zip"
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


def recipient_of(body: Mapping[str, Any], event: Mapping[str, Any]) -> tuple[str, str]:
    """(team, user) a streamed answer is for: Slack requires them outside direct messages."""
    return str(body.get("team_id") or event.get("team") or ""), str(event.get("user") or "")


class SlackHandlers:
    def __init__(self, assistant: AssistantProvider, threads: ThreadSessions,
                 delivery: SlackDelivery | None = None) -> None:
        self.assistant = assistant
        self.threads = threads
        self.delivery = delivery or SlackDelivery()
        self.langs: dict[str, Lang] = {}  # user id -> language of their Slack locale (panel greetings)
        self.pending = PendingAnswers()  # slash commands answered in their ack, waiting for their thread

    # -- Bolt lazy listeners (arguments are injected by name) -------------------------------------------
    def on_mention(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if str(event.get("channel", "")).startswith("D"):
            return  # a DM arrives as message.im too; that listener answers it
        self._guard(self._on_user_message, event, body, client)

    def on_direct_message(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if event.get("channel_type") == "im":
            self._guard(self._on_user_message, event, body, client)

    def on_command(self, command: dict[str, Any], client: WebClient, respond: Callable[..., Any]) -> None:
        self._guard(self._on_command, command, client, respond)

    def on_document(self, body: dict[str, Any], action: dict[str, Any], client: WebClient,
                    respond: Callable[..., Any]) -> None:
        self._guard(self._on_document, body, action, client, respond)

    def on_feedback(self, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        self._guard(self._on_feedback, body, action, client)

    def on_thread_started(self, event: dict[str, Any], client: WebClient) -> None:
        self._guard(self._on_thread_started, event, client)

    def on_assistant_message(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        self._guard(self._on_assistant_message, event, body, client)

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # nothing reaches Slack from here
            if is_connection_error(exc):  # slack.com out of reach: reported once per outage, not per listener
                self.delivery.failed(exc)
                log.debug("Slack listener %s could not reach Slack: %s", fn.__name__, exc)
                return
            log.exception("Slack listener %s failed", fn.__name__)  # keep the traceback for the operator

    # -- conversations ------------------------------------------------------------------------------
    def _on_user_message(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if is_from_bot(event):
            return
        channel, thread_ts = str(event["channel"]), str(event.get("thread_ts") or event["ts"])
        question = slack_text_to_plain(str(event.get("text") or ""))
        if not question:
            lang = language_of(str(event.get("text") or ""))
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=usage_text(lang))
            return
        self.converse(client, channel, thread_ts, question, recipient=recipient_of(body, event))

    # -- the slash command: its own response carries the answer (service/slack/command_reply.py) --------------------
    def command_reply(self, command: dict[str, Any]) -> dict[str, Any]:
        """What the ack sends back: the answer's first lines when it is ready in time, else a line it is coming.
        The answer is started here and kept for the lazy listener, which posts it in a thread."""
        question = slack_text_to_plain(str(command.get("text") or ""))
        asked = _asked(command, question)
        future = self.pending.start(_key(command), lambda: self.answer(None, None, question, asked=asked))
        return command_reply(future, language_of(question))

    def _on_command(self, command: dict[str, Any], client: WebClient, respond: Callable[..., Any]) -> None:
        question = slack_text_to_plain(str(command.get("text") or ""))
        if not question:
            return  # the ack showed the usage
        asked = _asked(command, question)
        started = self.pending.take(_key(command))
        ready = started.result() if started is not None else None  # the ack's answer: asked once
        channel = str(command["channel_id"])
        try:  # the question is the root of a new thread; the answer streams in below it
            root = client.chat_postMessage(channel=channel, text=asked)
        except SlackApiError as exc:
            # the bot may not post here (not a member, or someone else's DM): answer the asker privately
            log.info("cannot post in %s: %s", channel, exc.response.get("error"))
            result, blocks = ready or self.answer(None, None, question, asked=asked)
            if result is not None:
                blocks = answer_blocks(result, asked=asked, extra=self.feedback_blocks(result))
            respond(text=_text(result, blocks), blocks=blocks, response_type="ephemeral", replace_original=False)
            return
        self.converse(client, channel, str(root["ts"]), question,
                      recipient=(str(command.get("team_id") or ""), str(command.get("user_id") or "")), ready=ready)

    def converse(self, client: WebClient, channel: str, thread_ts: str, question: str, *,
                 recipient: tuple[str, str] = ("", ""),
                 ready: tuple[AskResult | None, list[Block]] | None = None) -> AskResult | None:
        """Thinking status, answer, stream it into the thread with its card and feedback buttons (an ordinary
        message when Slack will not stream here), then any documents asked for. The result, or None on failure.
        `ready`: an answer already made (the slash command's), which this thread continues."""
        set_status(client, channel, thread_ts, language_of(question))
        result, blocks = ready if ready is not None else self.answer(channel, thread_ts, question)
        if ready is not None and result is not None:
            self.threads.put(channel, thread_ts, result.session_id)
        if result is None:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=_text(None, blocks), blocks=blocks)
            return None
        extra = self.feedback_blocks(result)
        cards = [card_blocks(result, extra=extra), card_blocks(result, native_table=False, extra=extra)]
        text = stream_markdown(answer_text(result), drop_tables=bool((result.recommendation or {}).get("candidates")))
        if not stream_answer(client, channel, thread_ts, text, cards, recipient):
            self._post(client, channel, thread_ts, result, extra)
        for kind in DOCUMENTS:
            if files := document_files(kind, result.documents, result.language):
                self.post_files(client, channel, thread_ts, tr(result.language, *DOCUMENTS[kind][2]), files,
                                zipped=kind == LAUNCH_BUNDLE_ACTION)
        return result

    def _post(self, client: WebClient, channel: str, thread_ts: str, result: AskResult, extra: list[Block]) -> None:
        """The whole answer as one message; without the table block, then as text, if Slack refuses."""
        text = fallback_text(result)
        for native in (True, False):
            try:
                client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text,
                                        blocks=answer_blocks(result, native_table=native, extra=extra))
                return
            except SlackApiError as exc:
                log.warning("chat.postMessage refused the answer blocks: %s", exc.response.get("error"))
        client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)

    def feedback_blocks(self, result: AskResult) -> list[Block]:
        """The 👍/👎 buttons for the turn this answer was stored as ([] when the turn cannot be found)."""
        try:
            turns = [m.turn for m in self.assistant().session_messages(result.session_id)]
        except Exception as exc:  # the answer matters more than its buttons
            log.warning("no feedback buttons for session %s: %s", result.session_id, exc)
            return []
        return [feedback_block(result.session_id, max(turns), result.language)] if turns else []

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
                if exc.code not in ("session_not_found", "session_full") or sid is None:
                    raise
                result = assistant.ask(question, None)  # the session was deleted, or is full: start again
        except AdvisorError as exc:  # the user can act on it: say what was wrong and how to fix it
            log.info("assistant declined a Slack message: %s", exc)
            return None, error_blocks(lang, str(exc))
        except Exception:
            log.exception("assistant failed on a Slack message (channel %s, thread %s)", channel, thread_ts)
            return None, error_blocks(lang)
        if channel and thread_ts:
            self.threads.put(channel, thread_ts, result.session_id)
        return result, answer_blocks(result, asked=asked)

    # -- the AI app panel and the feedback buttons ----------------------------------------------------------
    def _on_thread_started(self, event: dict[str, Any], client: WebClient) -> None:
        """Suggested prompts and a greeting, in the user's language (their Slack locale)."""
        thread = event.get("assistant_thread") or {}
        channel, thread_ts = str(thread.get("channel_id") or ""), str(thread.get("thread_ts") or "")
        lang = user_lang(client, str(thread.get("user_id") or ""), self.langs)
        client.assistant_threads_setSuggestedPrompts(channel_id=channel, thread_ts=thread_ts,
                                                     title=prompts_title(lang), prompts=SUGGESTED[lang])
        client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=greeting(lang))

    def _on_assistant_message(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        """A message in an AI app thread: answered as any conversation; the first answer names the thread."""
        if is_from_bot(event):
            return
        channel, thread_ts = str(event["channel"]), str(event.get("thread_ts") or event["ts"])
        question = slack_text_to_plain(str(event.get("text") or ""))
        if not question:
            return
        first = self.threads.get(channel, thread_ts) is None
        result = self.converse(client, channel, thread_ts, question, recipient=recipient_of(body, event))
        if first:
            try:
                client.assistant_threads_setTitle(channel_id=channel, thread_ts=thread_ts,
                                                  title=thread_title(result, question))
            except SlackApiError as exc:
                log.info("no thread title in %s: %s", channel, exc.response.get("error"))

    def _on_feedback(self, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        """A 👍/👎 click: stored on its turn, thanked privately."""
        click = parse_feedback(str(action.get("value") or ""))
        if click is None:
            log.info("feedback with a value that is not ours: %r", str(action.get("value"))[:200])
            return
        user = str((body.get("user") or {}).get("id") or "")
        try:
            self.assistant().rate_turn(click.session_id, click.turn, click.rating, rater=user, source="slack")
        except AdvisorError as exc:  # the session was deleted since
            log.info("feedback not stored: %s", exc)
            return
        message = body.get("message") or {}
        channel = str((body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or "")
        if channel and user:
            client.chat_postEphemeral(channel=channel, user=user, thread_ts=message.get("thread_ts") or None,
                                      text=thanks_text(click.lang, click.rating))

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
                    self.post_files(client, channel, str(thread_ts), title, files, zipped=kind == LAUNCH_BUNDLE_ACTION)
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

    def post_files(self, client: WebClient, channel: str, thread_ts: str, title: str, files: Mapping[str, str], *,
                   zipped: bool = False) -> None:
        """Upload the files into the thread (files_upload_v2): `zipped` (the launch bundle) as one zip with its
        folders and executable scripts, else one upload per file; code blocks when the upload fails."""
        uploads: list[dict[str, Any]] = [
            {"content": text, "filename": name.replace("/", "_"), "title": name} for name, text in files.items()]
        if zipped:
            from service.documents.bundle import files_as_zip

            uploads = [{"file": files_as_zip(files), "filename": BUNDLE_ZIP, "title": title}]
        try:
            client.files_upload_v2(channel=channel, thread_ts=thread_ts, file_uploads=uploads, initial_comment=title)
            return
        except (SlackClientError, OSError) as exc:  # no files:write scope, upload refused, network
            log.warning("file upload failed, posting the document as code blocks: %s", exc)
        for blocks in document_messages(title, files):
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=title, blocks=blocks)


def _key(command: Mapping[str, Any]) -> str:
    """One slash command invocation (Slack makes a trigger id for each)."""
    return str(command.get("trigger_id") or "") or f"{command.get('channel_id')}:{command.get('user_id')}:" \
        f"{command.get('text')}"


def _asked(command: Mapping[str, Any], question: str) -> str:
    """Who asked what, quoted above the answer."""
    user, lang = str(command.get("user_id") or ""), language_of(question)
    quoted = escape(truncate(question, 500))
    return tr(lang, f"<@{user}> 问：{quoted}", f"<@{user}> asked: {quoted}") if user else quoted


def _text(result: AskResult | None, blocks: list[Block]) -> str:
    """The top-level `text` of a message: the answer's, or the (error) section's."""
    return fallback_text(result) if result else str(blocks[0]["text"]["text"])


def note_blocks(note: str) -> list[Block]:
    """A short mrkdwn note (already converted) as sections."""
    return [section(chunk) for chunk in split_text(note, 3000)[:50]] or [section("…")]
