"""The answer text of a turn, from its typed answer: the question type's render first (its first line answers the
question), then, when the reader was unsure, one line on what else the question could mean, then the citations,
each once. Notes the reader recognised but could not use come first, quoted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.errors import AdvisorError
from service.questions import plan_text
from service.questions.base import AnswerBase, Phrases, QuestionModule
from service.questions.first_line import lead
from service.questions.parts import PassageRef


def unique_passages(passages: Sequence[PassageRef]) -> list[PassageRef]:
    """Each passage once (by id, then by title: the same section in two chunks is one source)."""
    seen: set[str] = set()
    out = []
    for p in passages:
        key = p.title or p.id
        if p.id not in seen and key not in seen:
            seen.update({p.id, key})
            out.append(p)
    return out


def also_line(alternative: str | None, ph: Phrases) -> list[str]:
    hints = ph.group("also_hint")
    if not alternative or alternative not in hints:
        return []
    return [ph.text("also_line", type=ph.name("type_names", alternative), hint=hints.text(alternative))]


def error_text(exc: AdvisorError, ph: Phrases) -> str:
    """The error in the answer's language: its Chinese twin in a Chinese answer, where it has one."""
    zh = ph.zh and bool(exc.message_zh)
    return ph.text("error", message=exc.message_zh if zh else exc.message,
                   fix=(exc.fix_zh or exc.fix) if zh else exc.fix)


def with_notes(text: str, notes: Sequence[str]) -> str:
    """The notes (what was carried over, what could not be used) quoted after the answer's first line: the first
    line answers the question."""
    lines = text.split("\n")
    lead = 0
    while lead < len(lines) and (lines[lead].startswith(">") or not lines[lead].strip()):
        lead += 1  # the body's own notes ('> 按 vLLM 估算') go after its first line too
    notes = [ln[1:].strip() for ln in lines[:lead] if ln.startswith(">")] + [n for n in notes if n]
    text = "\n".join(lines[lead:])
    if not notes:
        return text
    first, _, rest = text.partition("\n")
    quoted = "\n".join(f"> {n}" for n in notes)
    return f"{first}\n\n{quoted}" + (f"\n\n{rest.lstrip(chr(10))}" if rest.strip() else "")


def compose(module: QuestionModule[Any, Any], answer: AnswerBase, passages: Sequence[PassageRef],
            alternative: str | None, notes: Sequence[str], ph: Phrases) -> str:
    """The whole answer text. A plan cites its passages inside its own text; the others get them appended."""
    body = module.render(answer, ph)
    first = lead(answer, ph)
    if first:
        body = f"{first}\n{body}"
    cited = [] if module.name == "plan" else unique_passages(passages)
    lines = [body, *(["", *also_line(alternative, ph)] if also_line(alternative, ph) else [])]
    lines += ["", *plan_text.render_citations(cited, ph)]
    return with_notes("\n".join(lines).strip(), notes)
