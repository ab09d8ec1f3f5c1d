"""Numbers as people write them in chat: '1.5万', '两万五', '一万五千', '50,000', '100k', '2T', '5000万', and as
they write them from a paper or a config: '1e5', '1.5e6', '1e-300', '10^6', '10**6', '2×10^9'; full-width digits
('１０万') are read as digits (`halfwidth`, applied to the whole message first).

`NUM` is the regex fragment the other parse modules embed, `DEC` its Arabic-only part (with an exponent);
`parse_number` turns what either matched into a float (an exponent beyond a float's range is inf or 0, so a range
check refuses it rather than a finder reading a piece of it).
"""

from __future__ import annotations

import math
import re

_ZH_DIGIT = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5, "陆": 6, "柒": 7, "捌": 8, "玖": 9,
}
_ZH_SMALL = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
ZH_CHARS = "".join(_ZH_DIGIT) + "".join(_ZH_SMALL) + "".join(_ZH_BIG)

# A number: Arabic (with optional thousands commas and decimals) optionally followed by Chinese units
# ('1.5万', '1万5'), or a run of Chinese numerals that starts with a digit, 十 or 百 ('两万五', '十万').
EN_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12}
# An exponent as written: '1e5', '1.5E-3', '10^6', '10**6', '2×10^9' / '2 x 10^9'.
EXP = r"(?:[eE](?=[+-]?\d)[+-]?\d{1,4}(?![A-Za-z])|\s?(?:[x×*]\s?10\s?)?(?:\^|\*\*)\s?[+-]?\d{1,4})(?!\d)"
# Never start inside an exponent ('6' of '10^6', '300' of '1e-300').
NOT_IN_EXP = r"(?<!\^)(?<!\*\*)(?<!\^\s)(?<!\*\*\s)(?<!\d[eE])(?<!\d[eE][+-])"
# An Arabic number with an optional exponent; atomic.
DEC = rf"{NOT_IN_EXP}(?>\d+(?:\.\d+)?(?:{EXP})?)"
# Atomic, and never started inside another number, so long digit runs cost linear time.
NUM = (
    rf"(?>(?<!\d)(?<!\d[.,]){NOT_IN_EXP}(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?(?:{EXP}|[{ZH_CHARS}][{ZH_CHARS}\d]*)?"
    rf"|(?<![{ZH_CHARS}])[一二两三四五六七八九十百壹贰叁肆伍陆柒捌玖拾佰][{ZH_CHARS}]*"
    rf"|(?<![A-Za-z])(?i:{'|'.join(EN_WORDS)})(?![A-Za-z]))"
)
# English magnitude suffixes ('100k', '2T tokens', '1.5M rows') and the Chinese slang 'w' (万).
MULT = r"(?:\s?(?:thousand|million|billion|trillion|bn|mn|[kKwWmMbBtT])(?![A-Za-z]))"

_EN_MULT = {
    "k": 1e3, "thousand": 1e3, "w": 1e4, "m": 1e6, "mn": 1e6, "million": 1e6,
    "b": 1e9, "bn": 1e9, "billion": 1e9, "t": 1e12, "trillion": 1e12,
}
_EXP_NUMBER = re.compile(r"^(?P<m>\d+(?:\.\d+)?)\s*(?:[eE](?P<e>[+-]?\d+)|(?P<x>[x×*]\s*10\s*)?(?:\^|\*\*)\s*(?P<p>[+-]?\d+))$")
# Full-width digits, Latin letters and the signs numbers are written with ('１０万', 'Ａ１００', '１．５', '１０＾６')
_HALFWIDTH = {**{c: chr(ord(c) - 0xFEE0) for c in map(chr, range(0xFF10, 0xFF1A))},
              **{c: chr(ord(c) - 0xFEE0) for c in map(chr, range(0xFF21, 0xFF3B))},
              **{c: chr(ord(c) - 0xFEE0) for c in map(chr, range(0xFF41, 0xFF5B))},
              "．": ".", "＾": "^", "＊": "*", "＋": "+", "－": "-", "％": "%", "＄": "$", "～": "~"}
