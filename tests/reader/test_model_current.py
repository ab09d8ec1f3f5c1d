"""The shipped classifier (service/reader/model.json) was trained on today's training set: a question added to the
working split, or a scenario changed, without rerunning scripts/train_reader.py fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from service.reader.classify import load_model
from service.reader.cues import FEATURES, TYPES
from service.reader.examples import training_set_hash

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_reader.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("train_reader", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_json_matches_its_training_set_and_features() -> None:
    model = load_model()
    assert model.trained_on == training_set_hash(_script().examples()), "run python scripts/train_reader.py"
    assert model.features == FEATURES and model.types == TYPES


def test_the_test_split_is_never_a_training_example() -> None:
    ids = {e.id for e in _script().examples() if e.id}
    from service.evals.questions.dataset import load_split

    assert ids and not ids & {q.id for q in load_split("test")}
