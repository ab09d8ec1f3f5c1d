"""The evals' type list is the question spine's: a new type needs no eval edit, an unknown one is refused."""

import pytest
from pydantic import ValidationError

from service.evals.questions.dataset import TYPES, Question, load_split
from service.questions.registry import MODULES


def test_the_eval_types_are_the_registry_modules() -> None:
    assert tuple(m.name for m in MODULES) == TYPES


def test_a_label_with_a_type_the_spine_lacks_is_refused() -> None:
    base = {"id": "x", "source": "written", "kind": "chat", "lang": "zh", "text": "A800多少钱"}
    assert Question(**base, type="catalog").type == "catalog"
    with pytest.raises(ValidationError, match="unknown question type 'pricing'"):
        Question(**base, type="pricing")


def test_every_working_question_has_a_spine_type() -> None:
    types = {q.type for q in load_split("working")}
    assert types <= set(TYPES) and {"catalog", "serving", "diagnose"} <= types
