"""Names as people type them, one key for each: case, spaces, dashes, units and Chinese family names folded
('A100-80GB' == 'a100 80g'), and the variant suffixes of one architecture tried in turn (chat builds, quantised
releases). Below the catalog's queries and its list of known-but-unsized releases, which both read names."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TypeVar

_SEP = re.compile(r"[\s\-_./·（）()]+")
_GB = re.compile(r"(\d)(gb|gib|g)(?![a-z])")

# Chinese names people use for model families; normalised before alias matching (longer names first).
_ZH_FAMILY = {"通义千问": "qwen", "千问": "qwen", "羊驼": "llama", "百川": "baichuan", "书生浦语": "internlm",
              "书生万象": "internvl", "零一万物": "yi", "智谱": "", "深度求索": "deepseek", "文心一言": "ernie",
              "文心": "ernie", "腾讯混元": "hunyuan", "混元": "hunyuan", "月之暗面": "", "阶跃星辰": "", "面壁": ""}


def normalize(name: str) -> str:
    """Case, space, dash and unit insensitive key: 'A100-80GB' == 'a100 80g' == 'A100 80G'."""
    s = name.strip().lower()
    for zh, en in _ZH_FAMILY.items():
        s = s.replace(zh, en)
    s = s.replace("英伟达", "").replace("nvidia", "").replace("tesla", "").replace("geforce", "")
    s = _GB.sub(r"\1g", s)
    s = s.replace("显存", "")
    return _SEP.sub("", s)


_T = TypeVar("_T")
# Variant suffixes of the same architecture, on the normalised name: chat builds share the base's dimensions;
# quantised releases do too and say their weight dtype. Tried repeatedly ('-Instruct-GPTQ-Int4').
_CHAT_SUFFIX = re.compile(r"(instruct|chat|base|hf|it|unsloth|mlx)$")
_QUANT_SUFFIX: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(gptqint4|gptq4bit|awq|w4a16|bnb4bit|int4|4bit|nf4|q4km|q4ks|q40|q4k)$"), "int4"),
    (re.compile(r"(gptqint8|gptq8bit|w8a8|int8|8bit|q80)$"), "int8"),
    (re.compile(r"(fp8dynamic|fp8|w8a8fp8)$"), "fp8"),
    (re.compile(r"(gptq)$"), "int4"),
)
_GGUF = re.compile(r"(gguf)$")  # a GGUF with no level named: read as 4-bit (Q4_K_M, the common download)
# kept for callers that strip chat suffixes only
_INSTRUCT = _CHAT_SUFFIX


def variants(key: str) -> Iterator[tuple[str, str | None, str]]:
    """The normalised name, then the names its variant suffixes fall back to: (key, weights, dropped suffix).
    'qwen25-7b-instruct-awq' -> qwen257binstructawq, qwen257binstruct (int4), qwen257b (int4). Quantisation
    suffixes are tried before chat ones ('-bnb-4bit' is not '-it')."""
    yield key, None, ""
    weights: str | None = None
    gguf = False
    dropped = ""
    while True:
        for pattern, dtype in (*_QUANT_SUFFIX, (_GGUF, None), (_CHAT_SUFFIX, None)):
            m = pattern.search(key)
            if m and m.start() > 0:
                weights = weights or dtype
                gguf = gguf or pattern is _GGUF
                dropped = m.group(1) + dropped
                key = key[: m.start()]
                yield key, weights or ("int4" if gguf else None), dropped
                break
        else:
            return


def lookup(key: str, index: Mapping[str, _T]) -> tuple[_T, str | None, str] | None:
    """The first of `variants(key)` the index holds: (value, weights, dropped suffix)."""
    for k, weights, dropped in variants(key):
        hit = index.get(k)
        if hit is not None:
            return hit, weights, dropped
    return None
