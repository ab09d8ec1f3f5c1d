"""Score a reading or an answer against a labelled question: the question type (the label or one of its
alternatives), every labelled slot (names resolved through the catalog, numbers within 2 %), and the verdict the
answer concludes against the label's."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from service.catalog.loader import Catalog
from service.catalog.queries import gpu_index, model_index, normalize
from service.evals.answers import typed_answer
from service.evals.questions.dataset import Question
from service.questions.capacity import CapacityAnswer
from service.questions.compare import CompareAnswer
from service.questions.diagnose_answer import DiagnoseAnswer
from service.questions.feasibility import FeasibilityAnswer
from service.questions.knowledge import FactAnswer, KnowledgeAnswer
from service.questions.min_gpus import MinGpusAnswer
from service.questions.serving import ServingAnswer

REL = 0.02


class Names:
    """Catalog ids for names as labelled and as read ('A100' and 'A100-40G-SXM' are one GPU)."""

    def __init__(self, catalog: Catalog) -> None:
        self.gpus = {k: g.id for k, (g, _) in gpu_index(catalog.gpus).items()}
        self.models = {k: m.id for k, m in model_index(catalog.models).items()}

    def gpu(self, name: Any) -> str:
        key = normalize(str(name))
        return self.gpus.get(key) or self.gpus.get(key.removeprefix("rtx")) or key

    def model(self, name: Any) -> str:
        key = normalize(str(name).rsplit("/", 1)[-1])
        return self.models.get(key) or key


def _num_ok(want: Any, got: Any) -> bool:
    try:
        return math.isclose(float(want), float(got), rel_tol=REL, abs_tol=1e-9)
    except (TypeError, ValueError):
        return False


def slot_ok(key: str, want: Any, got: Any, names: Names) -> bool:
    if got is None:
        return False
    if key == "gpu":
        return names.gpu(want) == names.gpu(got)
    if key == "model":
        return names.model(want) == names.model(got)
    if key == "clouds":
        return set(want or []) == set(got or [])
    if key == "observed":
        if not isinstance(want, Mapping) or not isinstance(got, Mapping) or want.get("kind") != got.get("kind"):
            return False
        return all(_num_ok(v, got.get(k)) for k, v in want.items() if k != "kind")
    if isinstance(want, (bool, str)):
        return str(want).lower() == str(got).lower()
    if isinstance(want, (int, float)):
        return _num_ok(want, got)
    return bool(want == got)


def score_slots(q: Question, got: Mapping[str, Any], names: Names) -> dict[str, bool]:
    """{slot: right?} for every slot the label states."""
    return {k: slot_ok(k, v, got.get(k), names) for k, v in q.slots.items()}


def type_ok(q: Question, got: str | None) -> bool:
    return got == q.type or (got is not None and got in q.alt_types)


def _ratio_ok(want: Any, got: Any, factor: float) -> bool:
    try:
        w, g = float(want), float(got)
    except (TypeError, ValueError):
        return False
    return w > 0 and g > 0 and 1 / factor <= g / w <= factor


def yes_no(answer: str) -> str | None:
    """The yes or no a label's `answer` settles: 'yes', 'no', or one explained after it ('yes: vLLM supports FP8
    now', 'no - the reference model adds its weights'); None for a phrase ('按量', '80G') or free text."""
    low = answer.strip().lower()
    for word in ("yes", "no"):
        rest = low[len(word):] if low.startswith(word) else None
        if rest is not None and (not rest or rest[0] in ":;,.(" or rest.startswith((" -", " (", " —"))
                                 or (word == "yes" and rest[0] == " ")):
            return word  # 'yes with more GPUs' is a yes; 'no fixed conclusion' and 'not supported' settle nothing
    return None


