"""Names in free text: models and GPUs (looked up through normalised alias maps) and clouds.

Names are found by joining neighbouring word tokens ('Qwen2' '-' '7B' '-' 'Instruct', '千问' '2' '-' '7B') into
spans, normalising each span with `service.catalog.queries.normalize` and looking it up, longest span first.
A GPU or cloud only becomes a constraint when the words around it say so ('只用A100', 'no T4', '8张A100').
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from service.catalog.queries import normalize

Stance = Literal["include", "exclude"]

_ZH_FAMILIES = "通义千问|千问|羊驼|百川|书生浦语|书生万象|零一万物|深度求索|智谱|文心一言|文心|腾讯混元|混元|月之暗面"
_TOKEN = re.compile(rf"[A-Za-z0-9]+(?:\.[0-9]+[A-Za-z0-9]*)*|{_ZH_FAMILIES}")
_JOIN_GAP = re.compile(r"[\s\-_./]{0,3}")
_SIZE = re.compile(r"\d+(?:\.\d+)?[bBmM]")
_INSTRUCT = re.compile(r"(instruct|chat|base|hf|it)$")
_FAMILY = re.compile(
    rf"(?i:qwen|llama|baichuan|chatglm|glm|internlm|yi|deepseek|mistral|mixtral|gemma|phi|falcon|bloomz?|opt"
    rf"|gpt|t5|vicuna|minicpm|codellama|starcoder|aquila|moss|ziya|{_ZH_FAMILIES})(?![A-Za-z])"
)
_MAX_SPAN = 8
# Families whose name tells the kind (encoder, diffusion) even without a size.
_HINT_FAMILY = re.compile(r"(?i:bge|bert|roberta|deberta|e5|gte|m3e|text2vec|sd|sdxl|flux|stable)(?![A-Za-z])")
_SUFFIX = re.compile(r"(?:[-_](?:vision|vl|instruct|chat|it|base|hf))+(?![A-Za-z0-9])", re.IGNORECASE)


@dataclass(frozen=True)
class NameHit:
    start: int
    end: int
    value: str  # canonical id, or the raw text for an unknown model
    known: bool = True


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def _spans(text: str, max_tokens: int) -> list[tuple[int, int, int, int]]:
    """(start, end, first token index, last token index) for runs of tokens joined by -_./ or short spaces."""
    toks = _tokens(text)
    out: list[tuple[int, int, int, int]] = []
    for i, (start, _) in enumerate(toks):
        for j in range(i, min(i + max_tokens, len(toks))):
            if j > i and not _JOIN_GAP.fullmatch(text[toks[j - 1][1] : toks[j][0]]):
                break
            out.append((start, toks[j][1], i, j))
    return out


def _pick(hits: list[NameHit]) -> list[NameHit]:
    """Longest hits first, without overlaps; returned in text order."""
    chosen: list[NameHit] = []
    for h in sorted(hits, key=lambda h: (-(h.end - h.start), h.start)):
        if all(h.end <= c.start or h.start >= c.end for c in chosen):
            chosen.append(h)
    return sorted(chosen, key=lambda h: h.start)


def _lookup_model(key: str, aliases: Mapping[str, str]) -> str | None:
    hit = aliases.get(key)
    # 'qwen2-7b-instruct' / 'llama-2-7b-chat-hf' -> the base architecture (same dimensions)
    while hit is None and (m := _INSTRUCT.search(key)) and m.start() > 0:
        key = key[: m.start()]
        hit = aliases.get(key)
    return hit


def _unknown_model(text: str, toks: list[tuple[int, int]], i: int, j: int) -> bool:
    """A family name or a hyphenated name that ends in a size ('Qwen5-9B', 'llama 3 70b', 'MyNet-13B')."""
    span = text[toks[i][0] : toks[j][1]]
    gaps = [text[toks[k - 1][1] : toks[k][0]] for k in range(i + 1, j + 1)]
    if j > i and _HINT_FAMILY.match(span) and all(g in ("-", "_") for g in gaps):
        return True  # 'bge-small-en', 'sdxl-turbo': a family that says the kind without a size
    if j == i or not _SIZE.fullmatch(text[toks[j][0] : toks[j][1]]) or not span[0].isalpha():
        return False
    if _FAMILY.match(span):
        # spaces only before a version or size token ('llama 3 70b'), never before a word ('qwen lora 7b')
        return all(" " not in g or text[toks[k][0]].isdigit() for k, g in zip(range(i + 1, j + 1), gaps, strict=True))
    return all(g in ("-", "_") for g in gaps)


# 'DeepSeek-R1 蒸馏版 7b', 'ds r1 蒸馏 32b', 'r1 distill llama 70b': R1's distilled models, never the 671B R1 itself
_R1_DISTILL = re.compile(r"(?<![A-Za-z0-9])(?:(?:deepseek|ds)[\s\-_]*)?r1[\s\-_:]*(?:的)?\s*(?:蒸馏版?|distill(?:ed)?)"
                         r"[\s\-_]*(?:版|模型)?[\s\-_]*(?:(?P<base>qwen|llama)[\s\-_]*)?(?P<size>1\.5|7|8|14|32|70)\s*b(?![A-Za-z])",
                         re.IGNORECASE)
_R1_BASE = {"1.5": "Qwen", "7": "Qwen", "14": "Qwen", "32": "Qwen", "8": "Llama", "70": "Llama"}


def _r1_distills(text: str, aliases: Mapping[str, str]) -> list[NameHit]:
    out = []
    for m in _R1_DISTILL.finditer(text):
        base = (m.group("base") or _R1_BASE[m.group("size")]).capitalize()
        name = f"DeepSeek-R1-Distill-{base}-{m.group('size')}B"
        hit = _lookup_model(normalize(name), aliases)
        out.append(NameHit(m.start(), m.end(), hit or name, known=hit is not None))
    return out


def find_models(text: str, aliases: Mapping[str, str]) -> list[NameHit]:
    """Known models (alias hits), then unknown family+size names that do not overlap a known one."""
    toks = _tokens(text)
    spans = _spans(text, _MAX_SPAN)
    distills = _r1_distills(text, aliases)
    known = []
    for start, end, _, _ in spans:
        hit = _lookup_model(normalize(text[start:end]), aliases)
        if hit is not None and not _SIZE.fullmatch(text[start:end]) and \
                all(end <= d.start or start >= d.end for d in distills):
            known.append(NameHit(start, end, hit))
    chosen = distills + [h for h in _pick(known) if not _VARIANT_AFTER.match(text, h.end)]
    unknown = [
        NameHit(start, end, text[start:end], known=False)
        for start, end, i, j in spans
        if _unknown_model(text, toks, i, j)
        and all(end <= c.start or start >= c.end for c in chosen)
    ]
    unknown = [_with_suffix(text, h) for h in unknown]
    return _pick(chosen + _pick(unknown))


# A known name followed by a variant word is another model ('Phi-4-mini' is not the 14B Phi-4).
_VARIANT_AFTER = re.compile(r"[-_ ]?(?:mini|small|medium|tiny|nano|lite|moe|coder|math|omni|audio|flash|turbo)"
                            r"(?![A-Za-z])", re.IGNORECASE)
# 'llama70b', 'qwen72b', 'qwen7b-chat': a family glued to its size in one token
_GLUED = re.compile(rf"(?i:{_FAMILY.pattern[:-len('(?![A-Za-z])')]})[\d.]*?-?(?P<size>\d+(?:\.\d+)?[bBmM])(?:-[A-Za-z]+)*")
# Families named without a size ('LLaMA2', 'Vicuna', 'dbrx'): a mention for the labels, never a sizable workload
_MENTION = re.compile(rf"(?<![A-Za-z0-9])(?:{_FAMILY.pattern[:-len('(?![A-Za-z])')]}|(?i:llava|vicuna|starcoder|dbrx|grok|"
                      r"minicpm|internvl|whisper|clip|gpt-?j|gpt-?neox|gpt-?2|opt|bloom))"
                      r"(?:[-_ ]?\d+(?:\.\d+)?)*(?:-(?i:mini|small|medium|v|vl|chat|instruct|base))*(?![A-Za-z])")


def model_mentions(text: str, taken: list[NameHit]) -> list[NameHit]:
    """Model names the alias map and the family+size rule did not size: glued ('llama70b') or sizeless ('LLaMA2',
    'Vicuna'). Outside any span already taken."""
    out: list[NameHit] = []
    for pattern in (_GLUED, _MENTION):
        for m in pattern.finditer(text):
            if all(m.end() <= t.start or m.start() >= t.end for t in [*taken, *out]) and m.group(0).strip():
                out.append(NameHit(m.start(), m.end(), m.group(0), known=False))
    return sorted(out, key=lambda h: h.start)


_PACKAGING = re.compile(r"[-_]hf$", re.IGNORECASE)  # 'llama-7b-hf': the Hugging Face export, the same model


def plain_name(name: str) -> str:
    """An unknown model's name without its packaging suffix ('llama-7b-hf' -> 'llama-7b')."""
    return _PACKAGING.sub("", name)


