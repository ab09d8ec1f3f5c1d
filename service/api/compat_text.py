"""How an answer on the OpenAI-compatible routes is written for the client that asked.

    r = rendering(request, settings, max_tokens=body.max_tokens)
    body, suffix, cut = r.write(result.answer_markdown, result.workload, result.session_id, result.language)

- Links to the knowledge pages are absolute (`GPU_ADVISOR_PUBLIC_URL`, else the URL the request came to): a client
  that is not this server's page cannot open `/knowledge/...`.
- Plain-text clients (llm, the SDKs printing `content`, curl) get clean text: no `<!-- gpu-advisor:... -->`
  comments. Markdown chat UIs (Open WebUI, Chatbox, LobeChat, browsers: by User-Agent) get them, invisible there,
  so a trimmed history still carries the planned workload and the session. `X-Answer-Format: text | markdown`
  (or `GPU_ADVISOR_COMPAT_FORMAT`) decides instead.
- `max_tokens` (`max_completion_tokens`, Responses' `max_output_tokens`) shortens the answer at a line, and the
  reply says so; finish_reason is then "length".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.api.conversation import with_artifact

# User-Agents of chat UIs that render Markdown (an HTML comment is invisible there) and send the history back
MARKDOWN_UIS = ("mozilla/", "aiohttp", "open-webui", "openwebui", "chatbox", "lobehub", "lobe-chat", "librechat",
                "cherrystudio", "nextchat")
FORMAT_HEADER = "x-answer-format"
KNOWLEDGE_LINK = re.compile(r"(?<=\]\()/knowledge/|(?<=<)/knowledge/")
CUT_NOTE = {"zh": "（回答已按 max_tokens={n} 截短；要完整回答，请调高 max_tokens。）",
            "en": "(Answer shortened to max_tokens={n}; raise max_tokens for the whole answer.)"}


def approx_tokens(text: str) -> int:
    """A rough token count (no tokenizer here): one per CJK character, one per 4 other characters."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def absolute_links(text: str, base_url: str) -> str:
    return KNOWLEDGE_LINK.sub(f"{base_url.rstrip('/')}/knowledge/", text) if base_url else text


def cap_tokens(text: str, max_tokens: int, lang: str) -> tuple[str, bool]:
    """(text within about `max_tokens`, cut?): whole lines while they fit, then the note that says so."""
    if approx_tokens(text) <= max_tokens:
        return text, False
    note = CUT_NOTE["zh" if lang == "zh" else "en"].format(n=max_tokens)
    budget = max(0, max_tokens - approx_tokens(note) - 2)
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        cost = approx_tokens(line) + 1
        if used + cost > budget:
            if not kept and budget > 0:  # one long first line: cut inside it
                kept.append(line[: max(1, budget * 2)].rstrip() + "…")
            break
        kept.append(line)
        used += cost
    head = "\n".join(kept).rstrip()
    return (f"{head}\n\n{note}" if head else note), True


def wants_plain(headers: Mapping[str, str], setting: str = "auto") -> bool:
    said = headers.get(FORMAT_HEADER, "").strip().lower()
    if said in ("text", "plain", "markdown"):
        return said != "markdown"
    if setting in ("text", "markdown"):
        return setting == "text"
    agent = headers.get("user-agent", "").lower()
    return not any(ui in agent for ui in MARKDOWN_UIS)


@dataclass(frozen=True)
class Rendering:
    plain: bool = False
    base_url: str = ""
    max_tokens: int | None = None

    def write(self, answer: str, workload: Mapping[str, Any] | None, session_id: str | None,
              lang: str) -> tuple[str, str, bool]:
        """(the answer as this client reads it, what follows it (the artifact comments, or ""), was it cut?)."""
        text, cut = absolute_links(answer, self.base_url), False
        if self.max_tokens is not None:
            text, cut = cap_tokens(text, self.max_tokens, lang)
        if self.plain:
            return text, "", cut
        return text, with_artifact(text, workload, session_id)[len(text):], cut

    def relative(self, text: str) -> str:
        """Our answer as stored, from the text a client sends back (absolute links made relative again)."""
        return text.replace(f"{self.base_url}/knowledge/", "/knowledge/") if self.base_url else text

    def line(self, text: str) -> str:
        """One streamed line, links made absolute."""
        return absolute_links(text, self.base_url)


def rendering(headers: Mapping[str, str], base_url: str, public_url: str, setting: str,
              max_tokens: int | None = None) -> Rendering:
    return Rendering(plain=wants_plain(headers, setting), base_url=(public_url or base_url).rstrip("/"),
                     max_tokens=max_tokens)
