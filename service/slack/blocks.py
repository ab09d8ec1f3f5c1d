"""Block Kit builders: pure functions from an AskResult (or a document) to message payloads.

A streamed answer ends with card_blocks: the top pick per cloud (and why, when it is neither the cheapest nor the
fastest), one table of candidates (a Slack `table` block, or preformatted text where tables are not accepted),
warnings, sources, two buttons, then any extra (the feedback buttons). answer_blocks is the same as one message
with a header and the answer text, where Slack will not stream.
A serving answer (`answer.kind` serving) ends with its own card instead (serving_blocks.py): the count first, the
engine's figures, the pick per cloud with ¥/month and ¥ per million tokens, the launch command, warnings, sources.
Every builder keeps Slack's limits: 50 blocks, 3000 characters per text, 10 fields or context elements.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from service.assistant.types import AskResult
from service.slack.cards import serving_card, training_plan
from service.slack.kit import (
    BILLING,
    CLOUDS,
    MAX_BLOCKS,
    MAX_CONTEXT_ELEMENTS,
    MAX_FALLBACK_TEXT,
    MAX_FIELD_TEXT,
    MAX_FIELDS,
    MAX_HEADER,
    MAX_TABLE_ROWS,
    MAX_TEXT,
    METHODS,
    Block,
    Lang,
    _cny,
    _hours,
    _label,
    _mrkdwn,
    _num,
    context,
    section,
    tr,
)
from service.slack.mrkdwn import bold, escape, markdown_to_mrkdwn, split_text, truncate, without_sources

# Interactive ids are constants so that rendering and routing cannot drift apart.
REQUEST_DOC_ACTION = "gpu_advisor_request_document"
LAUNCH_BUNDLE_ACTION = "gpu_advisor_launch_bundle"
DOCUMENT_ACTIONS = (REQUEST_DOC_ACTION, LAUNCH_BUNDLE_ACTION)

def usage_text(lang: Lang) -> str:
    return tr(lang, "告诉我训练任务，例如：`/gpu 用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000`",
              "Describe the training job, e.g. `/gpu LoRA fine-tune Qwen2-7B on 100k QA pairs, "
              "budget ¥3000 a month`")


def error_blocks(lang: Lang, detail: str = "") -> list[Block]:
    """The friendly reply when the assistant fails; `detail` is a user-facing error (what was wrong, the fix)."""
    head = tr(lang, "😵 抱歉，这次没能算出结果。", "😵 Sorry, I could not work that out.")
    tail = detail or tr(lang, "请稍后重试；如果一直失败，请联系管理员查看服务日志。",
                        "Please try again; if it keeps failing, ask an admin to check the service log.")
    return [section(f"{head}\n{escape(tail)}")]


def _candidates(plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The picks first (in the plan's cloud order), then the other candidates in rank order."""
    cands = [c for c in plan.get("candidates") or [] if isinstance(c, Mapping)]
    picked = list((plan.get("picks") or {}).values())
    first = [c for t in picked for c in cands if c.get("instance_type") == t][: len(picked)]
    return first + [c for c in cands if c.get("instance_type") not in picked]


def _gpus(c: Mapping[str, Any]) -> str:
    nodes = int(c.get("nodes") or 1)
    per = f"{_num(c.get('gpu_count'))} × {c.get('gpu', '?')}"
    return per if nodes <= 1 else f"{nodes} × ({per})"


def _budget(c: Mapping[str, Any]) -> str:
    ok = c.get("within_budget")
    return "—" if ok is None else ("✅" if ok else "❌")


def _pick_field(c: Mapping[str, Any], lang: Lang, why: Mapping[str, Any] | None = None) -> str:
    cloud = _label(CLOUDS, str(c.get("cloud", "")), lang)
    hours = tr(lang, f"约 {_hours(c.get('training_hours'))} 小时", f"~{_hours(c.get('training_hours'))} h")
    cost = f"{_cny(c.get('total_cost_cny'))} ({_label(BILLING, str(c.get('billing', '')), lang)})"
    lines = [bold(cloud), f"`{escape(str(c.get('instance_type', '?')))}`", escape(_gpus(c)),
             f"{hours} · {cost} {_budget(c)}".rstrip()]
    if why:  # the pick is neither the cloud's cheapest nor its fastest option: the engine's reason
        lines.append(f"_{escape(str(why.get('message_zh') if lang == 'zh' else why.get('message')))}_")
    return truncate("\n".join(lines), MAX_FIELD_TEXT)


