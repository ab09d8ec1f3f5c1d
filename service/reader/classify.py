"""The question-type classifier: multinomial logistic regression over the cue and slot features
(service/reader/cues.py), trained on the working split of evals/questions and on evals/scenarios.yaml by
scripts/train_reader.py, calibrated by a temperature fitted on held-out folds. Weights live in
service/reader/model.json (derived data: the script rewrites it; a test checks it matches its training set).

Pure Python at run time: a dot product per type and a softmax; no numpy needed to answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MODEL_FILE = Path(__file__).with_name("model.json")


@dataclass(frozen=True)
class TypeModel:
    types: tuple[str, ...]
    features: tuple[str, ...]
    weights: tuple[tuple[float, ...], ...]  # one row per type, one column per feature
    temperature: float = 1.0
    trained_on: str = ""  # sha256 of the training set, so a stale model shows

    def probabilities(self, x: Mapping[str, float]) -> dict[str, float]:
        vec = [x.get(f, 0.0) for f in self.features]
        logits = [sum(w * v for w, v in zip(row, vec, strict=True)) / self.temperature for row in self.weights]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return {t: e / total for t, e in zip(self.types, exps, strict=True)}

    def to_json(self) -> str:
        return json.dumps({"types": self.types, "features": self.features, "temperature": self.temperature,
                           "trained_on": self.trained_on,
                           "weights": [[round(w, 5) for w in row] for row in self.weights]}, indent=1)


def load_model(path: Path = MODEL_FILE) -> TypeModel:
    data = json.loads(path.read_text(encoding="utf-8"))
    return TypeModel(types=tuple(data["types"]), features=tuple(data["features"]),
                     weights=tuple(tuple(float(w) for w in row) for row in data["weights"]),
                     temperature=float(data.get("temperature", 1.0)), trained_on=str(data.get("trained_on", "")))


@lru_cache(maxsize=1)
def default_model() -> TypeModel:
    """The shipped model, read once on first use (never at import)."""
    return load_model()
