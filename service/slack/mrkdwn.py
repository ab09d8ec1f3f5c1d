"""Markdown (the assistant's answer) to Slack mrkdwn, and text limits. Pure functions.

Slack's mrkdwn is not Markdown: bold is `*x*`, links are `<url|text>`, there are no headings or tables, and
`&`, `<`, `>` must be escaped. Bold markers next to CJK characters without spaces often do not render, so each
bold span is wrapped in zero-width spaces.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
ELLIPSIS = "…"
_FENCE = re.compile(r"^\s*```")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_MENTION = re.compile(r"<[@#!][^>]*>")
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")


def escape(text: str) -> str:
    """Escape the three characters Slack reserves for its own markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def bold(text: str) -> str:
    return f"{ZWSP}*{text}*{ZWSP}"


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters; a cut text ends with an ellipsis."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def _inline(text: str) -> str:
    """Escape, then links, bold, italic and strike-through outside inline code."""
    parts = _CODE_SPAN.split(text)
    for i, part in enumerate(parts):
        if i % 2:  # inline code stays literal (escaped only)
            parts[i] = escape(part)
            continue
        part = escape(part)
        part = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", part)
        part = _ITALIC.sub(lambda m: f"_{m.group(1)}_", part)
        part = _BOLD.sub(lambda m: bold(m.group(1) or m.group(2)), part)
        parts[i] = _STRIKE.sub(lambda m: f"~{m.group(1)}~", part)
    return "".join(parts)


def _plain(text: str) -> str:
    """Cell or heading text without Markdown emphasis (it goes inside bold or a code block)."""
    text = re.sub(r"\*\*|__|`", "", text)
    return _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)


def table_rows(lines: list[str]) -> list[list[str]]:
    """The cells of a Markdown table, header first, without the |---| rule."""
    return [[_plain(c.strip()) for c in line.strip().strip("|").split("|")]
            for line in lines if not _TABLE_RULE.match(line)]


def _table(lines: list[str]) -> list[str]:
    rows = table_rows(lines)
    return ["```", *(escape(" | ".join(r)) for r in rows), "```"]


def markdown_to_mrkdwn(md: str, *, drop_tables: bool = False) -> str:
    """Convert the assistant's Markdown; tables become preformatted text (or are dropped)."""
    out: list[str] = []
    lines = md.replace("\r\n", "\n").split("\n")
    i, in_fence = 0, False
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append("```")
        elif in_fence:
            out.append(escape(line))
        elif _TABLE_ROW.match(line):
            j = i
            while j < len(lines) and _TABLE_ROW.match(lines[j]):
                j += 1
            if not drop_tables:
                out.extend(_table(lines[i:j]))
            i = j
            continue
        elif m := _HEADING.match(line):
            out.append(bold(escape(_plain(m.group(1)))))
        elif _RULE.match(line):
            out.append("")
        else:
            m = _BULLET.match(line)
            if m:
                line = m.group(1) + "• " + line[m.end():]
            out.append(_inline(line))
        i += 1
    if in_fence:
        out.append("```")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def split_text(text: str, limit: int) -> list[str]:
    """Chunks of at most `limit` characters, cut at line ends; a cut inside a code block closes and reopens it."""
    chunks: list[str] = []
    cur: list[str] = []
    size, in_fence = 0, False

    def flush() -> None:
        nonlocal cur, size
        if cur:
            chunks.append("\n".join(cur + (["```"] if in_fence else [])))
        cur = ["```"] if in_fence else []
        size = sum(len(x) + 1 for x in cur)

    reserve = 4  # room for a closing fence
    for line in text.split("\n"):
        while len(line) > limit - reserve - 4:  # one line longer than a chunk: hard cut
            head, line = line[: limit - reserve - 8], line[limit - reserve - 8:]
            if size + len(head) + 1 > limit - reserve:
                flush()
            cur.append(head)
            size += len(head) + 1
            flush()
        if size + len(line) + 1 > limit - reserve:
            flush()
        cur.append(line)
        size += len(line) + 1
        if _FENCE.match(line):
            in_fence = not in_fence
    if cur and any(x.strip() for x in cur) and cur != ["```"]:
        chunks.append("\n".join(cur + (["```"] if in_fence else [])))
    return [c for c in chunks if c.strip() and c.strip() != "```\n```"]


def slack_text_to_plain(text: str) -> str:
    """A user's Slack message as plain text for the assistant: mentions removed, links and entities undone."""
    text = _MENTION.sub(" ", text)
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return " ".join(unescape(text).split())


SOURCE_HEADINGS = ("参考资料", "Sources")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_RELATIVE_LINK = re.compile(r"\[([^\]\n]+)\]\((/[^)\s]*)\)")
_WORKLOAD_NOTE = re.compile(r"\n*<!-- gpu-advisor:workload [\s\S]*?-->\s*$")


def without_sources(md: str) -> str:
    """The answer without its own "### 参考资料 / Sources" list: the message lists the citations once, below. The
    section ends at the next heading of its level or at the first paragraph after its list (the offer that follows)."""
    out: list[str] = []
    skipping = 0  # the level of the heading being left out
    for line in md.replace("\r\n", "\n").split("\n"):
        m = _HEADING.match(line)
        level = len(line) - len(line.lstrip("#")) if m else 0
        if skipping and ((m and level <= skipping) or (not m and line.strip() and not _LIST_ITEM.match(line))):
            skipping = 0
        if m and m.group(1).strip() in SOURCE_HEADINGS:
            skipping = level
            continue
        if not skipping:
            out.append(line)
    return "\n".join(out).strip()


def stream_markdown(md: str, *, drop_tables: bool) -> str:
    """The answer as the Markdown Slack's chat streaming renders: no sources section (listed below it), no page-
    relative links (their titles stay), tables dropped (the card shows the plan) or as preformatted text."""
    text = _RELATIVE_LINK.sub(lambda m: m.group(1), _WORKLOAD_NOTE.sub("", without_sources(md)))
    out: list[str] = []
    lines = text.split("\n")
    i, in_fence = 0, False
    while i < len(lines):
        if _FENCE.match(lines[i]):
            in_fence = not in_fence
        elif not in_fence and _TABLE_ROW.match(lines[i]):
            j = i
            while j < len(lines) and _TABLE_ROW.match(lines[j]):
                j += 1
            if not drop_tables:
                out += ["```", *(" | ".join(r) for r in table_rows(lines[i:j])), "```"]
            i = j
            continue
        out.append(lines[i])
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def paragraphs(text: str, limit: int = 1500) -> list[str]:
    """The text in pieces to stream, cut between paragraphs (or lines) and never inside a code block."""
    pieces: list[str] = []
    cur = ""
    for block in re.split(r"(?<=\n\n)", text):
        if cur and len(cur) + len(block) > limit and cur.count("```") % 2 == 0:
            pieces.append(cur)
            cur = ""
        cur += block
    return [*pieces, cur] if cur else pieces