def _header(plan: Mapping[str, Any], lang: Lang) -> Block:
    model, job = plan.get("model"), plan.get("job")
    name = str(model.get("name") or model.get("id") or "") if isinstance(model, Mapping) else ""
    method = _label(METHODS, str(job.get("method") or ""), lang) if isinstance(job, Mapping) else ""
    title = tr(lang, "GPU 配置推荐", "GPU recommendation") + (f": {name}" if name else "") + (
        f" · {method}" if method else "")
    return {"type": "header", "text": {"type": "plain_text", "text": truncate(title, MAX_HEADER), "emoji": True}}


def _table_header(lang: Lang) -> list[str]:
    return [tr(lang, "云", "Cloud"), tr(lang, "实例", "Instance"), "GPU", tr(lang, "策略", "Strategy"),
            tr(lang, "每卡显存", "Mem/GPU"), tr(lang, "时长", "Hours"), tr(lang, "费用", "Cost"),
            tr(lang, "预算", "Budget")]


def table_rows(plan: Mapping[str, Any], lang: Lang) -> list[list[str]]:
    """The candidate table as text cells, header first; picks are starred."""
    picked = set((plan.get("picks") or {}).values())
    rows = [_table_header(lang)]
    for c in _candidates(plan)[: MAX_TABLE_ROWS - 1]:
        strategy = c.get("strategy") or {}
        mem = f"{_num(c.get('memory_per_gpu_gib'))}/{_num(c.get('gpu_memory_gib'))} GiB"
        rows.append([
            _label(CLOUDS, str(c.get("cloud", "")), lang),
            ("★ " if c.get("instance_type") in picked else "") + str(c.get("instance_type", "?")),
            _gpus(c),
            str(strategy.get("label", "—")) if isinstance(strategy, Mapping) else "—",
            mem, _hours(c.get("training_hours")),
            f"{_cny(c.get('total_cost_cny'))} {_label(BILLING, str(c.get('billing', '')), lang)}",
            _budget(c),
        ])
    return [[truncate(cell or "—", 200) for cell in row] for row in rows]


def candidate_table(plan: Mapping[str, Any], lang: Lang, *, native: bool = True) -> Block:
    """A `table` block, or (native=False) the same rows as preformatted text in a section."""
    rows = table_rows(plan, lang)
    if native:
        right = {4, 5, 6}
        return {"type": "table",
                "column_settings": [{"align": "right" if i in right else "left", "is_wrapped": i == 3}
                                    for i in range(len(rows[0]))],
                "rows": [[{"type": "raw_text", "text": cell} for cell in row] for row in rows]}
    body = "\n".join(" | ".join(r) for r in rows)
    return section("```\n" + truncate(escape(body), MAX_TEXT - 8) + "\n```")


def _warnings(plan: Mapping[str, Any], lang: Lang) -> list[str]:
    picked = set((plan.get("picks") or {}).values())
    seen: dict[str, None] = {}
    for c in _candidates(plan):
        if c.get("instance_type") not in picked:
            continue
        for w in c.get("warnings") or []:
            if isinstance(w, Mapping):
                text = str(w.get("message_zh") if lang == "zh" and w.get("message_zh") else w.get("message", ""))
                if text:
                    seen.setdefault(f"⚠️ {escape(text)}", None)
    return list(seen)


def _sources(result: AskResult) -> list[str]:
    out: dict[str, None] = {}
    for c in result.citations:
        title = escape(c.title or c.id)
        if c.url.startswith(("http://", "https://")):
            out.setdefault(f"📄 <{c.url}|{truncate(title, 200)}>", None)
        else:
            out.setdefault(f"📄 {truncate(title, 200)} · `{escape(c.source or c.id)}`", None)
    return list(out)


def action_value(session_id: str, lang: Lang) -> str:
    return json.dumps({"session": session_id, "lang": lang}, separators=(",", ":"))


def parse_action_value(value: str) -> tuple[str, Lang]:
    """(session id, language) from a button's value; ("", "zh") when it cannot be read."""
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        return "", "zh"
    if not isinstance(data, dict):
        return "", "zh"
    return str(data.get("session") or ""), "en" if data.get("lang") == "en" else "zh"


def document_buttons(session_id: str, lang: Lang) -> Block:
    value = action_value(session_id, lang)
    return {"type": "actions", "block_id": "gpu_advisor_documents", "elements": [
        {"type": "button", "action_id": REQUEST_DOC_ACTION, "value": value, "style": "primary",
         "text": {"type": "plain_text", "text": "生成申请说明 / Request document", "emoji": True}},
        {"type": "button", "action_id": LAUNCH_BUNDLE_ACTION, "value": value,
         "text": {"type": "plain_text", "text": "启动脚本 / Launch bundle", "emoji": True}},
    ]}


