"""Name resolution (GPUs, models) with 'did you mean', sizes, and price selection."""

from __future__ import annotations

from datetime import date

import pytest

from service.catalog.queries import best_price, normalize, parse_param_count, resolve_gpu, resolve_model
from service.catalog.schema import PriceRow
from service.errors import UnknownGpuError, UnknownModelError


@pytest.mark.parametrize(
    ("name", "gpu_id", "ambiguous"),
    [
        ("A100-80GB", "A100-80G-SXM", True),  # capacity given, form factor not: the SXM4 board clouds sell
        ("a100 80g", "A100-80G-SXM", True),  # case, space, "g" for GB
        ("A100", "A100-40G-SXM", True),  # bare: Tencent GT4 / HCC sell the 40GB SXM4
        ("H800", "H800-SXM", True),  # bare: the SXM5 board
        ("4090", "RTX-4090", False),  # alias
        ("NVIDIA Tesla T4", "T4", False),  # vendor words dropped
        ("A100 40G PCIe", "A100-40G-PCIE", False),  # explicit form factor
        ("V100", "V100-32G-SXM2", True),  # Tencent GN10X / GN10Xp: V100 NVLink 32GB
        ("英伟达 H20", "H20", False),  # Chinese vendor name
    ],
)
def test_gpu_names(catalog, name: str, gpu_id: str, ambiguous: bool) -> None:
    g, note = resolve_gpu(name, catalog.gpus)
    assert g.id == gpu_id
    assert bool(note) is ambiguous
    if ambiguous:
        assert g.name in note  # the note names the form we took


def test_unknown_gpu_suggests(catalog) -> None:
    with pytest.raises(UnknownGpuError) as err:
        resolve_gpu("A1OO", catalog.gpus)
    assert err.value.suggestions
    assert any(s.startswith("A10") for s in err.value.suggestions)
    assert "catalog list" in str(err.value)


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("qwen2 7b", "Qwen2-7B"),  # case and space
        ("Llama3-70B", "Llama-3-70B"),  # dash dropped
        ("千问2-7B", "Qwen2-7B"),  # Chinese family name
        ("通义千问2.5-14B", "Qwen2.5-14B"),
        ("Qwen2-7B-Instruct", "Qwen2-7B"),  # instruct shares the base architecture
        ("qwen2.5-7b-instruct", "Qwen2.5-7B"),  # suffix fallback, not an alias
        ("meta-llama/Llama-2-7b-chat-hf", "Llama-2-7B"),  # HF repo id with -chat-hf
        ("deepseek-r1:7b", "DeepSeek-R1-Distill-Qwen-7B"),  # Ollama tag
    ],
)
def test_model_names(catalog, name: str, model_id: str) -> None:
    assert resolve_model(name, catalog.models).id == model_id


@pytest.mark.parametrize(("name", "expect"), [("Qwen2-7", "Qwen2-7B"), ("Lama-2-7B", "Llama-2-7B"), ("qwen", "Qwen")])
def test_unknown_model_suggests(catalog, name: str, expect: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        resolve_model(name, catalog.models)
    assert any(s.startswith(expect) for s in err.value.suggestions)
    assert "config.json" in err.value.fix  # says how to size an unlisted model


def test_normalize_is_unit_and_separator_insensitive() -> None:
    assert normalize("A100-80GB") == normalize("a100 80g") == normalize("A100 80 GB".replace(" GB", "GB"))


@pytest.mark.parametrize(("text", "billions"), [("7B", 7.0), ("0.5b", 0.5), ("350M", 0.35), ("Qwen2-7B", None)])
def test_parse_param_count(text: str, billions: float | None) -> None:
    assert parse_param_count(text) == billions


def _p(billing: str = "on_demand", **kw: object) -> PriceRow:
    fields: dict[str, object] = dict(instance_type="X.1", billing=billing, price_cny=1.0, unit="hour", source="s",
                                     as_of=date(2026, 1, 1), confidence="official")
    fields.update(kw)
    return PriceRow(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("container", [list, tuple])  # tuples go through the cached index
def test_best_price_order(container: type) -> None:
    rows = container([
        _p(price_cny=1, confidence="estimate"),
        _p(price_cny=2, confidence="third_party"),
        _p(price_cny=3, confidence="official", as_of=date(2025, 1, 1)),
        _p(price_cny=4, confidence="official", region="ap-beijing"),
        _p(price_cny=5, confidence="official", stale=True),
    ])
    # official beats third_party beats estimate; the default region beats a regional quote; stale rows lose.
    best = best_price("X.1", "on_demand", rows)
    assert best is not None and best.price_cny == 3
    newer = container([*rows, _p(price_cny=6, confidence="official", as_of=date(2026, 6, 1))])
    best = best_price("X.1", "on_demand", newer)
    assert best is not None and best.price_cny == 6  # newest among equals
    assert best_price("X.1", "monthly", rows) is None
