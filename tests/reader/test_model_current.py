"""The shipped frame model (service/reader/frame_model.json) was fitted on today's training set with today's
features: a question added to the working split, a scenario changed, or a change to what the reader computes
from a message (n-grams, slots, cue families, the catalog's names) without rerunning scripts/train_reader.py
fails here, in `make unit` (about 3 s). The file is stored in its reviewable form, and the frozen test split is
never a training example."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from service.reader.learned import MODEL_FILE, FrameModel, LinearModel, load_frame_model

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_reader.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_reader", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def training(script: ModuleType) -> tuple[Any, list[Any]]:
    """The parser (the catalog's names) and today's training examples, read once."""
    parse = script._parser()
    return parse, script.examples(parse)


def test_frame_model_matches_its_training_set_and_features(script: ModuleType,
                                                           training: tuple[Any, list[Any]]) -> None:
    model, (parse, data) = load_frame_model(), training
    why = [what for what, ok in (("the training set", model.trained_on == script.training_set_hash(data)),
                                 ("the features", model.features_on == script.features_hash(data, parse))) if not ok]
    assert not why, f"frame_model.json was fitted on another {' and '.join(why)}: run python scripts/train_reader.py"
    assert set(model.task.classes) == {"train", "serve", "both", "none"}
    assert {"fits", "count", "cause", "howto", "other"} <= set(model.asked.classes)


def test_a_change_to_the_features_or_the_labels_shows_as_stale(script: ModuleType,
                                                                 training: tuple[Any, list[Any]]) -> None:
    model, (parse, data) = load_frame_model(), training
    i = next(i for i, e in enumerate(data) if e.framed)  # a labelled frame: its asked is part of the hash
    relabelled = [*data[:i], replace(data[i], asked="other" if data[i].asked != "other" else "fits"), *data[i + 1:]]
    assert script.training_set_hash(relabelled) != model.trained_on
    probe = data[0]  # the first message is in the features' probe: one feature more changes the hash
    original = script.message_features

    def more(text: str, *args: object) -> dict[str, float]:
        x: dict[str, float] = original(text, *args)
        return {**x, "g:new": 1.0} if text == probe.text else x

    script.message_features = more
    try:
        assert script.features_hash(data, parse) != model.features_on
    finally:
        script.message_features = original


def test_the_model_file_is_reviewable() -> None:
    # what scripts/train_reader.py writes, byte for byte: one feature a line, keys sorted, weights rounded
    text = MODEL_FILE.read_text(encoding="utf-8")
    model = load_frame_model()
    assert text == model.to_json() + "\n"
    lines = text.splitlines()
    assert len(lines) > sum(len(m.weights) for m in (model.task, model.asked)) and max(map(len, lines)) < 400
    small = FrameModel(LinearModel(("a", "b"), {"g:能跑": ((0, 0.123456),), "bias": ((1, -1.0),)}, 1.5),
                       LinearModel(("x",), {"bias": ((0, 0.5),)}), "t", "f")
    assert small.to_json().splitlines() == [
        "{", '  "asked": {', '    "classes": ["x"],', '    "temperature": 1.0,', '    "weights": {',
        '      "bias": [[0,0.5]]', "    }", "  },", '  "features_on": "f",', '  "task": {', '    "classes": ["a", "b"],',
        '    "temperature": 1.5,', '    "weights": {', '      "bias": [[1,-1.0]],', '      "g:能跑": [[0,0.1235]]', "    }",
        "  },", '  "trained_on": "t"', "}"]


def test_the_test_split_is_never_a_training_example(training: tuple[Any, list[Any]]) -> None:
    ids = {e.id for e in training[1] if e.id}
    from service.evals.questions.dataset import load_split

    assert ids and not ids & {q.id for q in load_split("test")}
