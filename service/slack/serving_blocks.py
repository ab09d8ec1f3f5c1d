"""Block Kit for a serving answer (its card: service/slack/cards.py serving_card): the count first (GPUs per replica x replicas), the
engine's figures (KV pool, concurrency, tokens/s, TTFT, TPOT), the pick per cloud with its cost per hour and per
month and yuan per million output tokens, then the launch command. Pure functions within Slack's limits; blocks.py
puts them where a training answer has its picks and table."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from service.slack.kit import (
    BILLING,
    CLOUDS,
    MAX_FIELD_TEXT,
    MAX_FIELDS,
    MAX_HEADER,
    MAX_TEXT,
    Block,
    Lang,
    _label,
    context,
    section,
    tr,
)
from service.slack.mrkdwn import bold, escape, truncate

Card = Mapping[str, Any]
# The answer's sections the card shows (prompts/answer.*.yaml srv_picks, srv_launch): left out of the streamed text.
SHOWN_BY_CARD = ("租用方案（24×7 运行）", "启动命令", "Where to rent it (24x7)", "Launch command")
_SECTION = re.compile(r"\n*^### (.+?)\s*$", re.MULTILINE)
ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "lmdeploy": "LMDeploy"}


def _n(x: Any, digits: int = 0) -> str:
    try:
        return f"{float(x):,.{digits}f}"
    except (TypeError, ValueError):
        return "—"


def _top(card: Card) -> Mapping[str, Any] | None:
    plan = card.get("plan") or {}
    cands = plan.get("candidates") or []
    return cands[0] if cands else None


def sizing(card: Card) -> Mapping[str, Any] | None:
    """The sizing the answer opens with: the pinned GPU's when one was named, else the top option's."""
    inf = card.get("inference") or {}
    top = _top(card) or {}
    found = inf.get("sizing") or top.get("sizing")
    return found if isinstance(found, Mapping) else None


def model_name(card: Card) -> str:
    for key in ("inference", "plan"):
        part = card.get(key) or {}
        model = part.get("model") or {}
        if model.get("name"):
            return str(model["name"])
    return ""


def header(card: Card, lang: Lang) -> Block:
    name = model_name(card)
    title = tr(lang, "推理部署方案", "Serving plan") + (f": {name}" if name else "")
    return {"type": "header", "text": {"type": "plain_text", "text": truncate(title, MAX_HEADER), "emoji": True}}


def reason_zh(inf: Mapping[str, Any]) -> str:
    """Why the engine does not start, in Chinese, from the kind of reason the engine gives (its text is English:
    service/sizing/serving/engines.py _verdict, support.py) and the figures."""
    reason = str(inf.get("starts_reason") or "")
    weights = _n(inf.get("weights_gib_per_gpu"), 1)
    if reason.startswith("weights need"):
        return f"每卡权重 {weights} GiB，加载时显存不足：增加每副本的卡数（张量并行）或用更小的权重精度。"
    if reason.startswith("no memory left for the KV cache"):
        return f"每卡权重 {weights} GiB 之后没有留给 KV 缓存的显存：加卡、量化，或调高显存占用比例。"
    if reason.startswith("the KV pool"):
        return (f"KV 池只能放 {_n(inf.get('max_model_len_fits'))} tokens，不够一条 {_n(inf.get('max_model_len'))} "
                "长度的请求：调小 max_model_len、调高显存占用比例或加卡。")
    if "compute capability" in reason:
        return "这张 GPU 的计算能力（compute capability）不支持所选的引擎或精度：换精度或换更新的 GPU。"
    if "CUDA-graph" in reason:
        return "分配 KV 池后，CUDA Graph 捕获显存不足：略调低显存占用比例，或加 --enforce-eager。"
    return f"每卡权重 {weights} GiB，KV 池 {_n(inf.get('kv_capacity_tokens'))} tokens。"


def count_line(card: Card, lang: Lang) -> str:
    """The count first: every GPU, then GPUs per replica x replicas; or why the pinned GPUs do not start."""
    inf = card.get("inference") or {}
    s = sizing(card)
    if inf and not inf.get("starts"):
        head = "❌ " + bold(tr(lang, f"{inf.get('gpus')} 张 {inf.get('gpu_name')} 起不来",
                                  f"{inf.get('gpus')}x {inf.get('gpu_name')} does not start"))
        why = reason_zh(inf) if lang == "zh" else str(inf.get("starts_reason") or "")
        return f"{head}\n{escape(why)}"
    if s is None:
        return "❌ " + bold(tr(lang, "按当前条件无法部署", "It cannot be served as asked"))
    setup = f"{ENGINES.get(str(s['engine']), s['engine'])} · {str(s['weights']).upper()}"
    name = model_name(card)
    total, gpu = s["total_gpus"], s["gpu_name"]
    return tr(lang, f"{bold(f'共 {total} 张 {gpu}')}：每个副本 {s['gpus_per_replica']} 张 × {s['replicas']} 个副本 · "
                    f"{escape(name)} · {setup}",
              f"{bold(f'{total}x {gpu} in all')}: {s['gpus_per_replica']} per replica x {s['replicas']} "
              f"replica{'s' if s['replicas'] != 1 else ''} · {escape(name)} · {setup}")


def figures(card: Card, lang: Lang) -> list[str]:
    """KV pool and concurrency, then throughput and latency at the load (or with the replicas full)."""
    s = sizing(card)
    if s is None:
        return []
    return [
        tr(lang, f"KV 容量 {_n(s['kv_capacity_tokens'])} tokens/副本", f"KV pool {_n(s['kv_capacity_tokens'])} "
                                                                           "tokens per replica"),
        tr(lang, f"最大并发 {_n(s['max_concurrency'], 1)}（{s['max_model_len']} 长度）· "
                 f"{_n(s['max_concurrency_at_load'], 1)}（输入 {s['input_tokens']} / 输出 {s['output_tokens']}）",
           f"max concurrency {_n(s['max_concurrency'], 1)} at {s['max_model_len']} tokens · "
           f"{_n(s['max_concurrency_at_load'], 1)} at {s['input_tokens']} in / {s['output_tokens']} out"),
        tr(lang, f"输出 {_n(s['output_tokens_per_s'])} tokens/s · 首字 {_n(s.get('ttft_ms'))} 毫秒 · "
                 f"每 token {_n(s['tpot_ms'], 1)} 毫秒",
           f"{_n(s['output_tokens_per_s'])} output tokens/s · TTFT {_n(s.get('ttft_ms'))} ms · "
           f"TPOT {_n(s['tpot_ms'], 1)} ms"),
    ]


def _pick_field(c: Mapping[str, Any], lang: Lang) -> str:
    cloud = _label(CLOUDS, str(c.get("cloud", "")), lang)
    per = f"{_n(c.get('gpu_count'))} × {c.get('gpu', '?')}"
    machines = per if int(c.get("nodes") or 1) <= 1 else f"{c['nodes']} × ({per})"
    layout = tr(lang, f"每副本 {c.get('gpus_per_replica')} 张 × {c.get('replicas')} 个副本",
                f"{c.get('gpus_per_replica')} per replica x {c.get('replicas')}")
    if c.get("cost_per_month_cny") is None:
        cost = _label(BILLING, "on_request", lang)
    else:
        billing = _label(BILLING, str(c.get("billing", "")), lang)
        cost = tr(lang, f"¥{_n(c['cost_per_hour_cny'], 2)}/小时 · ¥{_n(c['cost_per_month_cny'])}/月（{billing}）",
                  f"¥{_n(c['cost_per_hour_cny'], 2)}/hour · ¥{_n(c['cost_per_month_cny'])}/month ({billing})")
        if c.get("cny_per_million_output_tokens") is not None:
            cost += "\n" + tr(lang, f"每百万输出 token ¥{_n(c['cny_per_million_output_tokens'], 2)}",
                              f"¥{_n(c['cny_per_million_output_tokens'], 2)} per million output tokens")
    ok = c.get("within_budget")
    budget = "" if ok is None else (" ✅" if ok else " ❌")
    lines = [bold(cloud), f"`{escape(str(c.get('instance_type', '?')))}`", escape(machines), layout, cost + budget]
    return truncate("\n".join(lines), MAX_FIELD_TEXT)


def picks(card: Card, lang: Lang) -> list[Block]:
    plan = card.get("plan") or {}
    by_type = {c.get("instance_type"): c for c in plan.get("candidates") or [] if isinstance(c, Mapping)}
    fields = [_pick_field(by_type[t], lang) for t in (plan.get("picks") or {}).values() if t in by_type]
    return [{"type": "section", "fields": [{"type": "mrkdwn", "text": f} for f in fields[:MAX_FIELDS]]}] if fields \
        else []


def launch(card: Card, lang: Lang) -> list[Block]:
    """The vLLM command that starts one replica (copy it from the code block)."""
    inf = card.get("inference") or {}
    found = inf.get("launch") or (_top(card) or {}).get("launch")
    if not isinstance(found, Mapping) or not found.get("vllm"):
        return []
    title = tr(lang, "启动命令（vLLM，每个副本）", "Launch command (vLLM, one replica)")
    body = truncate(str(found["vllm"]).replace("```", "ˋˋˋ"), MAX_TEXT - 100)
    return [section(f"{bold(title)}\n```\n{body}\n```")]


def top_blocks(card: Card, lang: Lang) -> list[Block]:
    """The card's head: the count, the figures, the pick per cloud, the launch command."""
    out = [section(count_line(card, lang))]
    if lines := figures(card, lang):
        out.append(context(lines))
    return out + picks(card, lang) + launch(card, lang)


def warnings(card: Card, lang: Lang) -> list[str]:
    """The picks' warnings (and, for a GPU no cloud rents, the inference's none), each once."""
    plan = card.get("plan") or {}
    chosen = set((plan.get("picks") or {}).values())
    seen: dict[str, None] = {}
    for c in plan.get("candidates") or []:
        if c.get("instance_type") not in chosen:
            continue
        for w in c.get("warnings") or []:
            if isinstance(w, Mapping) and w.get("severity") != "info":
                text = str(w.get("message_zh") if lang == "zh" and w.get("message_zh") else w.get("message", ""))
                if text:
                    seen.setdefault(f"⚠️ {escape(text)}", None)
    return list(seen)


def without_card_sections(md: str) -> str:
    """The answer's Markdown without the sections the card shows (where to rent it, the launch command)."""
    parts = _SECTION.split(md)
    out = [parts[0]]
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        if title.strip() not in SHOWN_BY_CARD:
            out.append(f"\n\n### {title}{body}")
    return "".join(out).strip()