def compose_model(mention: str, params_b: float, aliases: Mapping[str, str]) -> str:
    """A family named without its size and a size stated apart ('Llama2 ... 70B', '7B LLaVA'): the catalog's model
    when the two name one ('Llama-2-70B'), else the family with the size as one name ('LLaVA-7B', sized by it)."""
    base = _SUFFIX.sub("", mention.strip())
    name = f"{base}-{params_b:g}B"
    return _lookup_model(normalize(name), aliases) or name


def _with_suffix(text: str, h: NameHit) -> NameHit:
    """'Llama-3.2-11B' + '-Vision': the suffix says the kind, so it stays with the name."""
    m = _SUFFIX.match(text, h.end)
    return h if m is None else NameHit(h.start, m.end(), text[h.start : m.end()], known=False)


_DIGIT_ALIAS_BLOCK_BEFORE = re.compile(r"(?:[¥￥$]|预算|budget|月均|花|一共|总共)\s*$", re.IGNORECASE)
_DIGIT_ALIAS_BLOCK_AFTER = re.compile(
    r"^\s*(?:元|块|条|万|千|天|小时|轮|个|年|月|美元|tokens?|[kKwWhGTMB](?![A-Za-z0-9])|GB|TB|yuan|dollars?)"
)


def find_gpus(text: str, aliases: Mapping[str, str]) -> list[NameHit]:
    """GPU names from the alias map; a plural 's' is allowed ('A100s'); a bare number such as '4090' is not
    taken when it reads as an amount ('预算4090元', '¥4090')."""
    hits = []
    for start, end, _, _ in _spans(text, 4):
        raw = text[start:end]
        key = normalize(raw)
        gpu = aliases.get(key)
        for alt in (key[:-1] if key.endswith("s") else "", key[3:] if key.startswith("rtx") else ""):
            if gpu is None and alt:
                gpu = aliases.get(alt)
        if gpu is None:
            continue
        if raw.isdigit() and (
            _DIGIT_ALIAS_BLOCK_BEFORE.search(text[:start]) or _DIGIT_ALIAS_BLOCK_AFTER.match(text[end:])
        ):
            continue
        hits.append(NameHit(start, end, gpu))
    return _pick(hits)


