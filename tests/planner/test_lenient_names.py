"""The chat sizes a model outside models.yaml from its name and says so; the engine's API stays strict."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.errors import UnknownModelError
from service.planner.lenient import catalog_for, with_assumptions
from service.planner.resolve import resolve_job
from service.workload import Workload


def test_an_unknown_name_is_sized_and_said(catalog: Catalog) -> None:
    cat, said = catalog_for(catalog, Workload(model="acme-llm-8b"))
    job = resolve_job(Workload(model="acme-llm-8b"), cat.models)
    assert job.model.params_published_b == 8.0 and job.model.kind == "decoder"
    assert "acme-llm-8b" in said[0][0] and "acme-llm-8b" in said[0][1]
    art = with_assumptions({"assumptions": ["x"], "assumptions_zh": ["y"]}, said)
    assert art["assumptions"] == [said[0][0], "x"] and art["assumptions_zh"] == [said[0][1], "y"]


def test_vision_and_encoder_hints(catalog: Catalog) -> None:
    _, said = catalog_for(catalog, Workload(model="Acme-11B-Vision"))  # Llama-3.2-11B-Vision is in the catalog now
    assert "vision tower" in said[0][0]
    cat, _ = catalog_for(catalog, Workload(model="bge-small-en"))
    assert resolve_job(Workload(model="bge-small-en"), cat.models).model.kind == "encoder"


def test_a_typo_of_a_known_family_keeps_the_suggestion(catalog: Catalog) -> None:
    _, said = catalog_for(catalog, Workload(model="Qwen5-7B"))
    assert "Did you mean" in said[0][0]


def test_known_and_nameless_models_pass_through(catalog: Catalog) -> None:
    assert catalog_for(catalog, Workload(model="Qwen2-7B")) == (catalog, [])
    assert catalog_for(catalog, Workload(params_b=7)) == (catalog, [])
    with pytest.raises(UnknownModelError):
        catalog_for(catalog, Workload(model="awesome-llm"))
