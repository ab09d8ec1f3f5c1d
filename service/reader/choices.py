"""Choices named by keyword: training method (and QLoRA bits), billing mode, objective, documents wanted."""

from __future__ import annotations

import re
from dataclasses import dataclass


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NEGATED = _c(
    r"(?:不用|不要|不想|别用|别|不做|不是|而不是|代替|替代|换掉|从|(?<![A-Za-z])(?:instead of|rather than|not|no|don'?t"
    r"|do not|without|from|switch from|replace))\s*(?:用|做|use|using|do|doing)?\s*$"
)
# 'lora is not the best option', 'LoRA不行', 'lora 不考虑': negated by what follows it
_NEGATED_AFTER = _c(r"^\s*(?:(?:is|was|are)\s+not|isn'?t|wasn'?t|won'?t|doesn'?t|is\s+no\s+good|不行|不合适|不考虑|不够用|效果不好)")
_METHODS = [
    ("qlora", _c(r"(?<![A-Za-z])q-?lora(?![A-Za-z])")),
    ("lora", _c(r"(?<![A-Za-z])lora(?![A-Za-z])")),
    ("full", _c(r"全参(?:数|量)?|全量(?:参数)?(?:微调|训练|sft|ft|finetune|fine-tune)?|(?<![A-Za-z])(?:full(?:y)?[\s-]*(?:fine[\s-]*tun+(?:e|ed|ing)|"
                r"tun(?:e|ed|ing)|finetun(?:e|ed|ing)|param(?:eter)?s?|ft|sft|training|tune)|fft)(?![A-Za-z])")),
    ("pretrain", _c(r"(?:继续|增量|二次)?预训(?:练)?(?!好?的?(?:模型|权重))|从头训练?|从零训练?|从头预训|(?<![A-Za-z])(?:continued\s+|continual\s+)?"
                    r"pre-?train(?:ing)?(?![A-Za-z])|from scratch")),
    ("freeze", _c(r"冻结|(?<![A-Za-z])freez(?:e|ing)(?![A-Za-z])")),
]
_BITS = _c(
    r"(?<![A-Za-z0-9])(?P<b>\d{1,2}|[二三四八])\s*-?\s*(?:bits?(?![A-Za-z])|位(?=\s*(?:量化|quant|qlora))|比特)"
    r"|(?<![A-Za-z])(?:int|nf)(?P<i>\d)(?![A-Za-z0-9])"
)
_ZH_BITS = {"二": 2, "三": 3, "四": 4, "八": 8}


@dataclass(frozen=True)
class MethodRead:
    method: str | None
    quant_bits: int | None
    unsupported_bits: int | None  # a bit width QLoRA does not take (3-bit): left unset, reported


def read_method(text: str) -> MethodRead:
    """The last method named that is not negated ('从LoRA换成全参' -> full, 'QLoRA instead of LoRA' -> qlora).
    A bit width ('4bit', '8-bit', '4位量化', 'int8', 'nf4') implies QLoRA; QLoRA without one means 4 bits."""
    mentions: list[tuple[int, str]] = []
    for method, pattern in _METHODS:
        for m in pattern.finditer(text):
            if not _NEGATED.search(text[max(0, m.start() - 14) : m.start()]) and not _NEGATED_AFTER.search(
                    text[m.end() : m.end() + 24]):
                mentions.append((m.start(), method))
    bits: int | None = None
    for m in _BITS.finditer(text):
        raw = m.group("b") or m.group("i")
        value = _ZH_BITS[raw] if raw in _ZH_BITS else int(raw)
        if 2 <= value <= 8:  # '16-bit' / 'bf16' is mixed precision, not quantisation
            bits = value
            mentions.append((m.start(), "qlora"))
            break
    if not mentions:
        return MethodRead(None, None, None)
    method = max(mentions)[1]
    if method != "qlora":
        return MethodRead(method, None, None)
    if bits is None:
        return MethodRead("qlora", 4, None)
    if bits in (4, 8):
        return MethodRead("qlora", bits, None)
    return MethodRead("qlora", None, bits)


