"""The reader's learned parts: what a post's task is (train | serve | both | none) and what it asks, read from the
text itself rather than from a regex per phrasing.

Features, all numbers in [0, 1]:
- character n-grams (2 to 4) of the message as the finders marked it: a model name reads as "Ⓜ", a GPU name as
  "Ⓖ", every digit as "0" (so "4090能跑qwen2.5-14b lora吗" and "3090能跑llama-13b lora吗" read alike), each
  n-gram weighted 1/sqrt(count of the message's n-grams);
- the finders' slots (what the words state: an observation, a serving load, a method, data, a budget...);
- the previous turn's task and asked (a follow-up without its own words keeps them).

Each part is a multinomial logistic regression trained by scripts/train_reader.py on the working split of
evals/questions (the frozen test split is never read), calibrated by a temperature fitted on held-out folds, and
stored sparse in service/reader/frame_model.json (one feature a line, so a retrain can be reviewed). Pure Python at
run time: a sparse dot product and a softmax.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from service.reader.constraints import GPU_MARK

MODEL_FILE = Path(__file__).with_name("frame_model.json")
NGRAMS = (2, 3, 4)
_DIGITS = re.compile(r"\d")
_SPACE = re.compile(r"\s+")
_MODEL_RUN = re.compile(r"\x00+")
_GPU_RUN = re.compile(GPU_MARK + "+")


def marked_text(text: str) -> str:
    """The message as the n-grams read it: names as placeholders, digits as 0, lower case, one space."""
    text = _MODEL_RUN.sub("Ⓜ", text)
    text = _GPU_RUN.sub("Ⓖ", text)
    text = unicodedata.normalize("NFKC", text).lower()
    return _SPACE.sub(" ", _DIGITS.sub("0", text)).strip()


def ngram_features(marked: str) -> dict[str, float]:
    """Character n-grams of the marked text (with a space at each end), each weighted so a long post and a short
    one weigh alike."""
    s = f" {marked} "
    grams: set[str] = set()
    for n in NGRAMS:
        grams.update(s[i:i + n] for i in range(len(s) - n + 1))
    grams.discard(" " * 2)
    if not grams:
        return {}
    w = 1.0 / math.sqrt(len(grams))
    return {f"g:{g}": w for g in grams}


def slot_features(slots: Mapping[str, Any], named: Mapping[str, int]) -> dict[str, float]:
    """What the finders found, as features: never a phrasing, only what was stated."""
    obs = slots.get("observed") or {}
    kind = obs.get("kind") if isinstance(obs, Mapping) else None
    f = {
        "model": "model" in slots or "params_b" in slots, "gpu": "gpu" in slots,
        "gpu_count_multi": (slots.get("gpu_count") or 1) > 1, "gpu_memory_gb": "gpu_memory_gb" in slots,
        "method": "method" in slots, "data": any(k in slots for k in ("samples", "tokens", "dataset_gb")),
        "budget": "budget_cny" in slots, "deadline": "deadline_hours" in slots,
        "seq_len": "seq_len" in slots or "max_model_len" in slots,
        "serving_load": any(k in slots for k in ("concurrency", "request_rate", "input_tokens", "output_tokens",
                                                  "ttft_ms", "tpot_ms")),
        "engine": "engine" in slots, "weights": "weights" in slots, "kv_dtype": "kv_dtype" in slots,
        "stage": "stage" in slots, "fact": "fact" in slots, "cloud": "clouds" in slots,
        "target": "target" in slots, "epochs": "epochs" in slots,
        "two_gpus": named.get("gpus", 0) >= 2, "two_clouds": named.get("clouds", 0) >= 2,
        "two_methods": named.get("methods", 0) >= 2,
    }
    out = {f"s:{k}": float(v) for k, v in f.items() if v}
    if kind is not None:
        out[f"s:observed_{kind}"] = 1.0
        out["s:observed"] = 1.0
    return out


def features(marked: str, slots: Mapping[str, Any], named: Mapping[str, int],
             prev: Mapping[str, str] | None = None) -> dict[str, float]:
    """Every feature of one message; `prev` the previous turn's {"task": ..., "asked": ...} when there is one."""
    out = ngram_features(marked)
    out.update(slot_features(slots, named))
    if prev:
        out.update({f"p:{k}={v}": 1.0 for k, v in prev.items()})
        out["p:any"] = 1.0
    out["bias"] = 1.0
    return out


@dataclass(frozen=True)
class LinearModel:
    """One learned part: classes, a sparse weight per (feature, class), a temperature."""

    classes: tuple[str, ...]
    weights: Mapping[str, tuple[tuple[int, float], ...]]  # feature -> ((class index, weight), ...)
    temperature: float = 1.0

    def probabilities(self, x: Mapping[str, float]) -> dict[str, float]:
        logits = [0.0] * len(self.classes)
        for name, value in x.items():
            for k, w in self.weights.get(name, ()):
                logits[k] += w * value
        top = max(logits)
        exps = [math.exp((v - top) / self.temperature) for v in logits]
        total = sum(exps)
        return {c: e / total for c, e in zip(self.classes, exps, strict=True)}

    def to_dict(self) -> dict[str, Any]:
        return {"classes": list(self.classes), "temperature": round(self.temperature, 4),
                "weights": {f: [[k, round(w, 4)] for k, w in ws] for f, ws in sorted(self.weights.items())}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinearModel:
        return cls(tuple(data["classes"]),
                   {f: tuple((int(k), float(w)) for k, w in ws) for f, ws in data["weights"].items()},
                   float(data.get("temperature", 1.0)))


@dataclass(frozen=True)
class FrameModel:
    """The reader's learned parts, the training set they were fitted on and the features they were fitted with
    (sha256 each, so a stale model shows: scripts/train_reader.py --check)."""

    task: LinearModel
    asked: LinearModel
    trained_on: str = ""
    features_on: str = ""

    def to_json(self) -> str:
        """Reviewable: keys sorted, one feature a line (`"g:能跑": [[0,0.1234],[3,-0.5]]`, class index and weight
        rounded to 4 places), so a retrain's diff shows which features moved."""
        parts = {"asked": self.asked.to_dict(), "features_on": self.features_on, "task": self.task.to_dict(),
                 "trained_on": self.trained_on}
        lines = ["{"]
        for i, (key, value) in enumerate(parts.items()):
            comma = "," if i < len(parts) - 1 else ""
            if not isinstance(value, dict):
                lines.append(f"  {_j(key)}: {_j(value)}{comma}")
                continue
            weights = value["weights"]
            lines += [f"  {_j(key)}: {{", f'    "classes": {_j(value["classes"])},',
                      f'    "temperature": {_j(value["temperature"])},', '    "weights": {']
            lines += [f"      {_j(f)}: {json.dumps(ws, separators=(',', ':'))}" + ("," if n < len(weights) - 1 else "")
                      for n, (f, ws) in enumerate(weights.items())]
            lines += ["    }", f"  }}{comma}"]
        return "\n".join([*lines, "}"])


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def load_frame_model(path: Path = MODEL_FILE) -> FrameModel:
    data = json.loads(path.read_text(encoding="utf-8"))
    return FrameModel(LinearModel.from_dict(data["task"]), LinearModel.from_dict(data["asked"]),
                      str(data.get("trained_on", "")), str(data.get("features_on", "")))


@lru_cache(maxsize=1)
def default_frame_model() -> FrameModel:
    """The shipped model, read once on first use (never at import)."""
    return load_frame_model()
