"""Train the reader's question-type classifier (service/reader/model.json) on the working split of evals/questions
and on evals/scenarios.yaml, and print its grouped cross-validated accuracy on the working split.

    python scripts/train_reader.py            # cross-validate, fit, write the model
    python scripts/train_reader.py --check    # exit 1 when model.json was trained on another training set

Multinomial logistic regression with L2, classes weighted to balance, folds by source thread; the temperature
that calibrates the probabilities is fitted on the out-of-fold predictions. The frozen test split is never read.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from functools import lru_cache

import numpy as np

from service.catalog.loader import load_catalog
from service.catalog.queries import gpu_index, model_index
from service.evals.dataset import load_scenarios
from service.evals.questions.dataset import load_split
from service.reader import parse_message
from service.reader.classify import MODEL_FILE, TypeModel, load_model
from service.reader.cues import FEATURES, PREV, PRIOR, TYPES
from service.reader.examples import Example, conversation_features, training_set_hash
from service.settings import get_settings

L2 = 0.05
SCENARIO_WEIGHT = 0.5
FOLDS = 5


def examples() -> list[Example]:
    # a type this classifier does not score yet (catalog) is learnt as the type that answers it today (knowledge)
    out = [Example(q.text, q.type if q.type in TYPES else "knowledge", q.thread, tuple(q.turns),
                   alt=tuple(q.alt_types), id=q.id)
           for q in load_split("working")]
    for s in load_scenarios():
        out.append(Example(s.turns[-1], s.expected_intent, f"scenario:{s.id}", tuple(s.turns[:-1]), SCENARIO_WEIGHT))
    return out


def _parser():  # type: ignore[no-untyped-def]
    cat = load_catalog(get_settings().knowledge_dir)
    models = {k: m.id for k, m in model_index(cat.models).items()}
    gpus = {k: g.id for k, (g, _) in gpu_index(cat.gpus).items()}

    @lru_cache(maxsize=4096)
    def parse(text: str):  # type: ignore[no-untyped-def]
        return parse_message(text, models, gpus)

    return parse


def matrix(rows: list[dict[str, float]]) -> np.ndarray:
    return np.array([[r.get(f, 0.0) for f in FEATURES] for r in rows], dtype=float)


def prior() -> np.ndarray:
    p = np.zeros((len(TYPES), len(FEATURES)))
    for feature, by_type in PRIOR.items():
        for t, weight in by_type.items():
            p[TYPES.index(t), FEATURES.index(feature)] = weight
    return p


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = L2, steps: int = 3000) -> np.ndarray:
    """Softmax regression by gradient descent with Adam, L2 around the expert prior; weights (types x features)."""
    k = len(TYPES)
    base = prior()
    theta = base.copy()
    onehot = np.eye(k)[y]
    counts = np.bincount(y, weights=w, minlength=k)
    balance = np.where(counts > 0, w.sum() / (k * np.maximum(counts, 1e-9)), 0.0)
    sw = w * balance[y]
    sw = sw / sw.sum()
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    for t in range(1, steps + 1):
        logits = x @ theta.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = ((p - onehot) * sw[:, None]).T @ x + l2 * (theta - base)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        theta -= 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta


def featurize(data: list[Example], parse, stage1: np.ndarray | None) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows = []
    for e in data:
        prev = None
        if e.turns and stage1 is not None:
            x0 = matrix([conversation_features(parse, e.turns[:-1], e.turns[-1], None)])
            prev = TYPES[int(np.argmax(x0 @ stage1.T))]
        rows.append(conversation_features(parse, e.turns, e.text, prev))
    return matrix(rows)


def train(data: list[Example], parse) -> np.ndarray:  # type: ignore[no-untyped-def]
    y = np.array([TYPES.index(e.label) for e in data])
    w = np.array([e.weight for e in data])
    x0 = featurize(data, parse, None)
    x0[:, [FEATURES.index(p) for p in PREV]] = 0.0
    stage1 = fit(x0, y, w)
    return fit(featurize(data, parse, stage1), y, w), stage1


def cross_validate(data: list[Example], parse) -> tuple[float, np.ndarray, np.ndarray, list[Example]]:  # type: ignore[no-untyped-def]
    """Accuracy on the working questions (the label or one of its alternatives), each predicted by a model that
    never saw its thread."""
    groups = sorted({e.group for e in data if not e.group.startswith("scenario:")})
    fold = {g: i % FOLDS for i, g in enumerate(groups)}
    logits, labels, seen = [], [], []
    for f in range(FOLDS):
        train_set = [e for e in data if fold.get(e.group, -1) != f]
        test_set = [e for e in data if fold.get(e.group, -1) == f]
        theta, stage1 = train(train_set, parse)
        logits.append(featurize(test_set, parse, stage1) @ theta.T)
        labels += [TYPES.index(e.label) for e in test_set]
        seen += test_set
    z = np.vstack(logits)
    y = np.array(labels)
    right = [TYPES[p] == e.label or TYPES[p] in e.alt for p, e in zip(z.argmax(axis=1), seen, strict=True)]
    return float(np.mean(right)), z, y, seen


def temperature(z: np.ndarray, y: np.ndarray) -> float:
    best, best_nll = 1.0, float("inf")
    for t in np.linspace(0.3, 4.0, 75):
        s = z / t
        s -= s.max(axis=1, keepdims=True)
        nll = float(-(s[np.arange(len(y)), y] - np.log(np.exp(s).sum(axis=1))).mean())
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when model.json is stale")
    ap.add_argument("--show", action="store_true", help="print the working questions cross-validation misses")
    args = ap.parse_args()
    data = examples()
    digest = training_set_hash(data)
    if args.check:
        stale = load_model().trained_on != digest
        print("model.json is stale: run python scripts/train_reader.py" if stale else "model.json is current")
        return 1 if stale else 0
    parse = _parser()
    acc, z, y, seen = cross_validate(data, parse)
    temp = temperature(z, y)
    print(f"working split, grouped {FOLDS}-fold CV: type accuracy {acc:.3f} on {len(y)} questions; temperature {temp:.2f}")
    pred = z.argmax(axis=1)
    for i, t in enumerate(TYPES):
        n = int((y == i).sum())
        if n:
            print(f"  {t:13s} {int(((pred == i) & (y == i)).sum())}/{n}")
    confusions = Counter((TYPES[a], TYPES[b]) for a, b in zip(y, pred, strict=True) if a != b)
    print("  most confused (label -> read):", ", ".join(f"{a}->{b} {n}" for (a, b), n in confusions.most_common(8)))
    if args.show:
        for e, p in zip(seen, pred, strict=True):
            if TYPES[p] != e.label and TYPES[p] not in e.alt:
                print(f"  MISS {e.id} {e.label} -> {TYPES[p]}: {' / '.join(e.turns)} >> {e.text[:150]!r}")
    theta, _ = train(data, parse)
    model = TypeModel(TYPES, FEATURES, tuple(tuple(float(v) for v in row) for row in theta), temp, digest)
    MODEL_FILE.write_text(model.to_json() + "\n", encoding="utf-8")
    print(f"wrote {MODEL_FILE} ({len(data)} examples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
