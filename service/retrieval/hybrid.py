"""Hybrid search: dense (Chroma) and BM25 rankings fused by reciprocal rank fusion, with citations.

While the vector index is building, or after a Chroma error (then it is rebuilt in the background), the retriever
answers from BM25 alone and says so in `warnings`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from service.errors import DependencyUnavailableError, InvalidInputError
from service.retrieval.bm25 import CJK_CHAR, Bm25Index
from service.retrieval.config import RetrievalConfig
from service.retrieval.corpus import CORPUS_FILE, load_corpus
from service.retrieval.dense import DenseIndex, IndexReport, Progress
from service.retrieval.embedder_choice import shared_embedder
from service.retrieval.embeddings import Embedder
from service.retrieval.ingest import refresh_corpus
from service.retrieval.store import VectorStore
from service.retrieval.types import Filters, Passage

log = logging.getLogger(__name__)
RRF_K = 60
DEPTH = 40  # candidates taken from each retriever before fusion
# Dense list's RRF weight per question language (BM25's is 1), for a model that reads the language (coverage 1).
DENSE_WEIGHT = {"zh": 1.0, "en": 1.5}  # tuned on evals/retrieval.yaml with e5 (README: figures)
_LATIN_WORD = r"[A-Za-z]+"


def detect_lang(text: str) -> str:
    """'zh' when CJK characters are at least as many as Latin words (a Chinese character ≈ a word), else 'en'."""
    import re

    cjk = len(CJK_CHAR.findall(text))
    return "zh" if cjk and cjk >= len(re.findall(_LATIN_WORD, text)) else "en"


def rrf(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(d) = Σ w_i / (k + rank_i(d)), ranks 1-based. Ties: best single rank, then id."""
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for weight, ranking in zip(weights, rankings, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
            best[doc] = min(best.get(doc, rank), rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


@dataclass(frozen=True)
class Rankings:
    """Chunk ids, best first, from each retriever for one query."""

    dense: list[str]
    bm25: list[str]
    fused: list[tuple[str, float]]


Mode = Literal["hybrid", "dense", "bm25"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "bm25")


class Retriever:
    """Loads the corpus and BM25 at once, and the dense index (DenseIndex) blocking or in the background.

    `refresh=True` (default) re-chunks changed knowledge files first (a few hundred ms when nothing changed).
    `background=True` (the API server): BM25 answers at once; the vector index opens or builds in a thread and
    hybrid search uses it from the moment it is ready. Otherwise (CLI) the index is opened or built before return;
    `build=False` (one-shot `ask`) only opens an index already built and answers from BM25 when there is none.
    """

    def __init__(
        self,
        config: RetrievalConfig | None = None,
        embedder: Embedder | None = None,
        *,
        refresh: bool = True,
        progress: Progress | None = None,
        background: bool = False,
        build: bool = True,
    ) -> None:
        self.config = config or RetrievalConfig.from_settings()
        self.embedder = embedder or shared_embedder(self.config.embedding_model)
        corpus_path = self.config.index_dir / CORPUS_FILE
        loaded = None if refresh else load_corpus(corpus_path)
        corpus, self.tokenizer = loaded or refresh_corpus(self.config)
        self.chunks = corpus.chunks
        self._position = {c.id: n for n, c in enumerate(corpus.chunks)}
        self.bm25 = Bm25Index(corpus.tokens)
        self.dense = DenseIndex(self.config, self.embedder)
        self.dense.progress = progress
        self.report: IndexReport | None = None
        if background:
            self.dense.start(self.chunks)
            return
        if not build:
            self.dense.open_existing(self.chunks)
            return
        try:
            self.report = self.dense.ensure(self.chunks)
        except DependencyUnavailableError as exc:
            log.warning("Dense retrieval unavailable, answering from BM25 only: %s", exc)

    @property
    def store(self) -> VectorStore | None:
        return self.dense.store

    @property
    def warnings(self) -> list[str]:
        """Why answers come from BM25 alone right now (empty once dense retrieval is ready)."""
        status = self.dense.status
        if status.state == "ready":
            return []
        return [f"Dense retrieval unavailable, answering from BM25 only: {status.label()}"]

    def close(self, timeout_s: float = 30.0) -> None:
        self.dense.close(timeout_s)

    def _dense(self, store: VectorStore | None, vector: Sequence[float] | None, depth: int, filters: Filters) -> list[str]:
        if store is None or vector is None:
            return []
        try:
            hits = store.query(vector, depth, filters.to_where())
        except DependencyUnavailableError as exc:
            self.dense.fail(exc, store)
            return []
        return [i for i, _ in hits if i in self._position]

    def _bm25(self, query: str, depth: int, filters: Filters) -> list[str]:
        import numpy as np

        mask = None
        if filters != Filters():
            mask = np.array([filters.matches(c) for c in self.chunks], dtype=bool)
        return [self.chunks[i].id for i, _ in self.bm25.rank(self.tokenizer(query), depth, mask)]

    def dense_weight(self, query: str) -> float:
        """Fusion weight of the dense list: DENSE_WEIGHT[language] × (share of the query's pieces the model knows)³.

        An English-only model reading a Chinese question sees mostly [UNK]; its ranking is noise, so it barely
        votes and BM25 decides. A model that reads the question (coverage ≈ 1, e5) gets the language's weight.
        """
        return DENSE_WEIGHT[detect_lang(query)] * float(self.embedder.coverage(query)) ** 3

    def rankings(
        self, queries: Sequence[str], depth: int = DEPTH, filters: Filters | None = None, mode: Mode = "hybrid"
    ) -> list[Rankings]:
        filters = filters or Filters()
        store = self.store if mode != "bm25" else None
        if mode == "dense" and store is None:
            raise DependencyUnavailableError(
                f"Dense retrieval is not available: {self.dense.status.label()}.",
                "Wait until GET /readyz shows dense ready, or search with mode hybrid or bm25.",
            )
        vectors: Sequence[Sequence[float] | None] = [None] * len(queries)
        if store is not None and queries:
            vectors = self.embedder.embed_queries(list(queries))
        out: list[Rankings] = []
        for query, vector in zip(queries, vectors, strict=True):
            dense = self._dense(store, vector, depth, filters)
            sparse = self._bm25(query, depth, filters) if mode != "dense" else []
            weights = [self.dense_weight(query) if dense else 0.0, 1.0]
            fused = rrf([dense, sparse], weights=weights)
            out.append(Rankings(dense, sparse, fused))
        return out

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 5,
        lang: str | None = None,
        cloud: str | None = None,
        topic: str | None = None,
        mode: Mode = "hybrid",
    ) -> list[list[Passage]]:
        """Top-k passages per query; one batched embedding call for all queries. `mode` dense or bm25 ranks with
        that retriever alone (to measure each); dense raises DependencyUnavailableError while it is not ready."""
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}.", "Pass -k 5 or another positive number.")
        if any(not q.strip() for q in queries):
            raise InvalidInputError("Empty question.", "Give the question text to search for.")
        depth = max(4 * k, DEPTH)
        results: list[list[Passage]] = []
        if mode not in MODES:
            raise InvalidInputError(f"Unknown search mode {mode!r}.", "Use hybrid, dense or bm25.")
        for r in self.rankings(queries, depth, Filters(lang, cloud, topic), mode):
            dense_rank = {d: n for n, d in enumerate(r.dense, start=1)}
            bm25_rank = {d: n for n, d in enumerate(r.bm25, start=1)}
            passages = []
            for chunk_id, score in r.fused[:k]:
                c = self.chunks[self._position[chunk_id]]
                passages.append(
                    Passage(
                        id=c.id,
                        source=c.source,
                        title=c.title,
                        section=c.section,
                        text=c.text,
                        score=round(score, 6),
                        dense_rank=dense_rank.get(chunk_id),
                        bm25_rank=bm25_rank.get(chunk_id),
                        lang=c.lang,
                        ref=c.ref,
                        sources=c.sources,
                    )
                )
            results.append(passages)
        return results

    def search(
        self,
        query: str,
        k: int = 5,
        lang: str | None = None,
        cloud: str | None = None,
        topic: str | None = None,
        mode: Mode = "hybrid",
    ) -> list[Passage]:
        return self.search_many([query], k=k, lang=lang, cloud=cloud, topic=topic, mode=mode)[0]
