"""The shipped frame model (service/reader/frame_model.json) was trained on today's training set: a question added
to the working split, or a scenario changed, without rerunning scripts/train_reader.py fails here; and the frozen
test split is never a training example."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from service.reader.learned import load_frame_model

pytestmark = [pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_reader.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("train_reader", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_frame_model_matches_its_training_set() -> None:
    script = _script()
    model = load_frame_model()
    assert model.trained_on == script.training_set_hash(script.examples()), "run python scripts/train_reader.py"
    assert set(model.task.classes) == {"train", "serve", "both", "none"}
    assert {"fits", "count", "cause", "howto", "other"} <= set(model.asked.classes)


def test_the_test_split_is_never_a_training_example() -> None:
    ids = {e.id for e in _script().examples() if e.id}
    from service.evals.questions.dataset import load_split

    assert ids and not ids & {q.id for q in load_split("test")}
