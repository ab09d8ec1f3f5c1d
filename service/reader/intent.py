"""The question type (intent) and its subject: which GPU (and how many) a feasibility or min_gpus question is
about, which options a comparison weighs, what a savings question changes.

The intent is read from the words alone; None means the message does not say (a follow-up such as '那京东云呢'
keeps the previous turn's intent). Knowledge vs workload is decided later, by whether there is a workload.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from service.reader.constraints import GPU_MARK

Intent = Literal["plan", "feasibility", "min_gpus", "compare", "savings", "knowledge"]
INTENTS: tuple[Intent, ...] = ("plan", "feasibility", "min_gpus", "compare", "savings", "knowledge")
CompareKind = Literal["gpu", "cloud", "method", "billing"]


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_G = GPU_MARK
_SAVINGS = _c(
    r"省多少|能省|省下|省了多少|省几|节省多少|节约多少|便宜多少|便宜几|贵多少|贵几|多花多少|多花|差多少|差价|相差多少|能便宜|差几|"
    r"快多少|慢多少|快几|多快|"
    r"(?<![A-Za-z])(?:(?:how much|what)\b[^.?!]{0,40}\bsav(?:e|es|ing|ings)\b|how much (?:cheaper|more|less|extra|faster|slower|time)"
    r"|cost (?:more|less)|difference in (?:cost|price)|price difference|pricier)(?![A-Za-z])"
)
_COMPARE = _c(
    r"对比|比较|比一比|比下|相比|哪个|哪家|哪种|哪一个|哪款|还是|划算|性价比|区别|差别|差异|"
    r"(?<![A-Za-z])(?:vs\.?|versus|compare[ds]?|comparison|which|or|better|cheaper|faster|difference)(?![A-Za-z])"
)
_MIN_GPUS = _c(
    r"几张|几块|几卡|几个卡|几个GPU|几台|多少张|多少块|多少卡|多少个GPU|多少显存|多大显存|多大的显存|"
    r"(?:最少|至少|最低|起码|最小)[^，。,.?？]{0,8}(?:卡|显存|GPU|张|块)|"
    r"需要什么(?:样的)?(?:卡|GPU|显卡)|用什么(?:卡|GPU|显卡)|什么(?:样的)?(?:卡|显卡)(?:才)?(?:能|可以|够)|"
    rf"(?<![A-Za-z])(?:how many(?:\s+[\w{_G}-]+){{0,2}}\s*(?:gpus?|cards?|{_G}+s?)"
    r"|what (?:kind of )?(?:gpu|card|hardware)s? (?:do|would|will|should) (?:i|we|you) need|which gpus? (?:do|would|should)"
    r"|how many (?:would|do|will|should|must) (?:i|we|you) (?:need|use|get|rent)"
    r"|min(?:imum)?\s+(?:number|count|no\.?)\s+of|fewest|least\s+(?:vram|gpu memory|memory|number|gpus?|cards?)"
    r"|how much (?:vram|gpu memory|memory)|min(?:imum)?\s+(?:vram|gpu memory|memory|gpus?))(?![A-Za-z])"
)
_FEASIBLE = _c(
    r"能跑|能不能|可不可以|可以跑|可以吗|可以不|可以么|能否|够不够|够用|够吗|够么|够$|跑得动|跑不动|跑得起|带得动|能训|"
    r"能微调|能做|能全参|能lora|行不行|行吗|吗|么[?？\s]*$|不[?？\s]*$|装得下|放得下|塞得下|爆显存|\bOOM\b|"
    r"(?<![A-Za-z])(?:can|could|will|would|does|do)\b[^.?]{0,40}(?:run|fit|handle|train|do|work|tune|finetune)"
    r"|(?<![A-Za-z])(?:fits?|enough|feasible|possible|doable|any good|able to|handle|run on|on (?:a|one|an)\s+single)"
    r"(?![A-Za-z])|[?？]"
)


@dataclass(frozen=True)
class Subject:
    """What the question is about, beyond the workload slots."""

    intent: Intent | None  # None: the words do not say (a follow-up keeps the previous intent)
    gpus: tuple[str, ...] = ()  # GPU ids named as the subject (not excluded), text order
    gpu_count: int | None = None  # the count named with the GPU ('单卡', '两张', '2x', 'a pair of')
    compare_kind: CompareKind | None = None
    options: tuple[str, ...] = ()  # compare: GPU ids, clouds, methods or billing modes
    before: dict[str, object] = field(default_factory=dict)  # savings stated in one message: the slots before
    after: dict[str, object] = field(default_factory=dict)  # ... and after the change


def read_subject(work: str, text: str, gpus: list[str], clouds: list[str], methods: list[str],
                 billings: list[str], gpu_count: int | None) -> Subject:
    """`work` is the message with GPU names marked (GPU_MARK) and models blanked; `text` the message itself;
    `gpus` the GPU ids named and not excluded, `clouds`, `methods`, `billings` the ones mentioned, in order."""
    gpus = list(dict.fromkeys(gpus))
    clouds = list(dict.fromkeys(clouds))
    methods = list(dict.fromkeys(methods))
    billings = list(dict.fromkeys(billings))
    count = gpu_count if gpu_count is not None else _pair(text)
    if _SAVINGS.search(text):
        for key, options in (("method", methods), ("billing", billings), ("gpu_include", gpus)):
            if len(options) >= 2:
                base_last = _BASE_BEFORE.search(work) is not None
                first, last = options[0], options[-1]
                was, now = (last, first) if base_last else (first, last)
                if key == "gpu_include":
                    return Subject("savings", (), count, before={key: [was]}, after={key: [now]})
                return Subject("savings", tuple(gpus), count, before={key: was}, after={key: now})
        return Subject("savings", tuple(gpus), count)
    if _COMPARE.search(work):
        for kind, options in (("gpu", gpus), ("cloud", clouds), ("method", methods), ("billing", billings)):
            if len(options) >= 2:
                return Subject("compare", tuple(gpus), count, kind, tuple(options))  # type: ignore[arg-type]
        if len(gpus) == 1 and re.search(r"(?:对比|比较|compare)", text, re.IGNORECASE):
            return Subject("compare", tuple(gpus), count, "gpu", tuple(gpus))
    if _MIN_GPUS.search(work):
        return Subject("min_gpus", tuple(gpus[:1]), None)
    if gpus and (_FEASIBLE.search(work) or _single_on(work)):
        return Subject("feasibility", tuple(gpus[:1]), count or 1)
    memory = _MEMORY.search(work)
    if memory and _FEASIBLE.search(work):  # '24G显存能微调7b吗': a card of that memory
        return Subject("feasibility", (f"{memory.group(1)}G",), count or 1)
    if gpus and re.search(r"(?:对比|比较|compare)", text, re.IGNORECASE):
        return Subject("compare", tuple(gpus), count, "gpu", tuple(gpus))
    return Subject(None, tuple(gpus), count)


# 'A vs B', 'A compared to B', '比B贵多少': the method named last is the base of the saving.
# 'A vs B', 'A compared to B', 'A instead of B', '比B贵多少': the option named last is the base of the change.
_BASE_BEFORE = _c(r"(?<![A-Za-z])(?:vs\.?|versus|compared (?:to|with)|than|over|relative to|instead of|rather than)"
                  r"\s+(?:a\s+|an\s+|the\s+|going\s+|using\s+)?(?:q?lora|full|freeze|pay|on|spot|monthly|\x01)"
                  r"|(?:相比|比)\s*(?:q?lora|全参|全量|冻结|按量|包月|竞价|\x01)")
_MEMORY = _c(r"(?<![\d.])(\d{1,3})\s*(?:G|GB|GiB)\s*(?:的)?\s*(?:显存|卡|显卡|(?<![A-Za-z])(?:vram|gpu|card)(?![A-Za-z]))")
_PAIR = _c(r"(?<![A-Za-z])(?:a\s+pair\s+of|a\s+couple\s+of|couple\s+of|twin|dual)(?![A-Za-z])")


def _pair(text: str) -> int | None:
    return 2 if _PAIR.search(text) else None


_SINGLE_ON = _c(rf"(?<![A-Za-z])on\s+(?:a|one|an|my|our)\s+(?:single\s+)?{_G}")


def _single_on(work: str) -> bool:
    return bool(_SINGLE_ON.search(work))
