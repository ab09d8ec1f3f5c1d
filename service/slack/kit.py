"""The Block Kit primitives both cards use (service/slack/blocks.py for training and knowledge answers,
serving_blocks.py for serving answers): Slack's limits, the labels of clouds, billing modes and methods, number
formats and the section / context blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from service.slack.mrkdwn import truncate

Lang = Literal["zh", "en"]
Block = dict[str, Any]

MAX_BLOCKS = 50
MAX_TEXT = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_CONTEXT_ELEMENTS = 10
MAX_HEADER = 150
MAX_TABLE_ROWS = 9  # header + 8 candidates (Slack allows 100)
MAX_FALLBACK_TEXT = 3000  # top-level `text`, shown in notifications

CLOUDS = {"tencent": ("腾讯云", "Tencent Cloud"), "jdcloud": ("京东云", "JD Cloud")}
BILLING = {"on_demand": ("按量计费", "on-demand"), "monthly": ("包年包月", "monthly"), "spot": ("竞价实例", "spot"),
           "on_request": ("价格需询价", "price on request")}
METHODS = {"lora": ("LoRA", "LoRA"), "qlora": ("QLoRA", "QLoRA"), "full": ("全参微调", "full fine-tune"),
           "freeze": ("冻结微调", "freeze-tuning"), "pretrain": ("预训练", "pre-training")}


def tr(lang: Lang, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def _label(table: Mapping[str, tuple[str, str]], key: str, lang: Lang) -> str:
    pair = table.get(key)
    return key if pair is None else tr(lang, *pair)


def _num(x: Any) -> str:
    try:
        return f"{float(x):,.2f}".rstrip("0").rstrip(".")
    except (TypeError, ValueError):
        return "—"


def _hours(x: Any) -> str:
    try:
        return f"{float(x):,.1f}"
    except (TypeError, ValueError):
        return "—"


def _cny(x: Any) -> str:
    try:
        return f"¥{float(x):,.0f}"
    except (TypeError, ValueError):
        return "—"


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": truncate(text, MAX_TEXT)}


def section(text: str) -> Block:
    return {"type": "section", "text": _mrkdwn(text)}


def context(texts: Sequence[str]) -> Block:
    return {"type": "context", "elements": [_mrkdwn(t) for t in texts[:MAX_CONTEXT_ELEMENTS]]}


