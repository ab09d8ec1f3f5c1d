"""The slash command's own HTTP response carries the answer, so a user sees it whatever happens to the Web API later
(slack.com unreachable from the server, the bot not in the channel, a post refused).

    pending = PendingAnswers()
    future = pending.start(key, lambda: handlers.answer(...))   # the ack waits up to ACK_WAIT_S for it
    reply = command_reply(future, lang)                          # ack(**reply): the answer's first lines, privately
    later = pending.take(key)                                    # the lazy listener posts the same answer in a thread

The answer is computed once: the ack shows its first lines (the answer is on the first line) with a note that the
whole answer, its table and buttons follow in a new thread; the lazy listener posts that thread from the same
result. An answer slower than ACK_WAIT_S (Slack wants the response within 3 s) is acknowledged with a line saying
it is on its way, and arrives in the thread (or privately through response_url) as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from service.assistant.types import AskResult
from service.slack.blocks import answer_text
from service.slack.kit import Block, Lang, context, section, tr
from service.slack.mrkdwn import markdown_to_mrkdwn, split_text

ACK_WAIT_S = 2.0  # Slack shows an error after 3 s; Bolt and the network need the rest
PREVIEW_LINES = 12
PREVIEW_CHARS = 1500
MAX_PENDING = 256  # answers waiting for their lazy listener (each is taken within seconds)
Answer = tuple[AskResult | None, list[Block]]


class PendingAnswers:
    """Answers started by an ack, kept until the command's lazy listener takes them (a bounded map, thread-safe)."""

    def __init__(self, workers: int = 4) -> None:
        self._futures: OrderedDict[str, Future[Answer]] = OrderedDict()
        self._lock = threading.Lock()
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None

    def start(self, key: str, work: Callable[[], Answer]) -> Future[Answer]:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="gpu-advisor-slash")
            future = self._pool.submit(work)
            self._futures[key] = future
            while len(self._futures) > MAX_PENDING:
                self._futures.popitem(last=False)
            return future

    def take(self, key: str) -> Future[Answer] | None:
        with self._lock:
            return self._futures.pop(key, None)


def preview(result: AskResult) -> str:
    """The answer's first lines in mrkdwn (its first line is the answer), at most PREVIEW_LINES / PREVIEW_CHARS."""
    lines = [line for line in markdown_to_mrkdwn(answer_text(result)).splitlines()]
    kept: list[str] = []
    for line in lines:
        if len(kept) >= PREVIEW_LINES or sum(len(k) + 1 for k in kept) + len(line) > PREVIEW_CHARS:
            kept.append("…")
            break
        kept.append(line)
    return "\n".join(kept).strip()


def _hint(lang: Lang) -> str:
    return tr(lang, "完整回答（表格、文档与反馈按钮）随后发在本频道的新话题里；如果没有出现，请以上面为准并稍后再试。",
              "The whole answer (table, document and feedback buttons) follows in a new thread in this channel; if "
              "it does not appear, rely on the lines above and try again later.")


def command_reply(future: Future[Answer], lang: Lang, wait_s: float = ACK_WAIT_S) -> dict[str, Any]:
    """What ack() sends back for a slash command: the answer's first lines, privately, or a line that it is coming."""
    try:
        result, blocks = future.result(timeout=wait_s)
    except FutureTimeout:
        text = tr(lang, "⏳ 正在计算，回答会发在本频道的新话题里。", "⏳ Working on it: the answer will follow in a new thread "
                  "in this channel.")
        return {"response_type": "ephemeral", "text": text}
    if result is None:  # what was wrong and how to fix it (error_blocks)
        return {"response_type": "ephemeral", "text": str(blocks[0]["text"]["text"]), "blocks": blocks}
    body = preview(result)
    chunks = split_text(body, 2900)[:3] or ["…"]
    shown: list[Block] = [section(chunk) for chunk in chunks]
    return {"response_type": "ephemeral", "text": chunks[0], "blocks": [*shown, context([_hint(result.language)])]}
