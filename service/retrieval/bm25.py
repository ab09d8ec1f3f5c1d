"""BM25 over mixed Chinese/English text: jieba words for CJK runs, lowercase word tokens for Latin runs.

Latin runs are cut by a regex that keeps instance and GPU names whole ("pnv4.7xlarge116", "a100-80g-sxm") and also
emits their parts ("pnv4", "7xlarge116"), so "A100" finds "A100-80G"; plain English words are Snowball-stemmed. Domain words (catalog names and cloud
terms such as 按量计费, 显存) are added to a private jieba dictionary so jieba keeps them whole too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

TOKENIZER_VERSION = 3  # bump when tokens change, so saved corpus tokens are recomputed
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN = re.compile(rf"[{_CJK}]+|[A-Za-z0-9]+(?:[._+/-][A-Za-z0-9]+)*")
_PART = re.compile(r"[._+/-]")
CJK_CHAR = re.compile(rf"[{_CJK}]")


def _words(text: str) -> list[str]:
    return text.split()


# Deliberately minimal: function words only, so numbers, units and negations still count.
STOPWORDS = frozenset(
    _words(
        "的 了 吗 呢 吧 啊 呀 是 在 和 与 及 或 也 都 就 我 你 他 它 我们 这 那 这个 那个 一个 什么 怎么 如何 哪 哪个 哪些 "
        "请问 想 要 用 把 被 对 上 中 a an the of to in on at for and or is are be was were with what which how do "
        "does can could should would i my me we our you your it its this that these those there if by as from"
    )
)
# Cloud and training terms jieba would otherwise cut apart.
BASE_TERMS = _words(
    "显存 显卡 算力 按量 按量计费 包月 包年包月 竞价 竞价实例 抢占式 腾讯云 京东云 实例族 实例规格 多卡 单卡 多机 "
    "全量微调 全参微调 混合精度 梯度检查点 张量并行 流水线并行 数据并行 白名单 邀测 价格计算器 显存带宽 互联带宽"
)


@lru_cache(maxsize=4)
def _jieba(domain_words: tuple[str, ...]) -> Any:
    import jieba

    jieba.setLogLevel(60)
    tok = jieba.Tokenizer()
    tok.initialize()
    for word in (*BASE_TERMS, *domain_words):
        tok.add_word(word.lower(), freq=200_000)
    return tok


_ACRONYM_PLURALS = frozenset({"gpus", "cpus", "vcpus", "tpus", "npus", "dpus", "nics"})


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball English stem of a plain word ("instances" → "instanc"); names with digits are left alone."""
    if word in _ACRONYM_PLURALS:
        return word[:-1]
    if len(word) < 4 or not word.isalpha() or not word.isascii():
        return word
    return str(_english_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _english_stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


class Tokenizer:
    """Callable text → tokens; the jieba dictionary is built on first use and shared per domain vocabulary."""

    def __init__(self, domain_words: Iterable[str] = ()) -> None:
        self.domain_words = tuple(sorted({w.strip() for w in domain_words if w.strip()}))

    def __call__(self, text: str) -> list[str]:
        return list(_tokens(self.domain_words, text))


@lru_cache(maxsize=16384)
def _tokens(domain_words: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The tokens of one text (pure: the same vocabulary and text give the same tokens), kept for the process so a
    corpus refreshed into a new data directory is not tokenized again."""
    tokens: list[str] = []
    for run in _RUN.findall(text.lower()):
        if CJK_CHAR.match(run):
            tokens += [w for w in _jieba(domain_words).lcut_for_search(run) if w.strip()]
        else:
            tokens.append(stem(run))
            if _PART.search(run):
                tokens += [stem(p) for p in _PART.split(run) if p]
    return tuple(t for t in tokens if t not in STOPWORDS)


class Bm25Index:
    """bm25s over pre-tokenized chunks; scores every chunk so filters can mask before ranking."""

    def __init__(self, corpus_tokens: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s

        self.size = len(corpus_tokens)
        self._bm25 = bm25s.BM25(k1=k1, b=b)
        if self.size:
            self._bm25.index([list(t) for t in corpus_tokens], show_progress=False)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        import numpy as np

        known = [t for t in query_tokens if self.size and t in self._bm25.vocab_dict]
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def rank(self, query_tokens: Sequence[str], depth: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top `depth` (chunk index, score) with score > 0, among chunks where `mask` is True."""
        import numpy as np

        scores = self.scores(query_tokens)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        order = np.argsort(-scores, kind="stable")[:depth]
        return [(int(i), float(scores[i])) for i in order if scores[i] > 0]