_HALFWIDTH_TABLE = str.maketrans(_HALFWIDTH)


def halfwidth(text: str) -> str:
    """Full-width digits, letters and number signs as ASCII, one character for one (positions are kept); Chinese
    punctuation ('，' '：' '？') stays, the finders read it as clause ends."""
    return text.translate(_HALFWIDTH_TABLE)


def exponent_number(text: str) -> float | None:
    """'1e5' -> 1e5, '10^6' -> 1e6, '10**6', '2×10^9' -> 2e9; beyond a float's range: inf, or 0.0 below it."""
    m = _EXP_NUMBER.match(text.strip().replace(",", ""))
    if m is None:
        return None
    mantissa = float(m.group("m"))
    scientific = m.group("e") is not None or m.group("x") is not None  # mantissa x 10^p, else mantissa^p
    power = int(m.group("e") if m.group("e") is not None else m.group("p"))
    try:
        return mantissa * 10.0 ** power if scientific else mantissa ** power
    except (OverflowError, ZeroDivisionError):  # '1e999', '10^9999', '0^-1'
        return math.inf


_SUFFIX = re.compile(r"^(.*?)\s*(thousand|million|billion|trillion|bn|mn|[kwmbt])$", re.IGNORECASE)
_TOKEN = re.compile(rf"\d+(?:\.\d+)?|[{ZH_CHARS}]")


def zh_number(text: str) -> float | None:
    """Chinese, Arabic or mixed numerals to a float; None when the text is not a number.

    Handles units (十百千万亿), colloquial tails ('两万五' = 25000, '一百五' = 150, '1万5' = 15000) and
    zeros ('一百零五' = 105). '半' alone is 0.5.
    """
    s = text.strip().replace(",", "")
    if s.lower() in EN_WORDS:
        return float(EN_WORDS[s.lower()])
    if (exp := exponent_number(s)) is not None:
        return exp
    if s == "半":
        return 0.5
    tokens = _TOKEN.findall(s)
    if not s or "".join(tokens) != s:
        return None
    yi_part = wan_part = section = 0.0
    current: float | None = None
    last_unit: int | None = None  # the unit just before a trailing digit, for '两万五'
    for tok in tokens:
        if tok[0].isdigit():
            current = float(tok) if current is None else current * 10 ** len(tok) + float(tok)
        elif tok in _ZH_DIGIT:
            if _ZH_DIGIT[tok] == 0:
                last_unit = None
                continue
            current = _ZH_DIGIT[tok] if current is None else current * 10 + _ZH_DIGIT[tok]
        elif tok in _ZH_SMALL:
            section += (1 if current is None else current) * _ZH_SMALL[tok]
            current, last_unit = None, _ZH_SMALL[tok]
        elif tok == "万":
            wan_part += (section + (current or 0) or 1) * 10_000
            section, current, last_unit = 0.0, None, 10_000
        else:  # 亿
            yi_part += (wan_part + section + (current or 0) or 1) * 100_000_000
            wan_part, section, current, last_unit = 0.0, 0.0, None, 100_000_000
    if current is not None and last_unit is not None and current < 10:
        current *= last_unit / 10
    return yi_part + wan_part + section + (current or 0)


def parse_number(text: str) -> float | None:
    """A NUM match, optionally with an English magnitude suffix: '100k' -> 1e5, '2T' -> 2e12, '3w' -> 3e4."""
    s = text.strip()
    mult = 1.0
    if s.lower() in EN_WORDS:  # 'eight' is a number word, not 'eigh' + the trillion suffix
        return float(EN_WORDS[s.lower()])
    if (exp := exponent_number(s)) is not None:  # '1e5', '10^6' (the 'e' is never a suffix)
        return exp
    m = _SUFFIX.match(s)
    if m and m.group(1):
        s, mult = m.group(1), _EN_MULT[m.group(2).lower()]
    value = zh_number(s)
    return None if value is None else value * mult
