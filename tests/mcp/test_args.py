"""The MCP tools take the arguments the rest of the service takes: the assistant's tools (less the follow-up
bookkeeping fields `question` and `also`) and the API's POST /v1/estimate and POST /v1/inference. A field added there and not here fails this test."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from service.api.routes.serving import InferenceIn
from service.api.schemas import EstimateIn
from service.assistant.intents import compare_types, fit_types
from service.assistant.tools import SearchArgs
from service.mcp import args

# (MCP model, the model it mirrors)
PAIRS: list[tuple[type[BaseModel], type[BaseModel]]] = [
    (args.FeasibilityArgs, fit_types.FeasibilityArgs),
    (args.MinGpusArgs, fit_types.MinGpusArgs),
    (args.CompareArgs, compare_types.CompareArgs),
    (args.SavingsArgs, compare_types.SavingsArgs),
    (args.EstimateArgs, EstimateIn),
    (args.KnowledgeArgs, SearchArgs),
    (args.InferenceArgs, InferenceIn),  # POST /v1/inference
]


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_same_fields(ours: type[BaseModel], theirs: type[BaseModel]) -> None:
    assert set(ours.model_fields) == set(theirs.model_fields) - {"question", "also"}
    for name, field in ours.model_fields.items():
        assert field.annotation == theirs.model_fields[name].annotation, name
        assert field.default == theirs.model_fields[name].default, name


def test_capacity_without_a_model_sizes_each_catalog_model() -> None:
    w = args.CapacityArgs(gpu="4090").workload()
    assert w.method == "lora" and w.model is None and w.params_b == 1.0  # a placeholder the search replaces
    assert args.CapacityArgs(gpu="4090", method="qlora", model="Qwen2-7B").workload().model == "Qwen2-7B"
