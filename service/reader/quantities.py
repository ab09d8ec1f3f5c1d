"""Sizes in free text: context length, tokens per sample, total tokens, parameter count, epochs, samples and
dataset size. Each finder takes the working text and returns (value or None, text with the match blanked), so a
number read once is not read again as something else ('10B tokens' is never also a 10B model).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.reader.numbers import DEC, MULT, NUM, ZH_CHARS, parse_number
from service.reader.ranges import Refused, check

BLANK = "\x00"
# A number that does not stop in the middle of a longer one ('50' of '500', '10' of '10万').
N = rf"(?P<n>{NUM})(?!\.\d|,\d{{3}}|[\d{ZH_CHARS}])"
NA = rf"(?P<n>(?<![\d.]){DEC}(?!\d|\.\d))"  # Arabic only (with an exponent: '1e5', '10^6')
M = rf"(?P<m>{MULT})?"

Finder = Callable[[re.Match[str]], float | None]


def blank(text: str, start: int, end: int, ch: str = BLANK) -> str:
    return text[:start] + ch * (end - start) + text[end:]


def first(text: str, patterns: list[tuple[re.Pattern[str], Finder]], slot: str | None = None,
          refused: list[Refused] | None = None) -> tuple[float | None, str]:
    """The first pattern (in list order) whose match converts to a value; that match is blanked. With a `slot`,
    a value outside the slot's range (service/reader/ranges.py) is noted in `refused` and blanked too, and the
    search goes on: the words said which slot the figure is, so no other finder may read it."""
    for pattern, convert in patterns:
        for m in pattern.finditer(text):
            value = convert(m)
            if value is None:
                continue
            if slot is not None and not check(slot, value, m.group(0), refused):
                text = blank(text, m.start(), m.end())
                continue
            return value, blank(text, m.start(), m.end())
    return None, text


def arabic(m: re.Match[str]) -> float:
    """An NA match as a float ('1e5', '10^6' as written)."""
    return parse_number(m.group("n")) or 0.0


def _num(m: re.Match[str]) -> float | None:
    return parse_number(m.group("n") + (m.group("m") or "") if "m" in m.groupdict() else m.group("n"))


def _positive(convert: Finder, low: float = 0.0, high: float = float("inf")) -> Finder:
    def wrapped(m: re.Match[str]) -> float | None:
        v = convert(m)
        return v if v is not None and low < v <= high else None

    return wrapped


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# --- context length (k = 1024) -----------------------------------------------------------------------------

_K = r"\s?(?P<k>k)?(?![A-Za-z0-9])"
_SEQ = [
    _c(NA + _K + r"\s*(?:的)?\s*(?:tokens?\s*)?(?:上下文|(?<![A-Za-z])(?:context|ctx)|序列长度|序列|窗口"
       r"|(?<![A-Za-z])seq(?:uence)?(?:[\s_-]*len(?:gth)?)?(?![A-Za-z]))"),
    _c(r"(?:上下文长度|上下文|序列长度|序列长|最大长度|截断长度|(?<![A-Za-z])(?:max[\s_-]*(?:seq(?:uence)?[\s_-]*)?len(?:gth)?"
       r"|seq(?:uence)?(?:[\s_-]*len(?:gth)?)?|cutoff(?:[\s_-]*len(?:gth)?)?|context(?:[\s_-]*(?:length|len|window|size))?"
       r"|ctx(?:[\s_-]*len)?|block[\s_-]*size|model[\s_-]*max[\s_-]*length))"
       r"\s*(?:[:=：]|is|of|to|为|是|设为|设置为|到|改成|改为|约|才|只有|只开|开到|开)?\s*" + NA + _K),
    _c(r"(?:长度|序列长度)\s*(?:是|为|[:=：]|设为|才|只有)?\s*" + NA + _K),
    _c(NA + _K + r"\s*(?:的)?\s*(?:长度|长(?:文本)?)(?!度)"),
    # a bare '4k' / '32K' in chat ('8卡A800 4k就溢出', '全参 4k'): a context length when nothing makes it money or a count
    _c(r"(?<![A-Za-z0-9_.¥￥$])(?P<n>1|2|4|8|16|32|64|128|256)\s?(?P<k>[kK])(?![A-Za-z0-9])"
       r"(?!\s*(?:条|个|样本|行|元|块|美元|rmb|万|/月|每月|的数据|数据|samples?|rows?|examples?|pairs?|conversations?|"
       r"tokens? (?:of|per|each)|steps?|iters?|images?|qps|users?|并发|次|人))"),
]


def _seq_said(m: re.Match[str]) -> float | None:
    return arabic(m) * (1024 if m.group("k") else 1)


def _seq_value(m: re.Match[str]) -> float | None:
    v = _seq_said(m)
    return v if v is not None and 16 <= v <= 1_048_576 else None


_MONEY_BEFORE = re.compile(r"(?:预算|budget|花费|成本|cost|¥|￥|\$|rmb|价格|price|月均|每月|per month)\s*[:：]?\s*$", re.I)
# 'avg 2k tokens', '平均2k', 'each sample is 2k tokens': a sample's length, never the context
_AVG_BEFORE = re.compile(r"(?:平均|均长|每条|单条|(?<![A-Za-z])(?:avg|average|averaging|mean|(?:each|every|per)"
                         r"(?:\s+(?:sample|example|row|record|item|conversation)s?)?))"
                         r"\s*(?:长度|length|of|is|are|has|约|大约|:|：|~|≈|about|around)?\s*$", re.I)


def _seq_value_bare(m: re.Match[str]) -> float | None:
    before = m.string[max(0, m.start() - 16) : m.start()]
    return None if _MONEY_BEFORE.search(before) or _AVG_BEFORE.search(before) else _seq_value(m)


def find_seq_len(text: str, refused: list[Refused] | None = None) -> tuple[int | None, str]:
    """The context length; of several bare ones ('跑2k可以 想跑32k') the longest, which is the one asked about. Said
    with its words ('上下文 8', 'seq_len 1e7'), a length out of range is refused; a bare '3长' only is not one."""
    v, text = first(text, [(p, _seq_said) for p in _SEQ[:3]], "seq_len", refused)
    if v is None:
        v, text = first(text, [(_SEQ[3], _seq_value)])
    if v is None:
        bare = [(m, val) for m in _SEQ[-1].finditer(text) if (val := _seq_value_bare(m)) is not None]
        if bare:
            v = max(val for _, val in bare)
            for m, _ in bare:
                text = blank(text, m.start(), m.end())
    return (None if v is None else round(v)), text


# --- tokens per sample, total tokens --------------------------------------------------------------------------

_TOK = r"(?:tokens?|词元|tok)(?![A-Za-z])"
_PER_SAMPLE = r"(?:sample|example|row|record|item|conversation|instance|entry|line|doc(?:ument)?|条|样本)"
_AVG = [
    _c(r"(?:每条|每个样本|每样本|单条|每个?样本|每一条)(?:数据|样本)?(?:平均|约|大约|大概|长度|长|的长度|有|是|为|在|\s)*"
       + N + M + r"\s*(?:个)?\s*(?:" + _TOK + r")?(?!\s*(?:个)?\s*(?:汉字|中文|字))"),
    _c(r"(?:平均|均长|(?<![A-Za-z])(?:avg|average|mean))(?:每条|长度|length|of|is|:|约|大约|大概|为|是|\s)*"
       + N + M + r"\s*(?:个)?\s*" + _TOK),
    _c(N + M + r"\s*(?:个)?\s*" + _TOK + r"\s*(?:(?:per|/|each|every|an?)\s*" + _PER_SAMPLE + r"|每条|/条|一条)"),
    _c(r"(?<![A-Za-z])(?:each|every|per)\s+" + _PER_SAMPLE + r"\s+(?:is|has|averages|of|~|≈|about|around|roughly|\s)*"
       + N + M + r"\s*" + _TOK),
]
_TOKENS = _c(N + M + r"\s*(?:个)?\s*" + _TOK)
# A sample's length in characters ('每条约800字', '平均 1200 个汉字', 'avg 3000 characters'), converted to tokens at a
# stated ratio: "1 个中文字符 ≈ 0.6 个 token", "1 个英文字符 ≈ 0.3 个 token" (DeepSeek API docs, Token 用量计算,
# https://api-docs.deepseek.com/zh-cn/quick_start/token_usage); the answer says the ratio (CHAR_RATIO_NOTE).
ZH_TOKENS_PER_CHAR = 0.6
EN_TOKENS_PER_CHAR = 0.3
_ZH_CHAR = r"(?:个)?\s*(?:汉字|中文字符?|字符|字)(?![节段])"
_EN_CHAR = r"(?:characters?|chars?)(?![A-Za-z])"
_AVG_CHARS = [
    (_c(r"(?:每条|每个样本|每样本|单条|每一条|平均|均长)(?:数据|样本)?(?:平均|约|大约|大概|长度|长|的长度|有|是|为|在|\s)*"
        + N + M + r"\s*" + _ZH_CHAR), ZH_TOKENS_PER_CHAR),
    (_c(N + M + r"\s*" + _ZH_CHAR + r"\s*(?:每条|/条|一条|左右一条)"), ZH_TOKENS_PER_CHAR),
    (_c(r"(?<![A-Za-z])(?:avg|average|mean|each|every|per)(?:\s+(?:sample|example|row|record|item|conversation))?"
        r"(?:\s+(?:is|has|of|length|about|around|~|≈))*\s*" + N + M + r"\s*" + _EN_CHAR), EN_TOKENS_PER_CHAR),
]


def find_avg_tokens(text: str, refused: list[Refused] | None = None) -> tuple[int | None, str]:
    """Tokens per sample as written, or characters per sample at the stated ratio (ZH/EN_TOKENS_PER_CHAR)."""
    v, text = first(text, [(p, _num) for p in _AVG], "avg_tokens_per_sample", refused)
    if v is None:
        for pattern, ratio in _AVG_CHARS:
            chars, text = first(text, [(pattern, _num)])
            if chars is not None:
                v = max(1.0, chars * ratio)
                break
    return (None if v is None else round(v)), text


def find_avg_chars(text: str) -> tuple[float, float] | None:
    """(characters per sample, tokens per character) when the message gives a sample's length in characters: for
    the note that states the ratio ('每条约800字按 1 字 ≈ 0.6 token 折算')."""
    for pattern, ratio in _AVG_CHARS:
        m = pattern.search(text)
        if m is not None and (chars := _num(m)) is not None:
            return chars, ratio
    return None


def char_ratio_note(chars: float, ratio: float) -> tuple[str, str]:
    """The sentence an answer states with a length given in characters."""
    tokens = round(chars * ratio)
    return (f"{chars:,.0f} characters a sample read as ~{tokens:,} tokens at {ratio:g} token per character "
            "(DeepSeek's published ratio).",
            f"每条 {chars:,.0f} 字按 1 字 ≈ {ratio:g} token（DeepSeek 公布的换算比例）折算约 {tokens:,} tokens。")


def find_tokens(text: str, refused: list[Refused] | None = None) -> tuple[float | None, str]:
    """Total tokens ('1亿token', '2T tokens', '5000万tokens'). Counts under 100k read as tokens per sample by the
    caller: no training corpus is that small."""
    return first(text, [(_TOKENS, _num)], "tokens", refused)


# --- parameter count (billions) -------------------------------------------------------------------------------

_NOT_PARAMS_AFTER = r"(?!\s*(?:tokens?|条|samples?|rows?|bytes?|字节|词元))"
_PARAMS: list[tuple[re.Pattern[str], Finder]] = [
    (re.compile(r"(?<![A-Za-z0-9.$¥￥\x00])" + NA + r"\s?[bB](?![A-Za-z0-9])" + _NOT_PARAMS_AFTER),
     arabic),
    (re.compile(r"(?<![A-Za-z0-9.$¥￥\x00])" + NA + r"\s?[mM](?![A-Za-z0-9])(?=\s*(?:的)?\s*(?:参数|params?|parameters?|模型|model))",
                re.IGNORECASE), lambda m: arabic(m) / 1000),
    (_c(NA + r"\s*billion\s*(?:params?|parameters?|model)"), arabic),
    (_c(N + r"\s*(?:个)?\s*(?:的)?\s*(?:参数|(?<![A-Za-z])params?(?![A-Za-z])|parameters?)"),
     lambda m: (v / 1e9) if (v := parse_number(m.group("n"))) and v >= 1e7 else None),
    (_c(r"参数(?:量|规模)?\s*(?:为|是|约|大约|有|:|：)?\s*" + N),
     lambda m: (v / 1e9) if (v := parse_number(m.group("n"))) and v >= 1e7 else None),
    # a bare '720亿' (not money, tokens or samples: those were read first)
    (re.compile(r"(?<![¥￥$\d])" + rf"(?P<n>{NUM})" + r"(?<=亿)(?!\s*(?:元|块|美元|条|字|词|行|样本|人|次))"),
     lambda m: (v / 1e9) if (v := parse_number(m.group("n"))) else None),
]


def find_params_b(text: str, refused: list[Refused] | None = None) -> tuple[float | None, str]:
    """Said with its unit ('7B', '70亿参数'), a size out of range is refused; a bare '720亿' only is not one."""
    v, text = first(text, _PARAMS[:-1], "params_b", refused)
    return (v, text) if v is not None else first(text, [(_PARAMS[-1][0], _positive(_PARAMS[-1][1], 0, 5000))])


# --- LoRA rank ----------------------------------------------------------------------------------------------

_RANK = _c(r"(?:(?<![A-Za-z])(?:rank|lora_r)(?![A-Za-z])|秩)\s*(?:[:=：]|为|是|of|设为)?\s*" + NA)


def find_lora_rank(text: str, refused: list[Refused] | None = None) -> tuple[int | None, str]:
    v, text = first(text, [(_RANK, arabic)], "lora_rank", refused)
    return (None if v is None else round(v)), text


# --- epochs ---------------------------------------------------------------------------------------------------

_EPOCHS = [
    _c(N + r"\s*(?:个)?\s*(?:轮|遍|epochs?(?![A-Za-z]))(?!\s*对话|次对话)"),
    _c(r"(?:(?<![A-Za-z])(?:epochs?|num_train_epochs|num_epochs|n_epochs)|训练轮数|轮数)\s*(?:[:=：]|为|是|of|设为)?\s*" + NA),
]


def find_epochs(text: str, refused: list[Refused] | None = None) -> tuple[float | None, str]:
    return first(text, [(p, _num) for p in _EPOCHS], "epochs", refused)


# --- samples --------------------------------------------------------------------------------------------------

_NOT_UNIT_WORD = r"(?!(?:epochs?|gpus?|days?|hours?|weeks?|tokens?|times|months?|cards?)\b)"
_SAMPLES = [
    _c(N + M + r"\s*(?:多|余)?\s*(?:条|个?样本|组数据|对(?:数据|样本)|篇|行数据|张(?:图片|图像|图)|段(?:文本|对话)?|个?对话"
       r"|个?问答对|句(?:话)?)"),
    _c(N + M + r"\s*(?:(?:" + _NOT_UNIT_WORD + r"[A-Za-z][\w-]*)\s+){0,2}?(?:samples?|examples?|rows?|records?|pairs?"
       r"|conversations?|dialog(?:ue)?s?|instructions?|images?|documents?|docs|lines|entries|sentences|items|texts)\b"),
    # '500张' is images: a GPU count is never that large without 卡/GPU or a GPU name after it
    (_c(N + M + r"\s*张(?!\s*(?:卡|显卡|GPU|\x01|A\d|H\d|V\d|T4|L\d))")),
    # 'qwen2.5-7b lora 100k': a bare thousands / 万 count right after the method is the data's samples
    _c(r"(?<![A-Za-z])(?:q?lora|sft|full(?:[- ]?fine-?tun\w*)?|全参|微调|fine-?tun\w*)\s*[,，]?\s*" + NA
       + r"\s*(?P<m>[kK万w])(?![A-Za-z\w])(?!\s*(?:tokens?|steps?|iters?|上下文|context|ctx|长度|len))"),
    _c(r"(?:数据集?|样本|训练集|语料)(?:量|数|数量|规模|大小)?\s*(?:有|是|为|约|大约|大概|共|一共|:|：)?\s*" + N + M
       + r"(?!\s*(?:[GTM]i?B?(?![A-Za-z])|tokens?|元|块|天|小时|卡|张|轮|个?epoch|%|美元))"),
]


def find_samples(text: str, refused: list[Refused] | None = None) -> tuple[int | None, str]:
    """'10万条', '50k samples', '数据集有2万', and '500张' (images: under 99 it is a GPU count, not samples)."""
    patterns = [(p, _positive(_num, 99) if p is _SAMPLES[2] else _num) for p in _SAMPLES]
    v, text = first(text, patterns, "samples", refused)
    return (None if v is None else round(v)), text


# --- dataset size in GB ---------------------------------------------------------------------------------------

_GB = re.compile(
    NA + r"\s*(?P<u>GiB|TiB|GB|TB|MB|G|T)(?![A-Za-z])"
    r"(?!\s*(?:of\s+)?(?:tokens?|显存|内存|memory|vram|ram|的?显卡|gpus?|cards?|带宽|bandwidth|参数|params|硬盘|磁盘|disk|storage|"
    r"ssd|网络|network|bps))",
    re.IGNORECASE,
)
_DATA_AFTER = re.compile(r"^\s*(?:的)?\s*(?:数据|语料|文本|图片|训练数据|(?:of\s+)?(?:data|dataset|corpus|text|images))",
                         re.IGNORECASE)
_DATA_BEFORE = re.compile(r"数据|语料|(?<![A-Za-z])(?:data|dataset|corpus)", re.IGNORECASE)
_MEMORY_BEFORE = re.compile(r"(?:内存|显存|现存|(?<![A-Za-z])(?:ram|memory|vram|varm|dram|ddr\d?))\s*(?:是|有|为|:|：|of|is)?\s*$",
                            re.IGNORECASE)
_TO_GB = {"gib": 1.073741824, "tib": 1099.511627776, "gb": 1.0, "tb": 1000.0, "mb": 0.001, "g": 1.0, "t": 1000.0}


def find_dataset_gb(text: str, refused: list[Refused] | None = None) -> tuple[float | None, str]:
    """'500GB', '2TB' (= 2000), '500G数据'. A bare 'G' or 'T' needs data words nearby."""
    for m in _GB.finditer(text):
        unit = m.group("u").lower()
        if _MEMORY_BEFORE.search(text[max(0, m.start() - 8) : m.start()]):
            continue  # '内存640GB', 'RAM 128GB': memory, not data
        if unit in ("g", "t") and not (
            _DATA_AFTER.match(text[m.end() :]) or _DATA_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
        ):
            continue
        value = arabic(m) * _TO_GB[unit]
        if check("dataset_gb", value, m.group(0), refused):
            return value, blank(text, m.start(), m.end())
        text = blank(text, m.start(), m.end())
    return None, text