def methods_mentioned(text: str) -> list[str]:
    """Every method named, in text order, negated or not ('全参换成lora' -> [full, lora]): a comparison's options
    or a change's before and after."""
    found = sorted((m.start(), method) for method, pattern in _METHODS for m in pattern.finditer(text))
    return list(dict.fromkeys(method for _, method in found))


_BILLING = [
    ("spot", _c(r"竞价|抢占式|(?<![A-Za-z])(?:spot|preemptible)(?![A-Za-z])")),
    ("monthly", _c(r"包年包月|包月|包年|(?<![A-Za-z])(?:monthly\s+(?:subscription|plan|billing|rental)|subscription"
                   r"|reserved|(?:go|going|switch(?:ing)? to|to|pay(?:ing)?|billed)\s+monthly|monthly(?=\s+instead))(?![A-Za-z])")),
    ("on_demand", _c(r"按量(?:计费|付费)?|按小时|按需|后付费|(?<![A-Za-z])(?:pay[\s-]*as[\s-]*you[\s-]*go|on[\s-]*demand"
                     r"|hourly(?:\s+billing)?|payg)(?![A-Za-z])")),
]


def billings_mentioned(text: str) -> list[str]:
    found = sorted((m.start(), mode) for mode, pattern in _BILLING for m in pattern.finditer(text))
    return list(dict.fromkeys(mode for _, mode in found))


def read_billing(text: str) -> str | None:
    found = [
        (m.start(), mode)
        for mode, pattern in _BILLING
        for m in pattern.finditer(text)
        if not _NEGATED.search(text[max(0, m.start() - 10) : m.start()])
    ]
    # '按量改包月', 'switch from on-demand to monthly', 'monthly instead of payg': the one changed to is asked
    changed = [(at, mode) for at, mode in found if _CHANGED_TO.search(text[max(0, at - 12) : at])
               or _INSTEAD_AFTER.match(text[at:])]
    return min(changed or found)[1] if found else None


_CHANGED_TO = _c(r"(?:改成?|换成?|转成?|转为|切到|切换到|变成|(?<![A-Za-z])(?:switch(?:ing)?|mov(?:e|ing)|chang(?:e|ing))"
                 r"\s+(?:\w+\s+)?to|(?<![A-Za-z])to)\s*$")
_INSTEAD_AFTER = _c(r"\S+(?:\s+\S+){0,2}?\s+instead\s+of(?![A-Za-z])")


_OBJECTIVES = [
    ("balanced", _c(r"性价比|均衡|平衡|折中|(?<![A-Za-z])(?:balanced|best value|value for money|cost[\s-]effective"
                    r"|trade[\s-]?off|bang for)")),
    ("cheapest", _c(r"最便宜|最省钱|最低成本|成本最低|价格最低|便宜|省钱|(?<![A-Za-z])(?:cheapest|lowest[\s-]cost"
                    r"|lowest price|least expensive|minimi[sz]e (?:the )?cost|as cheap as possible|cheap|save money)")),
    ("fastest", _c(r"越快越好|最快|尽快|速度优先|尽量快|时间优先|(?<![A-Za-z])(?:fastest|as fast as possible|asap|quickest"
                   r"|as quickly as possible|speed (?:first|matters))")),
]


def read_objective(text: str) -> str | None:
    """One objective; '性价比' beats the words inside it, and asking for both fast and cheap means balanced."""
    found: list[str] = []
    for objective, pattern in _OBJECTIVES:
        if pattern.search(text):
            found.append(objective)
            if objective == "balanced":
                return "balanced"
    if not found:
        return None
    return found[0] if len(found) == 1 else "balanced"


_DOCUMENTS = [
    ("request_document", _c(r"申请说明|资源申请|申请书|申请材料|申请报告|申请文档|(?<![A-Za-z])(?:request\s+doc(?:ument)?s?"
                            r"|resource\s+request|justification)")),
    ("launch_bundle", _c(r"启动脚本|启动命令|训练脚本|配置文件|(?<![A-Za-z])(?:launch\s+(?:script|bundle|command)s?|yaml"
                         r"|deepspeed\s+config|run\s+script|sbatch)")),
]


def read_documents(text: str) -> list[str]:
    return [name for name, pattern in _DOCUMENTS if pattern.search(text)]