def _alternation(names: list[str]) -> str:
    """Longest first, word-bounded where a name is Latin ('jd' never inside 'jdk')."""
    parts = []
    for n in sorted(names, key=len, reverse=True):
        body = r"\s*".join(re.escape(w) for w in n.split())
        parts.append(rf"(?<![A-Za-z]){body}(?![A-Za-z])" if n.isascii() else body)
    return "|".join(parts)


@lru_cache(maxsize=1)
def _cloud_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The clouds' names from the lexicon (knowledge/lexicon.yaml): the covered ones as named groups, the others."""
    from service.lexicon import lexicon

    lex = lexicon()
    covered = "|".join(f"(?P<{code}>{_alternation(e.names)})" for code, e in lex.clouds.covered.items())
    other = _alternation([n for e in lex.clouds.other.values() for n in e.names])
    return re.compile(covered, re.IGNORECASE), re.compile(other, re.IGNORECASE)


def find_clouds(text: str) -> list[NameHit]:
    return [NameHit(m.start(), m.end(), m.lastgroup or "") for m in _cloud_patterns()[0].finditer(text)]


def other_clouds(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _cloud_patterns()[1].finditer(text)))


# --- stance: is a mention a constraint, and which way? -------------------------------------------------------

_CLAUSE = re.compile(r"[，。；;！!？?\n]|[,.](?=\s)")
_COUNT = (r"(?:(?:\d+|[一二两三四五六七八九十]+|(?i:one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen)"
          r"(?![A-Za-z]))\s*(?:张|块|个|台|卡|x|×|\*)?\s*)")
