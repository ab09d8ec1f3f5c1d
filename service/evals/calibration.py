"""Would a per-class throughput calibration, or the 6N rule's prior, beat the engine on runs it never saw?

The validation matrix's throughput rows are grouped by class (method and sharding, MoE apart, pre-training at 256
GPUs or more apart). Four estimators are scored on the same rows:

- engine: the node model as it is (service/sizing/throughput.py);
- calibrated: the engine times its class's mean log-ratio measured / engine over the fitted sources (each source
  weighs once), shrunk by S / (S + K) for a class with S fitted sources;
- blended: the calibrated estimate pulled toward the rule, geometrically, by K / (S + K): a class with no fitted
  source is the rule;
- rule: 6 x N FLOPs per token at 40 % MFU.

Fitted rows are scored leave-one-source-out (the source's own rows never set its class's factor), held-out rows
with the factors of every fitted source. The engine keeps its plain figure unless an estimator beats it on the
fitted rows left out by source: that choice is made on fitted rows only (docs/validation.md).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from service.evals.validation import Row, error_group

SHRINK_K = 2.0  # fitted sources at which a class's own factor gets half weight
ESTIMATORS = ("engine", "calibrated", "blended", "rule")


def throughput_class(r: Row) -> str:
    klass = error_group(r)
    return f"{klass}, 256+ GPUs" if r.case.row.gpus >= 256 else klass


@dataclass(frozen=True)
class Point:
    row_id: str
    split: str
    source: str
    klass: str
    measured: float
    engine: float
    rule: float


def points(rows: Iterable[Row]) -> list[Point]:
    return [Point(r.id, r.case.split, r.case.row.source_group, throughput_class(r), m, e, rule)
            for r in rows if r.is_throughput and (m := r.case.measured) and (e := r.ours.engine) and (rule := r.rule)]


def class_factors(train: Iterable[Point]) -> dict[str, tuple[float, int]]:
    """Per class: (mean over sources of the mean log(measured / engine), fitted sources)."""
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for p in train:
        by[p.klass][p.source].append(math.log(p.measured / p.engine))
    return {k: (statistics.mean(statistics.mean(v) for v in srcs.values()), len(srcs)) for k, srcs in by.items()}


def estimate(p: Point, factors: dict[str, tuple[float, int]], how: str, k: float = SHRINK_K) -> float:
    if how == "engine":
        return p.engine
    if how == "rule":
        return p.rule
    bias, sources = factors.get(p.klass, (0.0, 0))
    w = sources / (sources + k)
    calibrated = math.log(p.engine) + w * bias
    if how == "calibrated":
        return math.exp(calibrated)
    return math.exp(w * calibrated + (1 - w) * math.log(p.rule))


@dataclass(frozen=True)
class Score:
    estimator: str
    split: str  # "fitted (leave one source out)" | "held-out"
    n: int
    mae: float  # %
    median: float  # %
    source_mae: float  # % : each source's mean |error|, averaged over sources


def _score(pairs: list[tuple[Point, float]], estimator: str, split: str) -> Score:
    errs = [abs(est - p.measured) / p.measured * 100 for p, est in pairs]
    by: dict[str, list[float]] = defaultdict(list)
    for (p, _), e in zip(pairs, errs, strict=True):
        by[p.source].append(e)
    return Score(estimator, split, len(errs), statistics.mean(errs), statistics.median(errs),
                 statistics.mean(statistics.mean(v) for v in by.values()))


def scores(pts: list[Point], k: float = SHRINK_K) -> list[Score]:
    fitted = [p for p in pts if p.split == "fitted"]
    held = [p for p in pts if p.split == "held-out"]
    out: list[Score] = []
    if not fitted:
        return out
    all_factors = class_factors(fitted)
    loso: dict[str, dict[str, tuple[float, int]]] = {
        s: class_factors(p for p in fitted if p.source != s) for s in {p.source for p in fitted}}
    for how in ESTIMATORS:
        out.append(_score([(p, estimate(p, loso[p.source], how, k)) for p in fitted], how,
                          "fitted (leave one source out)"))
        if held:
            out.append(_score([(p, estimate(p, all_factors, how, k)) for p in held], how, "held-out"))
    return out


def chosen(score_list: list[Score]) -> str:
    """The estimator with the lowest leave-one-source-out error on the fitted rows (ties: the engine)."""
    fitted = [s for s in score_list if s.split.startswith("fitted")]
    best = min(fitted, key=lambda s: (round(s.mae, 1), s.estimator != "engine"), default=None)
    return best.estimator if best else "engine"


def factor_table(pts: list[Point], k: float = SHRINK_K) -> list[tuple[str, int, float, float]]:
    """(class, fitted sources, the class's factor measured / engine, its shrunk weight) for every fitted class."""
    rows = class_factors(p for p in pts if p.split == "fitted")
    return [(c, s, math.exp(b), s / (s + k)) for c, (b, s) in sorted(rows.items())]