def _fields(plan: Mapping[str, Any], lang: Lang) -> list[Block]:
    reasons = plan.get("pick_reasons") or {}
    fields = [_pick_field(c, lang, reasons.get(str(c.get("cloud")))) for c in _candidates(plan)[: len(plan.get("picks") or {})]]
    return [{"type": "section", "fields": [_mrkdwn(f) for f in fields[:MAX_FIELDS]]}] if fields else []


def _tail(result: AskResult, plan: Mapping[str, Any], extra: Sequence[Block],
          warned: Sequence[str] | None = None) -> list[Block]:
    lang: Lang = result.language
    tail: list[Block] = []
    if warnings := (_warnings(plan, lang) if warned is None else list(warned)):
        tail.append(context(warnings))
    if sources := _sources(result):
        tail.append(context([bold(tr(lang, "来源", "Sources")), *sources][:MAX_CONTEXT_ELEMENTS]))
    if plan.get("candidates"):
        tail.append(document_buttons(result.session_id, lang))
    return tail + list(extra)


def _serving_parts(result: AskResult, extra: Sequence[Block]) -> tuple[list[Block], list[Block]]:
    """A serving answer's card head (the count, figures, picks, launch command) and tail (warnings, sources,
    `extra`; no document buttons: the request document and bundle are a training plan's)."""
    from service.slack import serving_blocks

    card = serving_card(result) or {}
    return (serving_blocks.top_blocks(card, result.language),
            _tail(result, {}, extra, serving_blocks.warnings(card, result.language)))


def answer_text(result: AskResult) -> str:
    """The answer's Markdown less what its card shows (a serving answer's rent options and launch command)."""
    if serving_card(result) is None:
        return result.answer_markdown
    from service.slack.serving_blocks import without_card_sections

    return without_card_sections(result.answer_markdown)


def card_blocks(result: AskResult, *, native_table: bool = True, extra: Sequence[Block] = ()) -> list[Block]:
    """What follows an answer streamed as text: the picks, the candidate table, warnings, sources, the buttons, then
    `extra` (the feedback buttons). A serving answer: its serving card, then warnings, sources and `extra`."""
    if serving_card(result) is not None:
        head, tail = _serving_parts(result, extra)
        return (head + tail)[:MAX_BLOCKS]
    plan = training_plan(result)
    top = (_fields(plan, result.language) + [candidate_table(plan, result.language, native=native_table)]
           if plan.get("candidates") else [])
    return (top + _tail(result, plan, extra))[:MAX_BLOCKS]


def answer_blocks(result: AskResult, *, native_table: bool = True, asked: str = "",
                  extra: Sequence[Block] = ()) -> list[Block]:
    """The whole answer message. `asked` (slash commands) quotes who asked what above the answer; `extra` ends it."""
    lang: Lang = result.language
    plan = training_plan(result)
    has_plan = bool(plan.get("candidates"))
    top: list[Block] = []
    if asked:
        top.append(context([truncate(asked, MAX_TEXT)]))
    card = serving_card(result)
    if card is not None:
        from service.slack.serving_blocks import header

        head, tail = _serving_parts(result, extra)
        top += [header(card, lang), *head]
    else:
        if has_plan:
            top += [_header(plan, lang), *_fields(plan, lang), candidate_table(plan, lang, native=native_table)]
        tail = _tail(result, plan, extra)
    text = markdown_to_mrkdwn(without_sources(answer_text(result)), drop_tables=has_plan)
    room = MAX_BLOCKS - len(top) - len(tail)
    chunks = split_text(text, MAX_TEXT) or [tr(lang, "（没有文字回答）", "(no text answer)")]
    if len(chunks) > room:
        chunks = chunks[: room - 1] + [tr(lang, "…（回答过长，已截断）", "… (answer too long, cut here)")]
    return top + [section(c) for c in chunks] + tail


def fallback_text(result: AskResult) -> str:
    """The message's top-level `text`: what notifications and screen readers show."""
    return truncate(markdown_to_mrkdwn(result.answer_markdown), MAX_FALLBACK_TEXT)


def document_messages(title: str, files: Mapping[str, str]) -> list[list[Block]]:
    """Documents as code blocks, for when a file upload fails: one or more messages of at most 50 blocks."""
    blocks: list[Block] = [section(bold(escape(title)))]
    for name, content in files.items():
        safe = escape(content).replace("```", "ˋˋˋ")  # a fence inside the file would end ours
        for i, chunk in enumerate(split_text(safe, MAX_TEXT - 200)):
            label = f"`{escape(name)}`" + (f" ({i + 1})" if i else "")
            blocks.append(section(f"{label}\n```\n{chunk}\n```"))
    return [blocks[i:i + MAX_BLOCKS] for i in range(0, len(blocks), MAX_BLOCKS)]
