"""The offline model's second step: the answer from the turn's tool artifacts. The first line answers the question
(the question type's renderer, the catalog fact, or the guide's own sentence); a reading the reader was unsure of
says in one line what else the question could mean; the passages and citations follow, each once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import ToolMessage

from service.assistant import answer
from service.assistant.intents import render
from service.assistant.intents.knowledge import first_sentence, passage_body, render_fact
from service.assistant.registry import BY_TOOL

Artifact = dict[str, Any]


def _artifacts(results: Sequence[ToolMessage]) -> dict[str, list[Artifact]]:
    arts: dict[str, list[Artifact]] = {}
    for m in results:
        arts.setdefault(m.name or "", []).append(m.artifact if isinstance(m.artifact, dict) else {})
    return arts


def _passages(arts: dict[str, list[Artifact]]) -> list[Artifact]:
    """The passages found, each once (by id, then by title: the same section in two chunks is one source)."""
    seen: set[str] = set()
    out = []
    for p in (p for a in arts.get("search_knowledge", []) for p in a.get("passages", [])):
        key = str(p.get("title") or p.get("id"))
        if p.get("id") not in seen and key not in seen:
            seen.update({str(p.get("id")), key})
            out.append(p)
    return out


def _error(art: Artifact, ph: Artifact) -> str:
    err = art["error"]
    return str(ph["error"].format(message=err["message"], fix=err.get("fix", "")))


def _also(reading: dict[str, Any], ph: Artifact) -> list[str]:
    alt = reading.get("alternative")
    if not alt or alt not in ph["also_hint"]:
        return []
    return [str(ph["also_line"]).format(type=ph["type_names"].get(alt, alt), hint=ph["also_hint"][alt])]


def _knowledge(arts: dict[str, list[Artifact]], passages: list[Artifact], ph: Artifact) -> list[str]:
    fact = next((a for a in arts.get("lookup_fact", []) if a.get("answer") is not None or a.get("rules")
                 or a.get("cloud_gpus") or a.get("rows") or a.get("unlisted")), None)
    lines: list[str] = []
    if fact is not None and "error" not in fact:
        lines.append(render_fact(fact, ph))
    elif passages:
        lines.append(first_sentence(passage_body(passages[0])))
    applied = next(iter(arts.get("check_feasibility", [])), None)
    if applied is not None and "error" not in applied:
        first = render.render_feasibility(applied, ph).split("\n", 1)[0]
        lines += ["", str(ph["applied"]).format(line=first)]
    facts = [answer.gpu_fact(a["gpu"], ph) for a in arts.get("lookup_catalog", []) if "gpu" in a]
    facts += [answer.instance_fact(a["instance"], ph) for a in arts.get("lookup_catalog", []) if "instance" in a]
    if facts:
        lines += ["", *dict.fromkeys(facts)]
    if not lines:
        return [str(ph["no_passage"])]
    for p in passages[:3]:
        lines += ["", f"**[{p.get('title') or p['id']}]({answer.knowledge_href(str(p['id']))})**", "",
                  passage_body(p)[:700]]
    return lines


def compose_answer(results: Sequence[ToolMessage], reading: dict[str, Any], notes: list[str], ph: Artifact,
                   lang: str) -> str:
    arts = _artifacts(results)
    passages = _passages(arts)
    body: list[str] | None = None
    for name, items in arts.items():
        qt = BY_TOOL.get(name)
        if qt is None or qt.name in ("plan", "knowledge") or reading.get("type") == "knowledge":
            continue
        art = items[0]
        body = [_error(art, ph)] if "error" in art else [qt.render(art, ph)]
        break
    plan_art = next(iter(arts.get("plan_training", [])), None)
    if body is None and plan_art is not None:
        text = _error(plan_art, ph) if "error" in plan_art else answer.render_plan(plan_art, lang, ph, passages)
        body = [_with_documents(text, arts, ph)]
        passages = []  # render_plan cites them
    if body is None:
        body = _knowledge(arts, passages, ph)
    lines = [*body, *(["", *_also(reading, ph)] if _also(reading, ph) else [])]
    lines += ["", *answer.render_citations(passages, ph)]
    text = "\n".join(lines).strip()
    return "\n".join(f"> {n}" for n in notes) + "\n\n" + text if notes else text


def _with_documents(text: str, arts: dict[str, list[Artifact]], ph: Artifact) -> str:
    for doc in arts.get("generate_request_document", []):
        if "markdown" in doc:
            text += "\n\n" + ph["doc_ready"].format(document=doc["markdown"])
    for bundle in arts.get("generate_launch_bundle", []):
        if "files" in bundle:
            files = bundle["files"]
            first = next(iter(files), "")
            preview = f"```yaml\n{files.get('train.yaml', files.get(first, ''))}\n```"
            text += "\n\n" + ph["bundle_ready"].format(files=", ".join(files), preview=preview)
    return text
