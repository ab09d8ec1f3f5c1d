"""A BM25-only knowledge search for fast, model-free eval runs (CI): the same corpus and tokenizer as the hybrid
retriever (service.retrieval), without loading the embedding model or opening the vector store."""

from __future__ import annotations

from service.retrieval.config import RetrievalConfig
from service.retrieval.types import Filters, Passage


class Bm25Retriever:
    """Implements the `search` call the assistant's search_knowledge tool makes."""

    def __init__(self, config: RetrievalConfig) -> None:
        from service.retrieval.bm25 import Bm25Index
        from service.retrieval.ingest import refresh_corpus

        corpus, self._tokenizer = refresh_corpus(config)
        self._chunks = corpus.chunks
        self._bm25 = Bm25Index(corpus.tokens)
        self.warnings = ["BM25 only: dense retrieval is not loaded in this eval run"]

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None,
               topic: str | None = None) -> list[Passage]:
        import numpy as np

        filters = Filters(lang, cloud, topic)
        mask = None
        if filters != Filters():
            mask = np.array([filters.matches(c) for c in self._chunks], dtype=bool)
        out = []
        for rank, (i, score) in enumerate(self._bm25.rank(self._tokenizer(query), k, mask), start=1):
            c = self._chunks[i]
            out.append(Passage(id=c.id, source=c.source, title=c.title, section=c.section, text=c.text,
                               score=round(score, 6), dense_rank=None, bm25_rank=rank, lang=c.lang, ref=c.ref,
                               sources=c.sources))
        return out