_EXCLUDE_BEFORE = re.compile(
    r"(?:(?:不要|不用|别用|别|不考虑|排除|除了|除去|不想用|不想要|不能用|避开|去掉|不选|拒绝|禁用|不含)(?:用|使用|选|要)?"
    r"|(?<![A-Za-z])(?:no|not|without|exclude|excluding|avoid|except|skip|other than|don'?t use|do not use"
    r"|can'?t use|cannot use|can not use|won'?t use|must not use|shouldn'?t use"
    r"|never use|never|but not)\s+(?:(?:use|using|any|the)\s+)*)\s*$",
    re.IGNORECASE,
)
STRONG_INCLUDE = r"只用|只要|只考虑|只看|只选|仅用|仅限|仅|只|换成|改用|换用|改成|only|just|switch to|must use|exclusively"
_INCLUDE_BEFORE = re.compile(
    rf"(?:(?:{STRONG_INCLUDE}|用|使用|采用|换|选用|选|上|在|基于|要"
    rf"|(?<![A-Za-z])(?:use|using|on|with|prefer|go with|try|via|want|need))\s*"
    rf"(?:(?:the|an?)\s+)?{_COUNT}?|(?:\d+|[一二两三四五六七八九十]+)\s*(?:张|块|卡|x|×|\*)\s*|\d+\s+)$",
    re.IGNORECASE,
)
_INCLUDE_AFTER = re.compile(r"^\s*(?:就行|即可|就好|就可以|上(?!万)|only\b|[x×*]\s*\d+)", re.IGNORECASE)
_EXCLUDE_AFTER = re.compile(
    r"^\s*(?:不要|不用|就算了|除外|以外|不考虑|别考虑|不行|太贵|is out|are out|excluded|not allowed)", re.IGNORECASE
)
_LIST_GAP = re.compile(r"\s*(?:和|与|及|、|,|，|/|或者|或|or|and|nor|\s)+\s*", re.IGNORECASE)


def _clause_start(text: str, pos: int) -> int:
    return max((m.end() for m in _CLAUSE.finditer(text, max(0, pos - 200), pos)), default=0)


def stances(text: str, hits: list[NameHit], default: Stance | None) -> list[Stance | None]:
    """For each hit: 'exclude', 'include', or `default` when nothing around it says. A hit that follows another
    through a list gap ('不要V100和T4', 'exclude V100, T4') inherits its stance."""
    out: list[Stance | None] = []
    for k, h in enumerate(hits):
        floor = _clause_start(text, h.start)
        if k and hits[k - 1].end > floor:
            floor = hits[k - 1].end
        before, after = text[max(floor, h.start - 16) : h.start], text[h.end : h.end + 8]
        stance: Stance | None = None
        if _EXCLUDE_BEFORE.search(before) or _EXCLUDE_AFTER.match(after):
            stance = "exclude"
        elif _INCLUDE_BEFORE.search(before) or _INCLUDE_AFTER.match(after):
            stance = "include"
        elif k and out[k - 1] is not None and _LIST_GAP.fullmatch(text[hits[k - 1].end : h.start]):
            stance = out[k - 1]
        out.append(stance if stance is not None else default)
    return out
