"""A conversation as OpenAI-style clients send it: the whole history in one request, no session id needed.

Chat Completions (`messages`) and Responses (`input`) both become a Conversation: the system text, the earlier
user and assistant turns, and the last user message. The system text is read for the answer's language ("Always
answer in English", "请用中文回答") and length ("be brief", "简短"). A client's background task (Open WebUI's
"### Task:" prompts for a title, tags or follow-up questions) is recognised so it gets a short fitting answer and
never becomes a stored conversation. Our own answers carry the workload they planned as a hidden Markdown comment
(`<!-- gpu-advisor:workload {...} -->`), so a client that trims the oldest turns still continues the same job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from service.lexicon import language_of

Role = Literal["user", "assistant"]
Lang = Literal["zh", "en"]

ARTIFACT = re.compile(r"\n*<!-- gpu-advisor:workload (\{.*?\}) -->\s*", re.S)
SESSION_MARK = re.compile(r"\n*<!-- gpu-advisor:session ([A-Za-z0-9._:@-]{1,128}) -->\s*")
_ENGLISH = re.compile(r"\b(?:answer|respond|reply|write|speak|talk)\w*\b[^.\n]{0,40}\bin english\b|"
                      r"\benglish only\b|\bonly (?:use )?english\b|用英文|用英语|英文回答|英语回答", re.I)
_CHINESE = re.compile(r"\b(?:answer|respond|reply|write|speak|talk)\w*\b[^.\n]{0,40}\bin (?:chinese|mandarin)\b|"
                      r"\bchinese only\b|用中文|用汉语|中文回答|汉语回答|简体中文", re.I)
_BRIEF = re.compile(r"\b(?:brief(?:ly)?|concise(?:ly)?|short(?:ly)?|terse|succinct|in (?:one|a few) sentences?|"
                    r"no more than \d+ words|under \d+ words|tl;?dr)\b|简短|简洁|简要|精简|一句话|不超过\d+字", re.I)


@dataclass(frozen=True)
class Conversation:
    message: str
    earlier: list[tuple[Role, str]] = field(default_factory=list)
    system: str = ""

    @property
    def lang(self) -> Lang | None:
        """The language the system message asks for, if it asks."""
        if _ENGLISH.search(self.system):
            return "en"
        if _CHINESE.search(self.system):
            return "zh"
        return None

    @property
    def brief(self) -> bool:
        return bool(_BRIEF.search(self.system))

    @property
    def task(self) -> str | None:
        return client_task(self.message)

    @property
    def session_hint(self) -> str | None:
        """The stored session our latest answer in the history names (so a stateless client keeps one session)."""
        for role, text in reversed(self.earlier):
            found = SESSION_MARK.findall(text) if role == "assistant" else []
            if found:
                return str(found[-1])
        return None

    @property
    def last_answer(self) -> str:
        """The latest assistant message in the history, without our comments ("" when there is none)."""
        for role, text in reversed(self.earlier):
            if role == "assistant":
                return SESSION_MARK.sub("", ARTIFACT.sub("", text)).strip()
        return ""

    def turns(self) -> list[dict[str, Any]]:
        """The earlier exchanges as history turns: each user message with the answer that followed it and the
        workload that answer carried (our artifact), oldest first; client background tasks left out."""
        out: list[dict[str, Any]] = []
        for role, text in self.earlier:
            if role == "user":
                out.append({"user": text, "assistant": "", "workload": None})
            elif out and not out[-1]["assistant"]:
                out[-1]["assistant"] = strip_artifact(text)
                out[-1]["workload"] = artifact_of(text)
            elif not out and artifact_of(text) is not None:  # the client trimmed the turn that asked for it:
                # its workload travels as itself (no user text to read back)
                out.append({"user": "", "assistant": strip_artifact(text), "workload": artifact_of(text)})
        return [t for t in out if (t["user"].strip() or t["workload"]) and client_task(t["user"]) is None]


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list (text, input_text, output_text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p.get("text", "")) for p in content
                 if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")]
        return "\n".join(p for p in parts if p)
    return ""


def from_messages(items: Iterable[tuple[str, str]]) -> Conversation | None:
    """(role, text) pairs in order → a Conversation, or None when no user message is there.

    System and developer messages join the system text; tool and function messages are skipped; messages after
    the last user message (a trailing assistant prefill) are ignored."""
    pairs = [(role, text) for role, text in items]
    last = max((i for i, (role, _) in enumerate(pairs) if role == "user"), default=-1)
    if last < 0:
        return None
    system = "\n".join(t for r, t in pairs if r in ("system", "developer") and t)
    earlier: list[tuple[Role, str]] = []
    for role, text in pairs[:last]:
        if role == "user":
            earlier.append(("user", text))
        elif role == "assistant" and text:
            earlier.append(("assistant", text))
    return Conversation(message=pairs[last][1], earlier=earlier, system=system)


# -- the workload artifact in our answers ----------------------------------------------------------

def with_artifact(answer: str, workload: Mapping[str, Any] | None, session_id: str | None = None) -> str:
    """The answer with its planned workload (and the session that stores the conversation) appended as invisible
    Markdown comments: a client that sends the answer back continues the same job in the same stored session."""
    if not workload:  # an answer without a plan stays exactly as written
        return answer
    slim = {k: v for k, v in workload.items() if v not in (None, [], "")}
    blob = json.dumps(slim, ensure_ascii=False, separators=(",", ":"), default=str).replace("--", "-\\u002d")
    out = f"{answer}\n\n<!-- gpu-advisor:workload {blob} -->"
    return f"{out}\n<!-- gpu-advisor:session {session_id} -->" if session_id else out


def artifact_of(answer: str) -> dict[str, Any] | None:
    found = ARTIFACT.findall(answer)
    if not found:
        return None
    try:
        value = json.loads(found[-1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def strip_artifact(answer: str) -> str:
    return SESSION_MARK.sub("", ARTIFACT.sub("", answer)).rstrip()


# -- answer shaping --------------------------------------------------------------------------------

def shorten(markdown: str) -> str:
    """The brief answer: the verdict part (heading, the pick table, the budget line) before the first subsection."""
    body = strip_artifact(markdown)
    head, sep, _rest = body.partition("\n### ")
    return head.rstrip() if sep else body


# -- client background tasks -----------------------------------------------------------------------

_HISTORY = re.compile(r"<chat_history>(.*?)</chat_history>", re.S)


def client_task(message: str) -> str | None:
    """The kind of background task a client sends (Open WebUI: title, tags, follow_ups, queries, ...), or None."""
    text = message.lstrip()
    if not text.startswith("### Task:"):
        return None
    spec = text[:2000].lower()
    for kind, words in (("follow_ups", ("follow_ups", "follow-up")), ("tags", ('"tags"', "tags")),
                        ("title", ('"title"', "title")), ("queries", ('"queries"', "queries")),
                        ("emoji", ("emoji",)), ("autocomplete", ("autocomplet", '"text"'))):
        if any(w in spec for w in words):
            return kind
    return "other"


def _first_user_line(history: str) -> str:
    for line in history.splitlines():
        if line.strip().upper().startswith("USER:"):
            return line.split(":", 1)[1].strip()
    return history.strip().splitlines()[0] if history.strip() else ""


def task_answer(message: str, kind: str) -> str:
    """A short answer that fits the task's requested JSON format; no planning, nothing stored."""
    found = _HISTORY.search(message)
    history = found.group(1) if found else ""
    lang = language_of(history or message)
    first = strip_artifact(_first_user_line(history))
    if kind == "title":
        limit = 18 if lang == "zh" else 48
        title = first if len(first) <= limit else first[:limit].rstrip() + "…"
        return json.dumps({"title": title or ("GPU 训练配置" if lang == "zh" else "GPU training plan")},
                          ensure_ascii=False)
    if kind == "tags":
        tags = ["GPU", "模型训练", "云服务器"] if lang == "zh" else ["GPU", "Model training", "Cloud"]
        return json.dumps({"tags": tags}, ensure_ascii=False)
    if kind == "follow_ups":
        ups = (["预算改成8000呢？", "生成申请说明", "生成启动脚本"] if lang == "zh" else
               ["What if the budget is ¥8000 per month?", "Generate the request document",
                "Generate the launch scripts"])
        return json.dumps({"follow_ups": ups}, ensure_ascii=False)
    if kind == "queries":
        return json.dumps({"queries": []})
    if kind == "emoji":
        return "🖥️"
    if kind == "autocomplete":
        return json.dumps({"text": ""})
    return ""
