"""Retrieval eval: recall@1/3/5 and MRR@10 of dense-only, BM25-only and hybrid rankings, per language.

Cases live in evals/retrieval.yaml: a question, its language, and the chunk ids that answer it (any one counts).
Gold ids that are no longer in the index are reported, so a renamed heading cannot silently lower the score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.errors import InvalidInputError
from service.retrieval.hybrid import Retriever
from service.retrieval.types import Filters
from service.settings import REPO_ROOT
from service.yamlio import load_yaml

DEFAULT_EVAL_FILE = REPO_ROOT / "evals" / "retrieval.yaml"
CUTOFFS = (1, 3, 5)
MRR_DEPTH = 10
MODES = ("dense", "bm25", "hybrid")


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    question: str
    lang: Literal["zh", "en"]
    gold: list[str] = Field(min_length=1, description="chunk ids; retrieving any one of them is a hit")
    kind: Literal["keyword", "paraphrase", "catalog"] = "keyword"


class EvalFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: list[EvalCase]


def load_cases(path: Path = DEFAULT_EVAL_FILE) -> list[EvalCase]:
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
        cases = EvalFile.model_validate(raw).cases
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc}", "Pass --file with the eval dataset.") from exc
    except (yaml.YAMLError, ValidationError) as exc:
        raise InvalidInputError(f"{path} is not a valid retrieval eval file: {exc}", "Fix the cases.") from exc
    ids = [c.id for c in cases]
    if len(ids) != len(set(ids)):
        raise InvalidInputError(f"{path}: duplicate case ids.", "Give each case a unique id.")
    return cases


@dataclass(frozen=True)
class Metrics:
    n: int
    recall_at_1: float
    recall_at_3: float
    recall_at_5: float
    mrr: float


def first_hit(ranking: Sequence[str], gold: Sequence[str], section_of: dict[str, str] | None = None) -> int | None:
    """1-based rank of the first chunk that is, or belongs to a section that is, in `gold`; None when absent."""
    wanted = set(gold)
    section_of = section_of or {}
    return next(
        (n for n, doc in enumerate(ranking, start=1) if doc in wanted or section_of.get(doc) in wanted), None
    )


def metrics(hits: Sequence[int | None]) -> Metrics:
    n = len(hits)
    if not n:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0)

    def recall(c: int) -> float:
        return round(sum(1 for h in hits if h is not None and h <= c) / n, 3)

    mrr = sum(1.0 / h for h in hits if h is not None and h <= MRR_DEPTH) / n
    return Metrics(n, recall(1), recall(3), recall(5), round(mrr, 3))


@dataclass(frozen=True)
class EvalReport:
    results: dict[str, dict[str, Metrics]]  # mode → lang ("zh", "en", "all") → metrics
    misses: list[dict[str, Any]]  # hybrid misses at 5: case id, question, what came first
    missing_gold: list[str]  # gold ids not in the index

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": {m: {lang: asdict(x) for lang, x in by.items()} for m, by in self.results.items()},
            "misses": self.misses,
            "missing_gold": self.missing_gold,
        }


def evaluate(retriever: Retriever, cases: Sequence[EvalCase], same_lang: bool = True) -> EvalReport:
    """Rank every question with each retriever. `same_lang`: search in the question's language, as the assistant
    does (lang filter); otherwise search everything, and passages in the other language count as misses."""
    section_of = {c.id: c.section_id or c.id for c in retriever.chunks}
    known = set(section_of) | set(section_of.values())
    missing = sorted({g for case in cases for g in case.gold if g not in known})
    hits: dict[str, dict[str, list[int | None]]] = {m: {"zh": [], "en": [], "all": []} for m in MODES}
    misses: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        group = [c for c in cases if c.lang == lang]
        filters = Filters(lang=lang) if same_lang else Filters()
        rankings = retriever.rankings([c.question for c in group], filters=filters)
        for case, r in zip(group, rankings, strict=True):
            per_mode = {"dense": r.dense, "bm25": r.bm25, "hybrid": [d for d, _ in r.fused]}
            for mode, ranking in per_mode.items():
                hit = first_hit(ranking[:MRR_DEPTH], case.gold, section_of)
                hits[mode][case.lang].append(hit)
                hits[mode]["all"].append(hit)
                if mode == "hybrid" and (hit is None or hit > 5):
                    misses.append({"id": case.id, "question": case.question, "rank": hit, "top": ranking[:3]})
    results = {m: {lang: metrics(h) for lang, h in by.items()} for m, by in hits.items()}
    return EvalReport(results, misses, missing)
