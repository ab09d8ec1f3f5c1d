"""Generic architectures for a stated size: scaled to that size (never another model's size), MoE when the name
states an active size, and one 'estimated' label on every surface that resolves a model."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.planner.generic import SCALE_TOLERANCE, generic_decoder, is_estimated
from service.planner.lenient import catalog_for
from service.planner.resolve import resolve_job, resolve_named
from service.planner.serving_size import resolve_serving_model
from service.serving_workload import ServingWorkload
from service.sizing.params import count_params
from service.workload import Workload


@pytest.mark.parametrize(("size", "rel"), [
    (0.05, 0.10),  # below every catalog decoder: scaled down
    (9.0, SCALE_TOLERANCE),  # a catalog decoder within 10 %: its dimensions as they are
    (70.0, SCALE_TOLERANCE),
    (5000.0, 0.01),  # past the largest dense row (405B): scaled up, no longer clamped to 405B (the bug)
])
def test_generic_decoder_counts_the_stated_size(catalog: Catalog, size: float, rel: float) -> None:
    spec = generic_decoder(size, catalog.models)
    assert count_params(spec).total == pytest.approx(size * 1e9, rel=rel)
    assert spec.params_published_b == size and spec.moe is None


def test_scaled_dims_stay_a_plausible_transformer(catalog: Catalog) -> None:
    spec = generic_decoder(5000.0, catalog.models)
    assert spec.hidden_size and spec.num_heads and spec.num_kv_heads
    assert spec.hidden_size % spec.num_heads == 0 and spec.num_heads % spec.num_kv_heads == 0
    assert spec.hidden_size > 16384 and "scaled to 5000B" in spec.source


def test_a_stated_active_size_is_an_moe(catalog: Catalog) -> None:
    spec, _ = resolve_named("Foo-100B-A10B", catalog.models)
    c = count_params(spec)
    assert spec.moe is not None and spec.id == "Foo-100B-A10B"
    assert c.total == pytest.approx(100e9, rel=SCALE_TOLERANCE)
    assert c.active < 0.3 * c.total  # an MoE's few active experts, not a dense 100B


def test_every_surface_gives_the_same_estimated_label(catalog: Catalog) -> None:
    name = "acme-llm-9b"
    job = resolve_job(Workload(model=name), catalog.models)  # CLI estimate / plan, the API's plan route
    serving, serving_notes = resolve_serving_model(ServingWorkload(model=name), catalog.models)  # inference routes
    chat_cat, chat_notes = catalog_for(catalog, Workload(model=name))  # the chat and the MCP size tools
    label = job.assumptions[0]
    assert label.startswith(f"'{name}' is not in the catalog: estimated") and "9B" in label
    assert serving_notes[0][0] == label and chat_notes[0][0] == label
    assert job.assumptions_zh[0] == serving_notes[0][1] == chat_notes[0][1] and "估算" in job.assumptions_zh[0]
    assert is_estimated(job.model) and is_estimated(serving)
    assert resolve_job(Workload(model=name), chat_cat.models).model.params_published_b == 9.0


def test_a_catalog_model_is_not_estimated(catalog: Catalog) -> None:
    spec, notes = resolve_named("Qwen2.5-7B-Instruct", catalog.models)
    assert spec.id == "Qwen2.5-7B" and notes == [] and not is_estimated(spec)


@pytest.mark.parametrize("size", [7.0, 13.0, 70.0])
def test_a_generic_size_borrows_a_mainstream_layout_within_ten_percent(catalog: Catalog, size: float) -> None:
    from service.planner.generic import MAINSTREAM

    spec = generic_decoder(size, catalog.models)
    base = next(m for m in catalog.models if spec.name.endswith(f"(≈ {m.name})"))
    assert base.family in MAINSTREAM and abs(base.params_published_b / size - 1) < 0.1
