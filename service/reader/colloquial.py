"""Colloquial amounts, relative deadlines and quoted prices, read before the other finders and said as notes.

- '两三万' = 20,000-30,000: the midpoint (25,000), stated; 'a couple hundred thousand' = 200,000, 'a few
  thousand' = 3,000, stated.
- Relative deadlines against today's date (or the weekday the message gives, '今天周二', "it's tuesday"):
  '周五前', 'by Friday', '下周一前', '月底前', 'by the end of the month'.
- A price the user quotes ('A100每小时2元', '报价8元/卡时', '$2/hr') is their price, not a budget: blanked here so the
  budget finder never reads it, and reported.
Each finder returns the text with what it read replaced or blanked, so it is not read again.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from service.reader.numbers import DEC, parse_number
from service.reader.quantities import blank

NOTES = {
    "approx": ("'{0}' read as {1:,.0f} (the midpoint of {2:,.0f}-{3:,.0f}).", "“{0}”按中间值 {1:,.0f} 计（{2:,.0f}–{3:,.0f}）。"),
    "approx_en": ("'{0}' read as {1:,.0f}.", "“{0}”按 {1:,.0f} 计。"),
    "relative_deadline": ("Deadline '{0}' read as {1:g} h ({2} days from {3}).",
                          "期限“{0}”按 {1:g} 小时计（从{3}起 {2} 天）。"),
    "user_price": ("The price you quoted ({0}) is taken as your price, not as a budget; the costs below use the "
                   "catalog's prices (a price sheet with --prices uses yours).",
                   "你给出的价格（{0}）按你的报价记录，不当作预算；下面的费用按目录价计算（用 --prices 价格表可按你的价格算）。"),
}

_ZH_DIGIT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "十万": 100_000, "百万": 1_000_000, "千万": 10_000_000,
            "亿": 100_000_000}
_RANGE_ZH = re.compile(r"(?<![一二两三四五六七八九十百千万\d])([一二两三四五六七八])([二三四五六七八九])(十万|百万|千万|十|百|千|万|亿)")
_EN_FEW = re.compile(
    r"(?<![A-Za-z])(?:a\s+)?(?P<q>couple(?:\s+of)?|few)\s+(?P<u>hundred\s+thousand|hundred|thousand|million)(?![A-Za-z])",
    re.IGNORECASE)
_EN_UNIT = {"hundred": 100, "thousand": 1000, "hundred thousand": 100_000, "million": 1_000_000}

Note = tuple[str, tuple[object, ...]]


def _arabic(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value:g}"


def approximate_amounts(text: str) -> tuple[str, list[Note]]:
    """'两三万' -> '25000', 'a couple hundred thousand' -> '200000' (the text is rewritten), with notes."""
    notes: list[Note] = []

    def zh(m: re.Match[str]) -> str:
        a, b = _ZH_DIGIT[m.group(1)], _ZH_DIGIT[m.group(2)]
        if b != a + 1:
            return m.group(0)
        unit = _ZH_UNIT[m.group(3)]
        mid = (a + b) / 2 * unit
        notes.append(("approx", (m.group(0), mid, a * unit, b * unit)))
        return _arabic(mid)

    def en(m: re.Match[str]) -> str:
        q = 2 if m.group("q").lower().startswith("couple") else 3
        value = q * _EN_UNIT[re.sub(r"\s+", " ", m.group("u").lower())]
        notes.append(("approx_en", (m.group(0).strip(), value)))
        return _arabic(value)

    return _EN_FEW.sub(en, _RANGE_ZH.sub(zh, text)), notes


_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEKDAYS_EN = {d.lower(): i for i, d in enumerate(calendar.day_name)} | {
    d.lower(): i for i, d in enumerate(calendar.day_abbr)}
_EN_DAY = "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))
_TODAY_ZH = re.compile(r"今天(?:是)?\s*(?:周|星期|礼拜)([一二三四五六日天])")
_TODAY_EN = re.compile(rf"(?<![A-Za-z])(?:it'?s|it is|today is|today'?s)\s+(?:a\s+)?({_EN_DAY})(?![A-Za-z])",
                       re.IGNORECASE)
_BY_ZH = re.compile(r"(下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])\s*(?:之前|以前|前|内|截止|为止)")
_BY_EN = re.compile(rf"(?<![A-Za-z])(?:by|before|until|till|due)\s+(?:(next|this)\s+)?({_EN_DAY})(?![A-Za-z])",
                    re.IGNORECASE)
_MONTH_END = re.compile(r"(?:这个)?(?:月底|月末)\s*(?:之前|以前|前|内)?|(?<![A-Za-z])(?:by|before)\s+(?:the\s+)?end\s+of\s+"
                        r"(?:the|this)\s+month(?![A-Za-z])", re.IGNORECASE)
_WEEKDAY_NAMES_ZH = "一二三四五六日"


@dataclass(frozen=True)
class Deadline:
    hours: float
    note: Note


def _today_weekday(text: str, today: date) -> tuple[int, str, str]:
    """(weekday, how the message names it or the date, blanked-span) for today."""
    m = _TODAY_ZH.search(text)
    if m:
        return _WEEKDAYS_ZH[m.group(1)], f"周{m.group(1)}", m.group(0)
    m = _TODAY_EN.search(text)
    if m:
        return _WEEKDAYS_EN[m.group(1).lower()], m.group(1).capitalize(), m.group(0)
    return today.weekday(), today.isoformat(), ""


def find_relative_deadline(text: str, today: date) -> tuple[Deadline | None, str]:
    """'周五前' / 'by Friday' (from today's weekday: the message's '今天周二' / "it's Tuesday", else the date),
    '下周一前' / 'by next Monday', '月底前' / 'by the end of the month'. Days x 24 h."""
    weekday, since, said = _today_weekday(text, today)
    for pattern, zh in ((_BY_ZH, True), (_BY_EN, False)):
        m = pattern.search(text)
        if m is None:
            continue
        target = _WEEKDAYS_ZH[m.group(2)] if zh else _WEEKDAYS_EN[m.group(2).lower()]
        nxt = bool(m.group(1)) and (zh or m.group(1).lower() == "next")
        days = (target - weekday) % 7 or 7
        if nxt:
            days = 7 - weekday + target
        out = blank(text, m.start(), m.end())
        if said:
            out = out.replace(said, " " * len(said), 1)
        return Deadline(days * 24.0, ("relative_deadline", (m.group(0).strip(), days * 24.0, days, since))), out
    m = _MONTH_END.search(text)
    if m:
        days = max(1, calendar.monthrange(today.year, today.month)[1] - today.day)
        note = ("relative_deadline", (m.group(0).strip(), days * 24.0, days, today.isoformat()))
        return Deadline(days * 24.0, note), blank(text, m.start(), m.end())
    return None, text


_AMOUNT = r"(?:¥|￥|\$|US\$|RMB\s*)?\s*" + DEC + r"\s*(?:元|块钱?|美元|刀|(?<![A-Za-z])(?:rmb|cny|yuan|usd|dollars?|bucks)"
_AMOUNT += r"(?![A-Za-z]))?"
_PRICE = re.compile(
    r"(?:每小时|每卡时|每卡每小时|一小时|单价|报价(?:是|为)?|(?<![A-Za-z])(?:per hour|an hour|hourly|quoted(?: at)?|a quote of)"
    rf")\s*(?:是|为|:|：|只要|只需|仅需|仅|才|要|大概|约|(?<![A-Za-z])(?:is|only|just)(?![A-Za-z]))?\s*(?P<p>{_AMOUNT})",
    re.IGNORECASE)


_PRICE_AFTER = re.compile(
    rf"(?P<p>{_AMOUNT})\s*(?:/\s*(?:卡时|卡\s*/\s*小时|小时|h|hr|hour|gpu[\s-]?h(?:ou)?r)(?![A-Za-z])|每小时|一小时"
    r"|(?<![A-Za-z])(?:per|an|a)\s+(?:gpu[\s-]?)?(?:hour|hr)(?![A-Za-z]))", re.IGNORECASE)


@dataclass(frozen=True)
class Quoted:
    """A price the user quotes, per GPU-hour as people quote cards ('每卡每小时8元', 'A100每小时2元', '$2/hr')."""

    said: str  # as written: '每卡每小时只要8元'
    amount: float
    currency: Literal["CNY", "USD"]
    start: int  # where it starts in the text (the GPU named last before it is the one priced)


_USD = re.compile(r"\$|美元|刀|usd|dollar|buck", re.IGNORECASE)


def find_user_price(text: str) -> tuple[Quoted | None, str]:
    """A price the user quotes: '每小时2元', '报价是8元/卡时', '每卡每小时只要8元', 'quoted $2', '$2/hr', '30元/小时'.
    The span is blanked (never a budget, never a deadline)."""
    for pattern in (_PRICE, _PRICE_AFTER):
        m = pattern.search(text)
        if m is not None and (n := re.search(DEC, m.group("p"))) is not None and re.search(
                r"[¥￥$元块]|rmb|cny|yuan|usd|dollar|buck", m.group(0), re.IGNORECASE):
            currency: Literal["CNY", "USD"] = "USD" if _USD.search(m.group("p")) else "CNY"
            quoted = Quoted(m.group(0).strip(), parse_number(n.group(0)) or 0.0, currency, m.start())
            return quoted, blank(text, m.start(), m.end())
    return None, text
