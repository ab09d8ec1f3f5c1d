"""Formatting only: bilingual labels, number formats and Markdown pieces. Nothing here computes a figure."""

from __future__ import annotations

from collections.abc import Sequence

from service.documents import safe
from service.documents.plan_view import CandidateView, Lang, PriceView

CLOUD = {"tencent": ("腾讯云", "Tencent Cloud"), "jdcloud": ("京东云", "JD Cloud")}
BILLING = {"on_demand": ("按量计费", "on-demand"), "monthly": ("包年包月", "monthly"), "spot": ("竞价实例", "spot")}
CONFIDENCE = {"official": ("官方", "official"), "third_party": ("第三方", "third-party"),
              "estimate": ("估算", "estimate")}
UNIT = {"hour": ("小时", "hour"), "month": ("月", "month")}
METHOD = {"lora": ("LoRA", "LoRA"), "qlora": ("QLoRA", "QLoRA"), "full": ("全参数微调", "full fine-tune"),
          "freeze": ("冻结微调（只训练末几层）", "freeze (last layers only)"),
          "pretrain": ("预训练", "pre-training")}
OFFLOAD = {"none": ("不卸载", "none"), "optimizer": ("优化器状态卸载到 CPU", "optimizer states to CPU"),
           "all": ("参数与优化器状态卸载到 CPU", "parameters and optimizer states to CPU")}
BLANK = "＿＿＿＿＿＿＿＿"


def tr(lang: Lang, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def label(table: dict[str, tuple[str, str]], key: str, lang: Lang) -> str:
    pair = table.get(key)
    return key if pair is None else pair[0 if lang == "zh" else 1]


def num(x: float) -> str:
    """Up to two decimals, trailing zeros dropped: 11.90 -> 11.9, 40.0 -> 40, 12948 -> 12,948."""
    s = f"{x:,.2f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def gib(x: float) -> str:
    return f"{x:.2f}"


def ratio(x: float) -> str:
    """A ratio as the plan gives it (0.357, 0.1214, 1)."""
    return f"{x:g}"


def count(x: float) -> str:
    return f"{x:,.0f}"


def cny(x: float) -> str:
    return f"¥{x:,.2f}"


def unit_price(p: PriceView, lang: Lang) -> str:
    return f"{cny(p.price_cny)}/{label(UNIT, p.unit, lang)}"


def confidence(p: PriceView, lang: Lang) -> str:
    text = label(CONFIDENCE, p.confidence, lang)
    return text + (tr(lang, "（同步未见，待核实）", " (not seen by the last sync)") if p.stale else "")


def gpus(c: CandidateView, lang: Lang) -> str:
    """'1 × NVIDIA A100 40GB SXM4' or '8 × ... × 2 nodes' (per node × nodes, as the plan states them)."""
    text = f"{c.gpu_count:g} × {safe.md(c.gpu_name)}"
    if c.nodes > 1:
        text += tr(lang, f"（每节点）× {c.nodes} 节点", f" per node × {c.nodes} nodes")
    return text


def instance(c: CandidateView, lang: Lang) -> str:
    return f"{label(CLOUD, c.cloud, lang)} {safe.md(c.instance_type)}"


def verdict(ok: bool | None, lang: Lang, *, yes: tuple[str, str], no: tuple[str, str],
            unknown: tuple[str, str]) -> str:
    pair = unknown if ok is None else (yes if ok else no)
    return tr(lang, *pair)


def budget_text(c: CandidateView, budget: float | None, period: str, lang: Lang) -> str:
    if budget is None:
        return tr(lang, "未设预算", "no budget given")
    per = tr(lang, "/月", "/month") if period == "month" else tr(lang, "（总额）", " (total)")
    state = verdict(c.within_budget, lang, yes=("在预算内", "within budget"), no=("超出预算", "over budget"),
                    unknown=("未判定", "not judged"))
    return tr(lang, f"预算 {cny(budget)}{per}：{state}", f"budget {cny(budget)}{per}: {state}")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip() or "—"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {i}" for i in items)
