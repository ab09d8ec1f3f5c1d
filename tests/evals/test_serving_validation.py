"""The serving validation table (the serving section of docs/validation.md, whose staleness
tests/evals/test_validation_report.py checks): it covers the measured rows, and the row mapping behaves (model
names, releases, the held-out split)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.evals.serving_matrix import Check
from service.evals.serving_rows import ServingRun, held_out, to_case, vllm_release

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(REPO / "knowledge")


def test_the_matrix_has_the_serving_section_with_every_kind_of_check() -> None:
    text = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    section = text.split("## Serving", 1)[1]
    for figure in ("weights", "KV", "start", "tok"):
        assert figure in section, figure


def _run(**fields: object) -> ServingRun:
    base: dict[str, object] = {"id": "r", "source": "https://example.org/a", "kind": "startup", "engine": "vllm",
                               "model": "Qwen/Qwen2-7B-Instruct", "gpu": "A100-80G", "measured": {}}
    return ServingRun.model_validate({**base, **fields})


@pytest.mark.parametrize(("fields", "release"), [
    ({"engine_version": "0.10.1.1"}, "0.10.1.1"),  # stated
    ({"note": "vLLM version not stated (log format of ~v0.6.4)."}, "0.6.4"),  # read from the log format
    ({"note": "Version not stated (Feb 2024)."}, "0.3.0"),  # the release current at the thread's date
    ({"note": "--host 0.0.0.0 (June 2024)"}, "0.5.0"),  # an IP address is not a release
    ({"note": "no date at all"}, None),  # unknown: the current release
])
def test_vllm_release_of_a_row(fields: dict[str, object], release: str | None) -> None:
    assert vllm_release(_run(**fields))[0] == release


@pytest.mark.parametrize(("model", "expected"), [
    ("Qwen/Qwen2-7B-Instruct", "Qwen2-7B"),  # instruct suffix -> base architecture
    ("Qwen/Qwen3-235B-A22B-FP8", "Qwen3-235B-A22B"),  # a quantised repo
    ("llama2-13b (as written; HF repo not stated)", "Llama-2-13B"),  # a benchmark page's own name
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
])
def test_row_models_map_to_architectures(catalog: Catalog, model: str, expected: str) -> None:
    c = to_case(_run(model=model), catalog)
    assert c.model is not None and c.model.id == expected and not c.skip


def test_unknown_model_or_gpu_is_kept_with_its_reason(catalog: Catalog) -> None:
    assert "no architecture" in to_case(_run(model="google/gemma-9-1T"), catalog).skip
    assert "not in the catalog" in to_case(_run(gpu="Intel-Arc-Pro-B60"), catalog).skip


def test_held_out_split_is_by_source_and_stable() -> None:
    # the split depends on the source alone: every row of a thread lands on the same side, run after run
    src = "https://github.com/vllm-project/vllm/issues/10517"
    assert held_out(src) == held_out(src)
    share = sum(held_out(f"https://example.org/{i}") for i in range(2000)) / 2000
    assert 0.25 < share < 0.35


@pytest.mark.parametrize(("metric", "measured", "estimate", "ok"), [
    ("weights_gib", 10.0, 10.4, True),  # +4 % within 5 %
    ("weights_gib", 10.0, 10.6, False),  # +6 %
    ("kv_tokens", 1000.0, 1099.0, True),  # within 10 %
    ("output_tok_s", 100.0, 74.0, False),  # -26 % outside 25 %
    ("starts", False, True, False),  # a wrong verdict
    ("tpot_ms", 10.0, 20.0, None),  # shown, not gated
])
def test_check_tolerances(metric: str, measured: float | bool, estimate: float | bool, ok: bool | None) -> None:
    assert Check("r", "s", False, "vllm", "A10", "", metric, measured, estimate).ok is ok


def test_the_matrix_groups_by_tensor_parallel_degree() -> None:
    from service.evals.serving_matrix import grouped, render_markdown

    checks = [Check("a", "s", False, "vllm", "A100-80G-SXM", "", "weights_gib", 10.0, 10.2, "TP1"),
              Check("b", "s", False, "vllm", "A100-80G-SXM", "", "weights_gib", 5.0, 6.0, "TP4"),
              Check("c", "s", True, "vllm", "H100-SXM", "", "weights_gib", 5.0, 5.0, "TP4")]
    by_tp = grouped(checks, "tp")
    assert by_tp[("fitted", "weights_gib", "TP4")].within == 0 and by_tp[("fitted", "weights_gib", "TP1")].within == 1
    assert by_tp[("held-out", "weights_gib", "TP4")].n == 1
    text = render_markdown(checks, [], "runs.yaml")
    assert "## By TP" in text and "| fitted | weights GiB/GPU (±5 %) | TP4 | 0/1 | 20.0 % | 20.0 % |" in text
