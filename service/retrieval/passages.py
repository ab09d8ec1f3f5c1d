"""How an answer quotes a passage of the knowledge base: its body without the title line it opens with (the answer
shows the title once, as the link) and its first sentence without Markdown marks (the one-line answer to a how-to
question)."""

from __future__ import annotations

import re

_MARKS = re.compile(r"^#+\s.*$|[*`>]|(?<!\w)_|_(?!\w)|\[([^\]]*)\]\([^)]*\)", re.M)  # an identifier's underscores (o_proj) stay
_TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)
_LIST_MARKER = re.compile(r"^\s*(?:[-*]|\d+[.、)])\s+", re.M)  # the item is the sentence
_SENTENCE = re.compile(r"^(.{6,}?[。！？!?]|.{6,}?\.)(?:\s|$)", re.S)
_ITEM = re.compile(r"\n(?=\s*(?:[-*]|\d+[.、)])\s)|\n\s*\n")  # a passage's list items and paragraphs


def passage_body(text: str, title: str) -> str:
    """A passage's text without its leading title line."""
    text = text.strip()
    head, _, rest = text.partition("\n")
    return rest.strip() if head.strip() and (head.strip() == title.strip() or head.strip() in title) else text


def passage_items(text: str, title: str) -> list[str]:
    """A passage's list items and paragraphs, stripped, in order (its title line left out)."""
    return [item.strip() for item in _ITEM.split(passage_body(text, title))]


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a passage, without Markdown marks, cut to `limit` characters."""
    body = _MARKS.sub(lambda m: m.group(1) or "", text).strip()
    body = _TABLE_ROW.sub("", body).strip()
    body = _LIST_MARKER.sub("", body)
    m = _SENTENCE.search(body)
    out = " ".join((m.group(1) if m else body.split("\n", 1)[0]).split())  # a wrapped line's indent is one space
    out = out if len(out) <= limit else out[: limit - 1] + "…"
    return out + "”" * (out.count("“") > out.count("”"))  # a quote the sentence ends inside is closed


_NOT_PROSE = ("-->", "--|", "|--", "-- ", "```", '["', "graph ", "flowchart ", "subgraph ")
_YES_EN: tuple[str, ...] = ("yes",)
_NO_EN: tuple[str, ...] = ("no",)
_YES_ZH: tuple[str, ...] = ("是", "对", "可以", "需要", "能", "会", "有", "安全")
_NO_ZH: tuple[str, ...] = ("不", "否", "没有", "无需", "不是", "不能", "不会", "不需要", "不可以", "不行")
_STOPS = ("。", "，", ",", ".", "；", ";", "：", ":", "!", "！")


def is_prose(sentence: str) -> bool:
    """Whether a passage's first sentence reads as an answer: not empty, not a diagram (Mermaid), code or table
    fragment, and mostly words (letters or CJK) rather than marks and numbers."""
    s = sentence.strip()
    if len(s) < 6 or any(mark in s for mark in _NOT_PROSE) or s.startswith(("|", "[", "{")):
        return False
    words = sum(1 for ch in s if ch.isalpha())  # CJK characters are alphabetic to str.isalpha
    return words >= 0.5 * len(s.replace(" ", ""))


def verdict_of(sentence: str) -> str | None:
    """'yes' or 'no' when the sentence opens with that answer ('Yes, if ...', 'No.', '是。', '不需要，'), else None:
    a passage written answer-first states its verdict in its first word."""
    s = sentence.strip()
    low = s.lower()
    for words, verdict in ((_YES_EN, "yes"), (_NO_EN, "no")):
        if any(low.startswith(w) and low[len(w):len(w) + 1] in _STOPS for w in words):
            return verdict
    for words, verdict in ((_NO_ZH, "no"), (_YES_ZH, "yes")):  # 不需要 before 需要
        if any(s.startswith(w) and s[len(w):len(w) + 1] in _STOPS for w in sorted(words, key=len, reverse=True)):
            return verdict
    return None


_WORD = re.compile(r"[a-z]+|[0-9]+|[\u4e00-\u9fff]+")
_STOPWORDS = frozenset({"a", "an", "the", "is", "are", "am", "be", "do", "does", "did", "can", "could", "will",
                        "would", "should", "i", "we", "you", "it", "its", "my", "our", "to", "of", "in", "on", "for",
                        "with", "and", "or", "but", "if", "at", "by", "as", "that", "this", "what", "which", "how",
                        "why", "when", "there", "than", "so"})


def _keys(text: str) -> set[str]:
    """Content words of a text: English words (a plural's s dropped, stop words and bare numbers left out) and
    Chinese bigrams."""
    out: set[str] = set()
    for w in _WORD.findall(text.lower()):
        if w[0] >= "\u4e00":
            out |= {w[i:i + 2] for i in range(max(1, len(w) - 1))}
        elif w not in _STOPWORDS and not w.isdigit():  # a number ('2' of ZeRO-2, of Qwen2.5) names nothing alone
            out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


def overlap(heading: str, question: str) -> float:
    """The share of a heading's content words that the question also has (0..1; 0 for an empty heading): how
    nearly a passage headed as a question is the question asked."""
    keys = _keys(heading)
    return len(keys & _keys(question)) / len(keys) if keys else 0.0
