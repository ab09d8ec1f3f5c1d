"""Constraints in free text: deadline, GPU count, exchange rate and budget (amount, currency and period)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from service.reader.numbers import DEC, EN_WORDS, NOT_IN_EXP, parse_number
from service.reader.quantities import BLANK, NA, Finder, M, N, arabic, blank, first
from service.reader.ranges import Refused, check

GPU_MARK = "\x01"  # GPU names are blanked with this, so '8x A100' reads as '8x ' followed by marks
_ZH_SMALL_NUM = rf"(?<![\d一二两三四五六七八九十])(?>{DEC}|[一二两三四五六七八九十]+)"


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_CLAUSE_END = re.compile(r"[，。；;！!？?\n]|[,.](?=\s)")


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    lo = max((m.end() for m in _CLAUSE_END.finditer(text, max(0, start - 200), start)), default=0)
    hi = _CLAUSE_END.search(text, end)
    return lo, (hi.start() if hi else len(text))


# --- deadline -------------------------------------------------------------------------------------------------

_HOURS = {"小时": 1, "钟头": 1, "h": 1, "hr": 1, "hrs": 1, "hour": 1, "hours": 1, "天": 24, "日": 24, "day": 24,
          "days": 24, "周": 168, "星期": 168, "礼拜": 168, "week": 168, "weeks": 168, "月": 720, "month": 720,
          "months": 720}
_EN_COUNT = "|".join([*EN_WORDS, "an?"])
_DURATION = _c(
    rf"(?P<n>(?<![\d.一二两三四五六七八九十])(?>{DEC}|[一二两三四五六七八九十]+"
    rf"|(?<![A-Za-z])(?:{_EN_COUNT}))(?![\d.])|半)\s*(?:个)?\s*"
    r"(?P<u>小时|钟头|hours?|hrs?|h|天|日|days?|周|星期|礼拜|weeks?|月|months?)(?![A-Za-z\d])"  # not 'an H100'
)
_DEADLINE_AFTER = re.compile(r"^\s*(?:之内|以内|内|完成|跑完|训完|训练完|搞定|出结果|交付|结束|左右)")
_DEADLINE_BEFORE = _c(
    r"(?:(?<![A-Za-z])(?:within|in|by|under|less than|no more than|at most|deadline|due in|due|finish(?:ed)? in"
    r"|done in|max|limit)|截止|期限|需要|要在|在|必须|得|最多|不超过|不能超过|限|时限|最晚|耗时|用时|时间)\s*[:：]?\s*$"
)
# '每小时', '包月', and a price asked ('H100多少钱一小时', 'what does an H100 cost an hour'): never a deadline
_NOT_DEADLINE_AFTER = _c(r"^\s*(?:多少钱|多少|几块|几元|的?价格|的?价钱|的?费用|要多少|收费)")
_NOT_DEADLINE_BEFORE = _c(r"(?:每|/|包|租|按|多少钱|几块钱?|几元|价格|价钱|费用|单价|(?<![A-Za-z])(?:per|every|each|an?|cost|costs"
                          r"|price|priced|charge|charges|bucks|dollars)(?![A-Za-z]))\s*$")


def find_deadline_hours(text: str, refused: list[Refused] | None = None) -> tuple[float | None, str]:
    """'3天内' = 72, '两周' = 336, '半个月' = 360, 'within 1 week', 'deadline 2 days'. A bare hour/day/week
    count reads as a deadline; a month count ('3个月') needs a deadline word around it, except '半个月'. A deadline
    out of range ('0天内', '1e-300小时内') is refused."""
    for m in _DURATION.finditer(text):
        raw = m.group("n").lower()
        n = 0.5 if raw == "半" else 1.0 if raw in ("a", "an") else parse_number(raw)
        unit = m.group("u").lower()
        before = text[max(0, m.start() - 14) : m.start()]
        if n is None or _NOT_DEADLINE_BEFORE.search(before) or _NOT_DEADLINE_AFTER.match(text[m.end():]):
            continue
        marked = _DEADLINE_AFTER.match(text[m.end() :]) or _DEADLINE_BEFORE.search(before)
        if unit not in ("月", "month", "months") or marked or raw == "半":
            hours = n * _HOURS[unit]
            if check("deadline_hours", hours, m.group(0), refused):
                return hours, blank(text, m.start(), m.end())
            text = blank(text, m.start(), m.end())
    return None, text


# --- GPU count ------------------------------------------------------------------------------------------------

_G = GPU_MARK


def _n(m: re.Match[str]) -> float | None:
    return parse_number(m.group("n"))


def _product(m: re.Match[str]) -> float | None:
    a, b = parse_number(m.group("a")), parse_number(m.group("b"))
    return a * b if a is not None and b is not None else None


_COUNT: list[tuple[re.Pattern[str], Finder]] = [
    (_c(rf"(?P<a>{_ZH_SMALL_NUM})\s*(?:台|个节点|nodes?|machines?|servers?)\s*{_G}*\s*(?:[x×*]|with|of|each)?\s*"
        rf"(?P<b>{_ZH_SMALL_NUM})\s*(?:卡|张|块|个|[x×*])?\s*(?:{_G}+\s*)?(?:卡|GPUs?|cards?)?"), _product),
    (_c(rf"单卡|单张卡?|单块卡?|一张卡|一块卡|单GPU|单个GPU|单显卡|(?<![A-Za-z])(?:a\s+)?single\s+(?:{_G}+\s*)?"
        rf"(?:GPU|card)|(?<![A-Za-z])(?:a\s+)?single\s+{_G}+|(?<![A-Za-z])one\s+(?:{_G}+\s*)?(?:GPU|card)"),
     lambda m: 1.0),
    (_c(r"双卡|双显卡|双路|两卡|(?<![A-Za-z])dual(?![A-Za-z])"), lambda m: 2.0),
    (_c(rf"(?<![A-Za-z])(?:an?\s+)?pair\s+of\s+(?:(?:nvidia|tesla|geforce|rtx)\s+)?(?:{_G}+|gpus?|cards?)"),
     lambda m: 2.0),
    (_c(N + r"[ \t]*(?:张|块|个)?[ \t]*(?:卡|显卡|GPU(?![A-Za-z]))(?!片)"), _n),
    (_c(N + rf"[ \t]*(?:[x×*][ \t]*)?(?:{_G}+[ \t]*)?(?:GPUs?|cards?)(?![A-Za-z])"), _n),
    (_c(N + r"\s*(?:张|块)(?!图|照|表|纸)"), _n),
    (_c(N + rf"\s*(?:个|[x×*])?\s*{_G}"), _n),
    (_c(rf"(?<![A-Za-z])(?:an?|one)\s+(?:(?:nvidia|tesla|geforce|rtx|single|[\w.]+)\s+){{0,3}}?{_G}+(?:\s*\(?\s*\d+\s*G[Bb]?\s*\)?)?\s*(?:gpu|card)?"), lambda m: 1.0),
    (_c(rf"(?<![\d.]){NOT_IN_EXP}(?P<n>\d{{1,4}})[- ](?:gpu|card)s?\b"), _n),
    (_c(rf"{_G}+\s*[x×*]\s*" + NA), _n),
    (_c(r"(?:gpu[_\s]*(?:count|num)|num[_\s]*gpus|卡数|GPU数量?|显卡数量?)\s*(?:[:=：]|为|是)?\s*" + NA), _n),
    # a follow-up that counts the card already named: 'what about two of them?', '4 of those'
    (_c(N + r"\s+of\s+(?:them|those|these|it)(?![A-Za-z])"), _n),
]


def find_gpu_count(text: str, refused: list[Refused] | None = None) -> tuple[int | None, str]:
    """'单卡'/'a single GPU' = 1, '8卡', '8张A100', '两张', '8 GPUs', '8x A100', 'A100 x 8', '2台8卡' = 16.
    Several counts ('单卡7s，换成8卡之后40s', '3090双卡比单卡慢'): the largest is the setup the question is about;
    every count read is blanked. A count out of range ('0张', '10^6 GPUs', '1.5张卡') is refused."""
    found: list[int] = []
    for pattern, convert in _COUNT:
        for m in list(pattern.finditer(text)):
            if (v := convert(m)) is None or not text[m.start():m.end()].strip(BLANK):
                continue
            if check("gpu_count", v, m.group(0), refused):
                found.append(int(v))
            text = blank(text, m.start(), m.end())
    return (max(found) if found else None), text


# --- exchange rate and budget ---------------------------------------------------------------------------------

_RATE = [
    _c(r"按\s*" + NA + r"\s*(?:的)?\s*(?:汇率|换算)"),
    _c(r"汇率\s*(?:按|是|为|取|:|：|=)?\s*" + NA),
    _c(NA + r"\s*(?:CNY|RMB|元|yuan)\s*(?:/|per|每)\s*(?:USD|\$|dollar|美元)"),
    _c(r"(?:USD\s*/\s*CNY|USD\s*to\s*CNY|USDCNY|美元兑人民币|美元汇率)\s*(?:rate)?\s*(?:=|:|：|of|at|is|为|是)?\s*" + NA),
    _c(r"1\s*(?:USD|\$|美元|dollar)\s*=\s*" + NA),
    _c(r"(?<![A-Za-z])(?:exchange\s+)?rate\s*(?:of|is|=|:|at)?\s*" + NA),
]


_USD = _c(r"\$|美元|美金|(?<![A-Za-z])(?:usd|dollars?)(?![A-Za-z])")
_AT_RATE = _c(r"(?<![A-Za-z])at\s+" + NA + r"(?!\s*(?:元|块|美元|%|[A-Za-z]))")


def find_usd_cny_rate(text: str) -> tuple[float | None, str]:
    """'按7.2汇率', '汇率7.1', 'at 7.1 CNY/USD', '1 USD = 7.2 CNY', and a bare 'at 7.2' when the text has dollars."""
    patterns = _RATE + ([_AT_RATE] if _USD.search(text) else [])
    return first(text, [(p, lambda m: v if 1 < (v := arabic(m)) < 20 else None) for p in patterns])


Currency = Literal["CNY", "USD"]


@dataclass(frozen=True)
class Money:
    amount: float
    currency: Currency
    period: Literal["month", "total"] | None  # None: the message did not say
    said: str = ""  # as the message wrote it ('3000元', '¥1e20')


_AMOUNT = N + M
_MONEY: list[tuple[re.Pattern[str], Currency]] = [
    (_c(r"(?:¥|￥|RMB|CNY|人民币)\s*" + _AMOUNT), "CNY"),
    (_c(_AMOUNT + r"\s*(?:元|块钱|块(?!\s*(?:卡|GPU|显卡|" + GPU_MARK + r"))|(?<![A-Za-z])(?:RMB|CNY|yuan)(?![A-Za-z])|人民币)"),
     "CNY"),
    (_c(r"(?:US\$|\$|(?<![A-Za-z])USD)\s*" + _AMOUNT), "USD"),
    (_c(_AMOUNT + r"\s*(?:美元|美金|刀|(?<![A-Za-z])(?:dollars?|USD|bucks)(?![A-Za-z]))"), "USD"),
]
_KEYWORD = _c(r"预算|花费|成本|开销|经费|费用|一共|总共|共计|合计|最多花|不超过|上限"
              r"|(?<![A-Za-z])(?:budget|spend(?:ing)?|cost|cap|at most|up to|no more than)(?![A-Za-z])")
_BARE_AMOUNT = _c(_AMOUNT)
_NOT_MONEY_AFTER = _c(
    r"^\s*(?:共|起|条|个|张|块\s*(?:卡|GPU|显卡)|卡|天|日|小时|h(?![a-z])|周|星期|轮|遍|epoch|tokens?|词元|[GT]i?B?(?![a-z])|MB|GPU"
    r"|%|倍|样本|行|人|次|年|samples?|examples?|rows?|days?|hours?|weeks?|" + GPU_MARK + ")"
)
_PRICE_AFTER = _c(r"^\s*(?:/\s*(?:小时|h|hr|hour|卡时|卡\s*/\s*小时)|每小时|一小时|per\s+(?:hour|hr|gpu)|an?\s+hour)")
_TOTAL = _c(r"总|一共|共计|总共|合计|整体|全部|一次性|(?<![A-Za-z])(?:total|overall|all[\s-]in|one[\s-]off|one[\s-]time"
            r"|altogether)")
# 'a total budget of ¥20000': the word 'total' is further from the amount than the window reaches.
_TOTAL_BUDGET_OF = _c(r"(?<![A-Za-z])total\s+(?:budget|spend(?:ing)?|cost)\s*(?:of|is|=|:|at)?\s*(?:¥|￥|\$|US\$|RMB|CNY)?\s*$")
_MONTH = _c(r"月|(?<![A-Za-z])(?:monthly|per\s+month|a\s+month|each\s+month|every\s+month|/\s*mo(?:nth)?)(?![A-Za-z])")
_ONE_OFF = _c(r"一次性|跑完|训完|训练完|这次训练|整个训练|(?<![A-Za-z])(?:one[\s-]off|one[\s-]time|this run"
              r"|the whole (?:job|run|training)|for the (?:job|run)|end to end)")


def _candidates(text: str) -> list[tuple[int, int, str, Currency, int]]:
    """(start, end, amount text, currency, where its words start) for money amounts and numbers right after a
    budget word, in text order; an amount with a currency sign wins over the same number read through a budget
    word."""
    out: list[tuple[int, int, int, str, Currency, int]] = []
    for pattern, currency in _MONEY:
        for m in pattern.finditer(text):
            amount = m.group("n") + (m.group("m") or "")
            if m.group(0).endswith("块") and (parse_number(amount) or 0) < 50:
                continue  # '用两块' is two cards, not two yuan
            out.append((m.start("n"), 0, m.end(), amount, currency, m.start()))
    for kw in _KEYWORD.finditer(text):
        _, clause_end = _clause(text, kw.start(), kw.end())
        for m in _BARE_AMOUNT.finditer(text, kw.end(), min(clause_end, kw.end() + 14)):
            if not _NOT_MONEY_AFTER.match(text[m.end() :]):
                out.append((m.start(), 1, m.end(), m.group("n") + (m.group("m") or ""), "CNY", m.start()))
                break
    return [(start, end, amount, cur, said) for start, _, end, amount, cur, said in sorted(out)]


_RANGE_UPPER = _c(r"^\s*(?:-|~|～|到|至|to)\s*(?:¥|￥|\$)?\s*" + _AMOUNT)


def find_budget(text: str, one_off: bool) -> tuple[Money | None, str]:
    """The first budget in the text. Period: 'total' when the words around it say 总/一共/total, 'month' when
    they say 月/per month; otherwise 'total' when the job is explicitly one-off (`one_off`, e.g. it has a
    deadline, or '一次性'/'this run'), else None so the schema default (month) or the previous value applies.
    A range ('3000-5000元') gives its upper bound; a price ('30元/小时') is not a budget."""
    for start, end, amount, currency, said in _candidates(text):
        value = parse_number(amount)
        if (upper := _RANGE_UPPER.match(text[end:])) is not None:  # '3000-5000元': plan for the upper bound
            value = parse_number(upper.group("n") + (upper.group("m") or "")) or value
            end += upper.end()
        if value is None or _PRICE_AFTER.match(text[end:]):
            continue
        lo, hi = _clause(text, start, end)
        window = text[max(lo, start - 16) : min(hi, end + 16)]
        period: Literal["month", "total"] | None = None
        if _TOTAL.search(window) or _TOTAL_BUDGET_OF.search(text[max(lo, start - 30) : start]):
            period = "total"
        elif _MONTH.search(window):
            period = "month"
        elif one_off or _ONE_OFF.search(text):
            period = "total"
        return Money(value, currency, period, text[said:end].strip()), blank(text, start, end)
    return None, text
