"""How an answer quotes a passage of the knowledge base: its body without the title line it opens with (the answer
shows the title once, as the link) and its first sentence without Markdown marks (the one-line answer to a how-to
question)."""

from __future__ import annotations

import re

_MARKS = re.compile(r"^#+\s.*$|[*`>]|(?<!\w)_|_(?!\w)|\[([^\]]*)\]\([^)]*\)", re.M)  # an identifier's underscores (o_proj) stay
_TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)
_LIST_MARKER = re.compile(r"^\s*(?:[-*]|\d+[.、)])\s+", re.M)  # the item is the sentence
_SENTENCE = re.compile(r"^(.{6,}?[。！？!?]|.{6,}?\.)(?:\s|$)", re.S)


def passage_body(text: str, title: str) -> str:
    """A passage's text without its leading title line."""
    text = text.strip()
    head, _, rest = text.partition("\n")
    return rest.strip() if head.strip() and (head.strip() == title.strip() or head.strip() in title) else text


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a passage, without Markdown marks, cut to `limit` characters."""
    body = _MARKS.sub(lambda m: m.group(1) or "", text).strip()
    body = _TABLE_ROW.sub("", body).strip()
    body = _LIST_MARKER.sub("", body)
    m = _SENTENCE.search(body)
    out = (m.group(1) if m else body.split("\n", 1)[0]).replace("\n", " ").strip()
    out = out if len(out) <= limit else out[: limit - 1] + "…"
    return out + "”" * (out.count("“") > out.count("”"))  # a quote the sentence ends inside is closed
