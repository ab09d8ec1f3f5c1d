"""GET /v1/search: hybrid (dense + BM25) search over the guide and the catalog documents, with citations; `mode`
ranks with one retriever alone."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query

from service.api.deps import RetrieverDep
from service.api.schemas import SearchOut

router = APIRouter(tags=["search"])


def detect_lang(text: str) -> str:
    try:
        from service.retrieval.hybrid import detect_lang as detect
    except ImportError:  # retrieval extra missing: the retriever dependency has already answered 503
        return "en"
    return detect(text)


@router.get("/search", response_model=SearchOut)
def search(
    retriever: RetrieverDep,
    q: str = Query(min_length=1, max_length=2000, description="the question, Chinese or English"),
    k: int = Query(default=5, ge=1, le=50),
    lang: Literal["zh", "en"] | None = Query(default=None, description="only passages in this language"),
    cloud: Literal["tencent", "jdcloud"] | None = Query(default=None, description="this cloud's and general passages"),
    topic: str | None = Query(default=None, max_length=64, description="only passages with this topic tag"),
    mode: Literal["hybrid", "dense", "bm25"] = Query(
        default="hybrid", description="hybrid (dense + BM25 fused), or one retriever alone; dense is 503 until ready"
    ),
) -> SearchOut:
    """Top-k passages, each with its chunk id, source, section, score and the ranks from each retriever."""
    if mode == "hybrid":
        passages = retriever.search(q, k=k, lang=lang, cloud=cloud, topic=topic)
    else:
        passages = retriever.search(q, k=k, lang=lang, cloud=cloud, topic=topic, mode=mode)  # type: ignore[call-arg]
    return SearchOut(query=q, lang=detect_lang(q), passages=[p.to_dict() for p in passages],
                     warnings=list(retriever.warnings))