def verdict_ok(q: Question, result: Mapping[str, Any], names: Names) -> bool | None:
    """Does the answer conclude what the label settles? None when the label settles nothing the answer states
    (a free-text knowledge answer, an outcome the question type does not carry). Tolerances: counts within 2x
    (threads report what they ran, not the minimum), memory within 35 %, model size within 1.5x."""
    checks: list[bool] = []
    v = q.verdict
    a = typed_answer(result)
    feas = a if isinstance(a, FeasibilityAnswer | MinGpusAnswer) else None
    serving = a.figures() if isinstance(a, ServingAnswer) else None
    fact = a.fact if isinstance(a, KnowledgeAnswer) else a if isinstance(a, FactAnswer) else None
    if "fits" in v:
        got = (serving.starts if serving is not None else None) if result.get("intent") == "serving" else \
            (feas.fits if feas is not None else None)
        checks.append(got is not None and bool(got) == bool(v["fits"]))
    if "expected" in v:
        expected = a.expected if isinstance(a, DiagnoseAnswer) else None
        checks.append(expected is not None and bool(expected) == bool(v["expected"]))
    if "gpus_needed" in v:
        checks.append(_ratio_ok(v["gpus_needed"], feas.gpus_needed if feas is not None else None, 2.0))
    if "memory_gib_at_least" in v:
        least = (feas.min_memory_gib or feas.single_gpu_gib) if isinstance(feas, MinGpusAnswer) else None
        checks.append(_ratio_ok(v["memory_gib_at_least"], least, 1.35))
    if "gpus" in v:
        gpus = (serving.total_gpus or serving.gpus_per_replica) if serving is not None else None
        checks.append(_ratio_ok(v["gpus"], gpus, 2.0))
    if "max_params_b" in v:
        checks.append(_ratio_ok(v["max_params_b"], a.max_params_b if isinstance(a, CapacityAnswer) else None, 1.5))
    if "winner" in v:
        winner = str((a.winner if isinstance(a, CompareAnswer) else None) or "")
        checks.append(bool(winner) and (names.gpu(winner) == names.gpu(v["winner"])
                                        or winner.lower() == str(v["winner"]).lower()))
    polarity = yes_no(str(v["answer"])) if "answer" in v else None
    if polarity is not None:
        said = fact.answer if fact is not None else a.answer if isinstance(a, KnowledgeAnswer) else None
        checks.append(str(said or "").lower() == polarity)  # the catalog's, else the guide's lead
    return None if not checks else all(checks)


_COUNT = re.compile(r"(\d{1,4})\s*(?:张|块|卡|台|x|×|\*|\s*(?:gpus?|cards?|devices?))", re.IGNORECASE)


def _lines(text: str) -> list[str]:
    """The answer's lines a reader sees first: notes quoted before it ('> ...') are not the answer."""
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(">")]


def _has(text: str, alternatives: str) -> bool:
    low = text.lower()
    return any(a.strip().lower() in low for a in alternatives.split("|") if a.strip())


def answer_facts(result: Mapping[str, Any]) -> dict[str, float]:
    """The typed answer's headline figures (service/questions/*: `facts()`), from the result's `answer`."""
    a = typed_answer(result)
    return a.facts() if a is not None else {}


def _count(result: Mapping[str, Any], facts: Mapping[str, float], lines: list[str]) -> float | None:
    if "count" in facts:
        return facts["count"]
    for line in lines[:2]:
        m = _COUNT.search(line)
        if m:
            return float(m.group(1))
    return None


def answer_checks(q: Question, result: Mapping[str, Any], names: Names) -> dict[str, bool]:
    """Each fact of the label's `answer:` block checked against the answer: {check: right?}."""
    facts_label = q.answer
    if facts_label is None or facts_label.empty:
        return {}
    text = str(result.get("answer_markdown", ""))
    lines = _lines(text)
    first = lines[0] if lines else ""
    out: dict[str, bool] = {}
    if facts_label.first_line:
        out["first_line"] = any(_has(first, f) for f in facts_label.first_line)
    if facts_label.verdict:
        got = verdict_ok(q.model_copy(update={"verdict": facts_label.verdict}), result, names)
        out["verdict"] = bool(got)
    facts = answer_facts(result)
    if facts_label.count is not None:
        n = _count(result, facts, lines)
        lo, hi = facts_label.count
        out["count"] = n is not None and lo <= n <= hi
    for name, (lo, hi) in facts_label.figures.items():
        v = facts.get(name)
        out[f"figure:{name}"] = v is not None and lo <= v <= hi
    for i, m in enumerate(facts_label.mentions):
        out[f"mentions:{i}"] = _has(text, m)
    if facts_label.not_mentions:
        head = " ".join(lines[:2])
        out["not_mentions"] = not any(_has(head, m) for m in facts_label.not_mentions)
    return out
