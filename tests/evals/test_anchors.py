"""evals/anchors.yaml: every published anchor evaluates, within its tolerance; the tolerance logic itself."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.evals import anchors as anchors_mod
from service.evals.anchors import (
    Anchor,
    Tolerance,
    anchor_summary,
    evaluate_anchor,
    evaluate_anchors,
    load_anchors,
)

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def results(catalog: Catalog) -> list[anchors_mod.AnchorResult]:
    return evaluate_anchors(load_anchors(), catalog)


def test_the_anchor_file_covers_the_published_sets(results: list[anchors_mod.AnchorResult]) -> None:
    kinds = {r.kind for r in results}
    assert kinds == {"verl_flops", "gpu_hours", "deepspeed_states", "llamafactory_band", "measured_memory",
                     "measured_throughput", "measured_oom"}
    assert len({r.id for r in results}) == len(results)
    assert {r.role for r in results if r.kind == "gpu_hours"} == {"calibration", "validation"}


def _runs() -> set[str]:
    """Anchors folded from the measured-runs collection (scripts/import_training_runs.py): reported with their
    errors in docs/validation.md, failures included, rather than gated one by one."""
    return {a.id for a in load_anchors() if "run" in a.inputs}


def test_every_anchor_within_its_tolerance(results: list[anchors_mod.AnchorResult]) -> None:
    runs = _runs()  # once: it parses the anchor file
    gated = [r for r in results if r.id not in runs]
    outside = [(r.id, r.engine, r.published, r.tolerance, r.error) for r in gated if r.ok is not True]
    assert outside == []
    assert anchor_summary(gated)["within_tolerance"] == len(gated)


def test_every_measured_run_is_sized_or_says_why(results: list[anchors_mod.AnchorResult]) -> None:
    ids = _runs()
    runs = [r for r in results if r.id in ids]
    assert {r.id for r in results if not r.gated} == ids  # reported, not gated
    assert len(runs) >= 100
    assert all(r.engine is not None or r.error for r in runs)
    # the rows the engine cannot size at all stay few (tensor / pipeline parallel memory, missing figures)
    assert sum(r.engine is None for r in runs) <= 0.1 * len(runs)


@pytest.mark.parametrize(
    ("tol", "engine", "published", "ok"),
    [
        (Tolerance(rel=0.02), 102.0, 100.0, True),
        (Tolerance(rel=0.02), 102.1, 100.0, False),
        (Tolerance(rel=0.01, abs=0.005), 0.123, 0.12, True),  # half a printed digit
        (Tolerance(band=(0.6, 1.4)), 59.0, 100.0, False),
        (Tolerance(band=(0.6, 1.4)), 140.0, 100.0, True),
    ],
)
def test_tolerance(tol: Tolerance, engine: float, published: float, ok: bool) -> None:
    assert tol.holds(engine, published) is ok


def test_a_tolerance_needs_exactly_one_rule() -> None:
    with pytest.raises(ValueError):
        Tolerance()
    with pytest.raises(ValueError):
        Tolerance(rel=0.1, band=(0.5, 2.0))


def test_a_wrong_published_figure_fails(catalog: Catalog) -> None:
    # verl's Llama-2-7B vector is 153.556 TFLOP; an anchor claiming 10 % more must not pass
    a = Anchor(id="x", kind="verl_flops", source="test", published=153.556 * 1.1, unit="TFLOP",
               tolerance=Tolerance(rel=0.02), inputs={"model": "Llama-2-7B", "seqlens": [512, 1024, 2048]})
    assert evaluate_anchor(a, catalog).ok is False


def test_a_missing_estimator_is_skipped_with_a_note(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    from service.sizing import memory

    monkeypatch.delattr(memory, "deepspeed_model_states_gib")
    a = next(x for x in load_anchors() if x.kind == "deepspeed_states")
    r = evaluate_anchor(a, catalog)
    assert r.ok is None
    assert "deepspeed_model_states_gib" in r.error
