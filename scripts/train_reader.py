"""Train the reader's learned parts (service/reader/frame_model.json): the task and the asked classifiers of the
question frame, on the working split of evals/questions and on evals/scenarios.yaml; print their grouped
cross-validated accuracy and the question type derived from them, on the working split.

    python scripts/train_reader.py            # cross-validate, fit, write the model
    python scripts/train_reader.py --check    # exit 1 when frame_model.json was trained on another training set
    python scripts/train_reader.py --ablate   # also measure what each family of features adds

Multinomial logistic regression (scikit-learn, L2, classes balanced), folds by source thread; the temperature that
calibrates each part is fitted on its out-of-fold predictions. The frozen test split is never read. A case labelled
before the frame existed gets its task and asked from its type (weight 0.5).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from service.catalog.loader import load_catalog
from service.catalog.queries import gpu_index, model_index, normalize
from service.evals.dataset import load_scenarios
from service.evals.questions.dataset import load_split
from service.evals.questions.frames import gold_draft, load_frames
from service.questions.registry import decide as question_type
from service.reader import parse_message
from service.reader.frame_build import CatalogNames
from service.reader.frame_reader import message_features
from service.reader.learned import MODEL_FILE, FrameModel, LinearModel, load_frame_model
from service.reader.message import ParsedMessage
from service.reader.read import TYPE_FRAME, Reader
from service.settings import get_settings

C = 4.0
FOLDS = 5
MIN_DF = 2  # an n-gram seen in fewer training messages is left out
PRUNE = 0.005  # weights smaller than this are not stored
_SERVE_SLOTS = ("engine", "weights", "concurrency", "request_rate", "kv_dtype", "max_model_len", "ttft_ms")


@dataclass(frozen=True)
class Example:
    text: str
    turns: tuple[str, ...]
    task: str
    asked: str
    type: str
    alt: tuple[str, ...]
    group: str
    weight: float
    id: str = ""
    framed: bool = True  # task and asked are labels (False: derived from the type)


FAMILIES: frozenset[str] = frozenset()
NAMES: dict[str, dict[str, str]] = {}


def _parser() -> Callable[[str], ParsedMessage]:
    global FAMILIES
    cat = load_catalog(get_settings().knowledge_dir)
    FAMILIES = frozenset({r.family.lower() for r in cat.instances} | {r.instance_type.lower() for r in cat.instances})
    models = {k: m.id for k, m in model_index(cat.models).items()}
    gpus = {k: g.id for k, (g, _) in gpu_index(cat.gpus).items()}
    NAMES.update(models=models, gpus=gpus, instances={normalize(r.instance_type): r.instance_type
                                                      for r in cat.instances},
                 spelled={f.family.lower(): f.family for f in cat.families} | {r.family.lower(): r.family
                                                                               for r in cat.instances})

    @lru_cache(maxsize=16384)
    def parse(text: str) -> ParsedMessage:
        return parse_message(text, models, gpus)

    return parse


def examples(parse: Callable[[str], ParsedMessage] | None = None) -> list[Example]:
    """The working split, each message with the task and asked of its frame (evals/questions/frames: what an LLM
    read in it, the label applied to the question's own; earlier turns as the LLM read them), then the
    scenarios (their type's frame, weight 0.5)."""
    out: list[Example] = []
    stored = load_frames("working")
    for q in load_split("working"):
        frames = stored.get(q.id)
        if frames:
            msgs = [*q.turns, q.text]
            for i, f in enumerate(frames[:-1]):
                out.append(Example(msgs[i], tuple(msgs[:i]), f.task, f.asked, "", (), q.thread, 0.5,
                                   f"{q.id}#{i}", True))  # an earlier turn: its own type is not labelled
            gold = gold_draft(q, frames[-1])
            out.append(Example(q.text, tuple(q.turns), gold.task, gold.asked, q.type, tuple(q.alt_types), q.thread,
                               1.0, q.id, True))
            continue
        if q.frame is not None:
            task, asked, weight = q.frame.task, q.frame.asked, 1.0
        else:
            task, asked = TYPE_FRAME[q.type]
            weight = 0.5
            if parse is not None and task == "train" and q.type in ("diagnose", "capacity"):
                slots = {**parse(q.text).extra, **parse(q.text).slots}
                task = "serve" if any(k in slots for k in _SERVE_SLOTS) else task
        out.append(Example(q.text, tuple(q.turns), task, asked, q.type, tuple(q.alt_types), q.thread, weight, q.id,
                           q.frame is not None))
    for s in load_scenarios():
        if s.expected_intent in TYPE_FRAME:
            task, asked = TYPE_FRAME[s.expected_intent]
            out.append(Example(s.turns[-1], tuple(s.turns[:-1]), task, asked, s.expected_intent, (),
                               f"scenario:{s.id}", 0.5, f"scenario:{s.id}", False))
    return out


def training_set_hash(data: list[Example]) -> str:
    """Over what the labels say (a derived frame is a function of the type and the text, so it is left out)."""
    h = hashlib.sha256()
    for e in data:
        frame = (e.task, e.asked) if e.framed else ()
        h.update("\x1f".join((*e.turns, e.text, e.type, *frame, e.group)).encode() + b"\x1e")
    return h.hexdigest()


def featurize(data: list[Example], parse: Callable[[str], ParsedMessage],
              prev: list[dict[str, str] | None] | None = None, drop: tuple[str, ...] = ()) -> list[dict[str, float]]:
    rows = []
    for i, e in enumerate(data):
        x = message_features(e.text, e.turns, parse, prev[i] if prev else None, FAMILIES)
        rows.append({k: v for k, v in x.items() if not k.startswith(drop)} if drop else x)
    return rows


def _vocab(rows: list[dict[str, float]]) -> list[str]:
    df = Counter(k for r in rows for k in r)
    return sorted(k for k, n in df.items() if n >= MIN_DF or not k.startswith("g:"))


def _matrix(rows: list[dict[str, float]], vocab: list[str]) -> Any:
    from scipy.sparse import csr_matrix

    index = {k: i for i, k in enumerate(vocab)}
    data, ind, ptr = [], [], [0]
    for r in rows:
        for k, v in r.items():
            j = index.get(k)
            if j is not None:
                data.append(v)
                ind.append(j)
        ptr.append(len(data))
    return csr_matrix((data, ind, ptr), shape=(len(rows), len(vocab)))


def fit(rows: list[dict[str, float]], y: list[str], w: list[float]) -> LinearModel:
    from sklearn.linear_model import LogisticRegression

    vocab = _vocab(rows)
    m = LogisticRegression(C=C, max_iter=3000, class_weight="balanced")
    m.fit(_matrix(rows, vocab), np.array(y), sample_weight=np.array(w))
    classes = tuple(str(c) for c in m.classes_)
    coef = m.coef_ if len(classes) > 2 else np.vstack([-m.coef_[0], m.coef_[0]])
    inter = m.intercept_ if len(classes) > 2 else np.array([-m.intercept_[0], m.intercept_[0]])
    weights: dict[str, tuple[tuple[int, float], ...]] = {}
    for j, name in enumerate(vocab):
        ws = tuple((k, float(coef[k, j])) for k in range(len(classes)) if abs(coef[k, j]) >= PRUNE)
        if ws:
            weights[name] = ws
    bias = weights.get("bias", ())
    merged = {k: w + float(inter[k]) for k, w in bias} | {k: float(inter[k]) for k in range(len(classes))
                                                          if k not in dict(bias)}
    weights["bias"] = tuple(sorted(merged.items()))
    return LinearModel(classes, weights)


def temperature(probs: list[dict[str, float]], y: list[str]) -> float:
    best, best_nll = 1.0, float("inf")
    for t in np.linspace(0.4, 3.0, 53):
        nll = 0.0
        for p, label in zip(probs, y, strict=True):
            if label not in p:  # a class the fold's model never saw
                continue
            logp = {k: math.log(max(v, 1e-12)) / t for k, v in p.items()}
            top = max(logp.values())
            z = sum(math.exp(v - top) for v in logp.values())
            nll -= logp[label] - top - math.log(z)
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def _train(data: list[Example], parse: Callable[[str], ParsedMessage], drop: tuple[str, ...] = ()) -> FrameModel:
    """Stage 1 without the previous turn's frame, stage 2 with the one stage 1 reads for the earlier turn."""
    rows = featurize(data, parse, drop=drop)
    w = [e.weight for e in data]
    task1 = fit(rows, [e.task for e in data], w)
    asked1 = fit(rows, [e.asked for e in data], w)
    stage1 = FrameModel(task1, asked1)
    prev = [_prev_frame(stage1, e, parse) for e in data]
    rows = featurize(data, parse, prev, drop)
    return FrameModel(fit(rows, [e.task for e in data], w), fit(rows, [e.asked for e in data], w))


def _prev_frame(model: FrameModel, e: Example, parse: Callable[[str], ParsedMessage]) -> dict[str, str] | None:
    if not e.turns:
        return None
    x = message_features(e.turns[-1], e.turns[:-1], parse, None, FAMILIES)
    pt, pa = model.task.probabilities(x), model.asked.probabilities(x)
    return {"task": max(pt, key=lambda k: pt[k]), "asked": max(pa, key=lambda k: pa[k])}


def cross_validate(data: list[Example], parse: Callable[[str], ParsedMessage],
                   drop: tuple[str, ...] = ()) -> dict[str, Any]:
    groups = sorted({e.group for e in data})
    fold = {g: i % FOLDS for i, g in enumerate(groups)}
    out: dict[str, list[Any]] = {"task": [], "asked": [], "type": [], "pt": [], "pa": [], "seen": [], "labels": []}
    for f in range(FOLDS):
        train = [e for e in data if fold[e.group] != f]
        test = [e for e in data if fold[e.group] == f and not e.group.startswith("scenario:")]
        model = _train(train, parse, drop)
        reader = Reader(NAMES["models"], NAMES["gpus"], question_type, model,
                        CatalogNames(FAMILIES, NAMES["instances"], NAMES["spelled"]))
        for e in test:
            x = message_features(e.text, e.turns, parse, _prev_frame(model, e, parse), FAMILIES)
            x = {k: v for k, v in x.items() if not k.startswith(drop)} if drop else x
            pt, pa = model.task.probabilities(x), model.asked.probabilities(x)
            out["task"].append(max(pt, key=lambda k: pt[k]) == e.task)
            out["asked"].append(max(pa, key=lambda k: pa[k]) == e.asked)
            out["pt"].append(pt)
            out["pa"].append(pa)
            if e.type:  # the type of the message as the runtime reader reads it (the spine's decision)
                got = reader.read(e.text, e.turns).type
                out["type"].append(got == e.type or got in e.alt)
                out["seen"].append((e, got))
            out["labels"].append((e.task, e.asked))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when frame_model.json is stale")
    ap.add_argument("--ablate", action="store_true", help="measure what each feature family adds")
    ap.add_argument("--show", action="store_true", help="print the cross-validation misses")
    args = ap.parse_args()
    if args.check:
        stale = load_frame_model().trained_on != training_set_hash(examples())
        print("frame_model.json is stale: run python scripts/train_reader.py" if stale else "frame_model.json is current")
        return 1 if stale else 0
    parse = _parser()
    data = examples(parse)
    if args.ablate:
        for name, drop in (("without n-grams", ("g:",)), ("without cue families", ("c:",)),
                           ("without slots", ("s:",)), ("without the previous turn", ("p:",))):
            cv = cross_validate(data, parse, drop)
            print(f"{name:28s} type {np.mean(cv['type']):.3f} task {np.mean(cv['task']):.3f} "
                  f"asked {np.mean(cv['asked']):.3f}")
    cv = cross_validate(data, parse)
    print(f"working split, grouped {FOLDS}-fold CV on {len(cv['type'])} questions: type {np.mean(cv['type']):.3f}, "
          f"task {np.mean(cv['task']):.3f}, asked {np.mean(cv['asked']):.3f}")
    by_type: dict[str, list[bool]] = {}
    for (e, _got), ok in zip(cv["seen"], cv["type"], strict=True):
        by_type.setdefault(e.type, []).append(ok)
    for t, oks in sorted(by_type.items()):
        print(f"  {t:13s} {sum(oks)}/{len(oks)}")
    confusions = Counter((e.type, got) for (e, got), ok in zip(cv["seen"], cv["type"], strict=True) if not ok)
    print("  most confused (label -> read):", ", ".join(f"{a}->{b} {n}" for (a, b), n in confusions.most_common(8)))
    if args.show:
        for (e, got), ok in zip(cv["seen"], cv["type"], strict=True):
            if not ok:
                print(f"  MISS {e.id} {e.type} -> {got}: {' / '.join(e.turns)} >> {e.text[:150]!r}")
    t_task = temperature(cv["pt"], [task for task, _ in cv["labels"]])
    t_asked = temperature(cv["pa"], [asked for _, asked in cv["labels"]])
    model = _train(data, parse)
    final = FrameModel(LinearModel(model.task.classes, model.task.weights, t_task),
                       LinearModel(model.asked.classes, model.asked.weights, t_asked), training_set_hash(data))
    MODEL_FILE.write_text(final.to_json() + "\n", encoding="utf-8")
    n = sum(len(m.weights) for m in (final.task, final.asked))
    print(f"wrote {MODEL_FILE} ({len(data)} examples, {n} weighted features, temperatures {t_task:.2f} / {t_asked:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
