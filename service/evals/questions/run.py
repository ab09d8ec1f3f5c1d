"""Ask every labelled question (its earlier turns first, in one session) and score the type, the verdict and the
slots; report both splits side by side with the test split's fingerprint. The frozen test split is reported in
aggregate only: its questions and failures are never printed (--reveal-test prints them, for the final note)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from service.catalog.loader import Catalog
from service.evals.questions.dataset import SPLITS, TYPES, Question, Split, load_split, split_hash
from service.evals.questions.score import Names, answer_checks, score_slots, type_ok, verdict_ok
from service.evals.targets import Target, converse


@dataclass(frozen=True)
class Outcome:
    id: str
    split: str
    lang: str
    kind: str
    type: str
    got: str | None
    confidence: str | None
    type_ok: bool
    verdict: bool | None  # None: nothing the label settles is stated by this answer type
    slots: dict[str, bool] = field(default_factory=dict)
    error: str = ""
    latency_s: float = 0.0
    first_lines: str = ""
    answer: dict[str, bool] = field(default_factory=dict)  # each `answer:` fact checked (empty: none labelled)
    read_by: str = ""  # llm | offline | fallback (the LLM reader was asked and the offline one stood in)

    @property
    def type_verdict_ok(self) -> bool:
        return self.type_ok and self.verdict is not False

    @property
    def answer_ok(self) -> bool | None:
        """Right by its answer facts (None: the label gives none): every fact, and the question type."""
        if not self.answer:
            return None
        return self.type_ok and all(self.answer.values())

    @property
    def confident_other(self) -> bool:
        """A sure answer to another question: the worst kind of miss."""
        return not self.type_ok and self.confidence == "sure"


def ask_question(target: Target, q: Question, names: Names, split: str) -> Outcome:
    start = time.perf_counter()
    conv = converse(target, [*q.turns, q.text])
    result = conv.final or {}
    got = result.get("intent")
    reading = result.get("reading") or {}
    lines = [ln for ln in str(result.get("answer_markdown", "")).splitlines() if ln.strip()][:2]
    return Outcome(q.id, split, q.lang, q.kind, q.type, got, reading.get("confidence"), type_ok(q, got),
                   verdict_ok(q, result, names) if type_ok(q, got) else None,
                   score_slots(q, result.get("slots") or {}, names), conv.error, time.perf_counter() - start,
                   " / ".join(lines), answer_checks(q, result, names), read_by(str(result.get("backend") or "")))


def read_by(backend: str) -> str:
    """Who read the question, from the answer's backend: the LLM, the offline reader, or the offline one standing
    in for an LLM that could not (service/assistant/service.py)."""
    if backend.startswith("offline (fallback"):
        return "fallback"
    return "llm" if backend == "openai" else "offline"


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    slots = [ok for o in outcomes for ok in o.slots.values()]
    per_type: dict[str, dict[str, Any]] = {}
    for t in TYPES:
        mine = [o for o in outcomes if o.type == t]
        if mine:
            per_type[t] = {"n": len(mine), "type": _rate([o.type_ok for o in mine]),
                           "answer": _rate([bool(o.answer_ok) for o in mine if o.answer_ok is not None]),
                           "type_verdict": _rate([o.type_verdict_ok for o in mine]),
                           "slots": _rate([ok for o in mine for ok in o.slots.values()])}
    confusion = Counter((o.type, o.got or "none") for o in outcomes)
    by_conf = {c: _rate([o.type_ok for o in outcomes if o.confidence == c]) for c in ("sure", "unsure")}
    scored = [o for o in outcomes if o.answer_ok is not None]
    checks = Counter(k.split(":")[0] for o in scored for k, ok in o.answer.items() if not ok)
    lat = sorted(o.latency_s for o in outcomes)
    return {"n": n, "answer": _rate([bool(o.answer_ok) for o in scored]), "answers_scored": len(scored),
            "answer_by_kind": {k: _rate([bool(o.answer_ok) for o in scored if o.kind == k]) for k in ("thread", "chat")},
            "answer_misses_by_check": dict(checks.most_common()),
            "confident_other": _rate([o.confident_other for o in outcomes]),
            "latency_p50_s": round(lat[len(lat) // 2], 3) if lat else None,
            "latency_p95_s": round(lat[int(len(lat) * 0.95)], 3) if lat else None,
            "type": _rate([o.type_ok for o in outcomes]),
            "type_verdict": _rate([o.type_verdict_ok for o in outcomes]),
            "verdicts_scored": sum(o.verdict is not None for o in outcomes), "slots": _rate(slots),
            "n_slots": len(slots), "per_type": per_type,
            "confusion": {f"{a}->{b}": c for (a, b), c in sorted(confusion.items())},
            "by_confidence": by_conf, "errors": sum(bool(o.error) for o in outcomes),
            "read_by": dict(Counter(o.read_by for o in outcomes).most_common()),
            "by_kind": {k: _rate([o.type_verdict_ok for o in outcomes if o.kind == k]) for k in ("thread", "chat")}}


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def run_questions(target: Target, catalog: Catalog, splits: tuple[Split, ...] = SPLITS,
                  progress: Callable[[int, int, Outcome], None] | None = None, limit: int | None = None
                  ) -> dict[str, Any]:
    names = Names(catalog)
    out: dict[str, Any] = {"splits": {}, "outcomes": []}
    for split in splits:
        qs = load_split(split)[:limit]
        outcomes = []
        for i, q in enumerate(qs, start=1):
            o = ask_question(target, q, names, split)
            outcomes.append(o)
            if progress is not None:
                progress(i, len(qs), o)
        out["splits"][split] = {**summary(outcomes), "hash": split_hash(split)}
        out["outcomes"] += [{**asdict(o), "answer_ok": o.answer_ok} for o in outcomes]
    return out
