"""Hybrid search: dense (Chroma) and BM25 rankings fused by reciprocal rank fusion, with citations.

If the vector store cannot be reached, the retriever keeps answering from BM25 alone and says so in `warnings`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from service.errors import DependencyUnavailableError, InvalidInputError
from service.retrieval.bm25 import CJK_CHAR, Bm25Index
from service.retrieval.config import RetrievalConfig
from service.retrieval.corpus import CORPUS_FILE, load_corpus
from service.retrieval.embeddings import Embedder, shared_embedder
from service.retrieval.ingest import IndexReport, build_index, open_store, refresh_corpus
from service.retrieval.store import VectorStore
from service.retrieval.types import Filters, Passage

log = logging.getLogger(__name__)
RRF_K = 60
DEPTH = 40  # candidates taken from each retriever before fusion
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


class Retriever:
    """Loads the corpus, BM25 and the embedding model once; answers many queries.

    `refresh=True` (default) builds or refreshes the index first, which costs a few hundred ms when nothing changed.
    """

    def __init__(
        self,
        config: RetrievalConfig | None = None,
        embedder: Embedder | None = None,
        *,
        refresh: bool = True,
        progress: bool = False,
    ) -> None:
        self.config = config or RetrievalConfig.from_settings()
        self.embedder = embedder or shared_embedder(self.config.embedding_model)
        self.warnings: list[str] = []
        self.report: IndexReport | None = None
        self.store: VectorStore | None = None
        try:
            self.store = open_store(self.config, self.embedder)
        except DependencyUnavailableError as exc:
            self._degrade(exc)
        corpus_path = self.config.index_dir / CORPUS_FILE
        if self.store is not None and (refresh or not corpus_path.is_file()):
            try:
                self.report = build_index(self.config, store=self.store, progress=progress)
            except DependencyUnavailableError as exc:
                self._degrade(exc)
        loaded = load_corpus(corpus_path)
        if loaded is None or (refresh and self.report is None):
            loaded = refresh_corpus(self.config)  # BM25 side only: the store is unavailable
        corpus, self.tokenizer = loaded
        self.chunks = corpus.chunks
        self._position = {c.id: n for n, c in enumerate(corpus.chunks)}
        self.bm25 = Bm25Index(corpus.tokens)

    def _degrade(self, exc: DependencyUnavailableError) -> None:
        message = f"Dense retrieval unavailable, answering from BM25 only: {exc}"
        log.warning(message)
        self.warnings.append(message)
        self.store = None

    def _dense(self, vector: Sequence[float] | None, depth: int, filters: Filters) -> list[str]:
        if self.store is None or vector is None:
            return []
        try:
            hits = self.store.query(vector, depth, filters.to_where())
        except DependencyUnavailableError as exc:
            self._degrade(exc)
            return []
        return [i for i, _ in hits if i in self._position]

    def _bm25(self, query: str, depth: int, filters: Filters) -> list[str]:
        import numpy as np

        mask = None
        if filters != Filters():
            mask = np.array([filters.matches(c) for c in self.chunks], dtype=bool)
        return [self.chunks[i].id for i, _ in self.bm25.rank(self.tokenizer(query), depth, mask)]

    def dense_weight(self, query: str) -> float:
        """Fusion weight of the dense list: (share of the query's word pieces the model knows) cubed.

        An English-only model reading a Chinese question sees mostly [UNK]; its ranking is noise, so it barely
        votes and BM25 decides. A model that reads the question (coverage ≈ 1) gets the full RRF weight of 1.
        """
        if self.store is None:
            return 0.0
        return float(self.embedder.coverage(query)) ** 3

    def rankings(self, queries: Sequence[str], depth: int = DEPTH, filters: Filters | None = None) -> list[Rankings]:
        filters = filters or Filters()
        vectors: Sequence[Sequence[float] | None] = [None] * len(queries)
        if self.store is not None and queries:
            vectors = self.embedder.embed_queries(list(queries))
        out: list[Rankings] = []
        for query, vector in zip(queries, vectors, strict=True):
            dense = self._dense(vector, depth, filters)
            sparse = self._bm25(query, depth, filters)
            fused = rrf([dense, sparse], weights=[self.dense_weight(query), 1.0])
            out.append(Rankings(dense, sparse, fused))
        return out

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 5,
        lang: str | None = None,
        cloud: str | None = None,
        topic: str | None = None,
    ) -> list[list[Passage]]:
        """Top-k passages per query; one batched embedding call for all queries."""
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}.", "Pass -k 5 or another positive number.")
        if any(not q.strip() for q in queries):
            raise InvalidInputError("Empty question.", "Give the question text to search for.")
        depth = max(4 * k, DEPTH)
        results: list[list[Passage]] = []
        for r in self.rankings(queries, depth, Filters(lang, cloud, topic)):
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
        self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None, topic: str | None = None
    ) -> list[Passage]:
        return self.search_many([query], k=k, lang=lang, cloud=cloud, topic=topic)[0]
